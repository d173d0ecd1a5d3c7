import XCTest
@testable import KioskCore

final class RetentionPolicyTests: XCTestCase {
    private func date(_ name: String, file: StaticString = #filePath, line: UInt = #line) throws -> CalendarDate {
        try XCTUnwrap(CalendarDate(folderName: name), "bad test date \(name)", file: file, line: line)
    }

    private func folder(_ name: String, _ kind: MediaKind = .video) -> LibraryEntry {
        LibraryEntry(kind: kind, name: name, type: .directory)
    }

    private func deleted(_ plan: RetentionPlan) -> [String] { plan.deletions.map(\.relativePath) }

    // MARK: CalendarDate

    func testFolderNamesThatAreDates() throws {
        let d = try date("20260131")
        XCTAssertEqual([d.year, d.month, d.day], [2026, 1, 31])
        XCTAssertEqual(d.folderName, "20260131")
        XCTAssertEqual(d.description, "2026-01-31")
        XCTAssertNotNil(CalendarDate(folderName: "20280229"), "2028 is a leap year")
        XCTAssertNotNil(CalendarDate(folderName: "20000229"), "2000 is a leap year (divisible by 400)")
        XCTAssertEqual(CalendarDate(folderName: Substring("19700101"))?.daysSince1970, 0)
    }

    func testFolderNamesThatAreNotDates() {
        for name in ["2026-01-01", "20261332", "20261301", "20260132", "20260230", "20270229", "21000229", "20260100",
                     "notes", "202601011", "2026011", "", "２０２６０１０１", "2026010a", "+2026010", " 20260101", "20260101 "] {
            XCTAssertNil(CalendarDate(folderName: name), "\(name) is not a date folder name")
        }
    }

    func testDayArithmeticAcrossMonthYearAndLeapDay() throws {
        XCTAssertEqual(try date("20260131").adding(days: 30), try date("20260302"))
        XCTAssertEqual(try date("20261215").adding(days: 30), try date("20270114"))
        XCTAssertEqual(try date("20280229").adding(days: 30), try date("20280330"))
        XCTAssertEqual(try date("20280228").adding(days: 1), try date("20280229"))
        XCTAssertEqual(try date("20270228").adding(days: 1), try date("20270301"))
        XCTAssertEqual(try date("20260301").adding(days: -1), try date("20260228"))
        XCTAssertEqual(try date("20260101").days(since: try date("20251231")), 1)
        XCTAssertEqual(try date("20260101").daysSince1970, 20_454)
        XCTAssertEqual(CalendarDate(daysSince1970: -1), try date("19691231"))
        // Every day of 1999…2030 survives the round trip through day numbers.
        var day = try date("19990101")
        for _ in 0..<(32 * 366) {
            let next = day.adding(days: 1)
            XCTAssertEqual(CalendarDate(daysSince1970: day.daysSince1970), day)
            XCTAssertEqual(CalendarDate(folderName: day.folderName), day)
            XCTAssertLessThan(day, next)
            day = next
        }
    }

    func testDateOfALocalTimestamp() throws {
        let time = LocalTimestamp(year: 2026, month: 3, day: 29, hour: 2, minute: 30)  // a DST change in Europe
        XCTAssertEqual(CalendarDate(time), try date("20260329"))
        XCTAssertEqual(CalendarDate(time).folderName, time.dateStamp)
        // Out-of-range fields roll over like a calendar instead of trapping.
        XCTAssertEqual(CalendarDate(LocalTimestamp(year: 2026, month: 13, day: 1)), try date("20270101"))
        XCTAssertEqual(CalendarDate(LocalTimestamp(year: 2026, month: 1, day: 32)), try date("20260201"))
        XCTAssertEqual(CalendarDate(LocalTimestamp(year: 2026, month: 0, day: 0)), try date("20251130"))
    }

    // MARK: Age

    func testBoundaryTwentyNineThirtyThirtyOneDaysOld() throws {
        let today = try date("20260315")
        let entries = [29, 30, 31].map { folder(today.adding(days: -$0).folderName) }
        let plan = RetentionPolicy(retentionDays: 30).decide(today: today, entries: entries, protected: [])
        XCTAssertEqual(plan.deletions, [
            .init(kind: .video, date: try date("20260212"), reason: .age(days: 31)),
            .init(kind: .video, date: try date("20260213"), reason: .age(days: 30)),
        ], "30 days old goes, 29 stays")
        XCTAssertEqual(plan.reported, [])
        XCTAssertEqual(RetentionPolicy().retentionDays, 30, "the default")
    }

    func testMonthEnd() throws {
        let policy = RetentionPolicy(retentionDays: 30)
        let entries = [folder("20260131")]
        XCTAssertEqual(deleted(policy.decide(today: try date("20260301"), entries: entries)), [], "29 days later")
        XCTAssertEqual(deleted(policy.decide(today: try date("20260302"), entries: entries)), ["video/20260131"])
    }

    func testYearEnd() throws {
        let policy = RetentionPolicy(retentionDays: 30)
        let entries = [folder("20251215", .photo), folder("20251216", .audio)]
        let plan = policy.decide(today: try date("20260114"), entries: entries)
        XCTAssertEqual(plan.deletions, [.init(kind: .photo, date: try date("20251215"), reason: .age(days: 30))])
    }

    func testLeapDayFolder() throws {
        let policy = RetentionPolicy(retentionDays: 30)
        let entries = [folder("20280229")]
        XCTAssertEqual(deleted(policy.decide(today: try date("20280329"), entries: entries)), [])
        XCTAssertEqual(deleted(policy.decide(today: try date("20280330"), entries: entries)), ["video/20280229"])
        // 366 days: a leap year counted in calendar days.
        let yearly = RetentionPolicy(retentionDays: 366)
        XCTAssertEqual(deleted(yearly.decide(today: try date("20290228"), entries: entries)), [])
        XCTAssertEqual(deleted(yearly.decide(today: try date("20290301"), entries: entries)), ["video/20280229"])
    }

    func testDaylightSavingDaysCountAsWholeDays() throws {
        // 2026-03-29 has 23 hours in Europe and 2026-10-25 has 25: dates, not seconds.
        let policy = RetentionPolicy(retentionDays: 1)
        XCTAssertEqual(deleted(policy.decide(today: try date("20260330"), entries: [folder("20260329")])), ["video/20260329"])
        XCTAssertEqual(deleted(policy.decide(today: try date("20261026"), entries: [folder("20261025")])), ["video/20261025"])
    }

    func testRetentionIsConfigurable() throws {
        let today = try date("20260315")
        let entries = [folder("20260313"), folder("20260314"), folder("20260315")]
        XCTAssertEqual(deleted(RetentionPolicy(retentionDays: 1).decide(today: today, entries: entries)),
                       ["video/20260313", "video/20260314"], "N=1 deletes yesterday, never today")
        XCTAssertEqual(deleted(RetentionPolicy(retentionDays: 2).decide(today: today, entries: entries)), ["video/20260313"])
        XCTAssertEqual(deleted(RetentionPolicy(retentionDays: 0).decide(today: today, entries: entries)), [],
                       "a nonsensical period switches age-based deletion off rather than deleting more")
        XCTAssertEqual(deleted(RetentionPolicy(retentionDays: -5).decide(today: today, entries: entries)), [])
    }

    func testEventClipsKeepTheirOwnRetention() throws {
        let today = try date("20260315")
        let entries = [folder("20260301"), folder("20260305"), folder("20260310"), folder("20260314")]
        func shares(_ policy: RetentionPolicy) -> [String] {
            policy.decide(today: today, entries: entries).deletions.map { "\($0.date.folderName) \($0.share.rawValue)" }
        }
        XCTAssertEqual(shares(RetentionPolicy(retentionDays: 7)), ["20260301 all", "20260305 all"],
                       "without event_retention_days, clips go with their day")
        XCTAssertEqual(shares(RetentionPolicy(retentionDays: 7, eventRetentionDays: 7)), ["20260301 all", "20260305 all"])
        XCTAssertEqual(shares(RetentionPolicy(retentionDays: 7, eventRetentionDays: 12)),
                       ["20260301 all", "20260305 continuous"], "footage at 7 days, clips at 12")
        XCTAssertEqual(shares(RetentionPolicy(retentionDays: 12, eventRetentionDays: 3)),
                       ["20260301 all", "20260305 events", "20260310 events"], "clips kept shorter than footage")
        XCTAssertEqual(shares(RetentionPolicy(retentionDays: 3, eventRetentionDays: 0)),
                       ["20260301 continuous", "20260305 continuous", "20260310 continuous"],
                       "event_retention_days below 1 keeps clips from age-based deletion")
        XCTAssertEqual(RetentionPolicy(retentionDays: 7, eventRetentionDays: 12).decide(today: today, entries: entries)
                        .deletions.map(\.reason), [.age(days: 14), .age(days: 10)])
    }

    // MARK: Never deleted

    func testTodayAndProtectedDatesAreKept() throws {
        let today = try date("20260315")
        let inProgress = try date("20260101")
        let entries = [folder("20260315"), folder("20260101"), folder("20260101", .audio), folder("20260102")]
        let plan = RetentionPolicy(retentionDays: 1).decide(today: today, entries: entries, protected: [inProgress, today])
        XCTAssertEqual(deleted(plan), ["video/20260102"])
        XCTAssertEqual(plan.reported, [])
    }

    func testFutureDatesAreReportedNotDeleted() throws {
        let today = try date("20260315")
        let plan = RetentionPolicy(retentionDays: 1).decide(today: today, entries: [folder("20260316"), folder("20991231", .photo)])
        XCTAssertEqual(plan.deletions, [])
        XCTAssertEqual(plan.reported, [.init(kind: .video, name: "20260316", why: .inTheFuture),
                                       .init(kind: .photo, name: "20991231", why: .inTheFuture)])
        XCTAssertEqual(plan.reported[0].why.description, "in the future — clock wrong?")
    }

    func testJunkNamesAreReportedNotDeleted() throws {
        let names = ["2026-01-01", "20261332", "notes", "202601011", ".hidden"]
        let plan = RetentionPolicy(retentionDays: 1).decide(today: try date("20260315"), entries: names.map { folder($0) })
        XCTAssertEqual(plan.deletions, [])
        XCTAssertEqual(plan.reported.map(\.name), names)
        XCTAssertEqual(Set(plan.reported.map(\.why)), [.notADate])
        XCTAssertEqual(plan.reported[0].why.description, "not a date")
        XCTAssertEqual(plan.reported[2].relativePath, "video/notes")
    }

    func testSymlinksFilesAndSpecialFilesAreReportedNotDeleted() throws {
        let entries = [
            LibraryEntry(kind: .video, name: "20260101", type: .symlink),  // an old date, but a symlink
            LibraryEntry(kind: .photo, name: "20260102", type: .file),     // an old date, but a file
            LibraryEntry(kind: .audio, name: "readme.txt", type: .file),
            LibraryEntry(kind: .video, name: "fifo", type: .other),
        ]
        let plan = RetentionPolicy(retentionDays: 1).decide(today: try date("20260315"), entries: entries)
        XCTAssertEqual(plan.deletions, [])
        XCTAssertEqual(plan.reported, [
            .init(kind: .video, name: "20260101", why: .symlink),
            .init(kind: .photo, name: "20260102", why: .fileAtWrongLevel),
            .init(kind: .audio, name: "readme.txt", why: .fileAtWrongLevel),
            .init(kind: .video, name: "fifo", why: .specialFile),
        ])
        XCTAssertEqual(plan.reported[0].why.description, "a symlink, not followed")
        XCTAssertEqual(plan.reported[1].why.description, "a file at the wrong level")
    }

    func testDeletionsAreOldestFirstAcrossKinds() throws {
        let entries = [folder("20260105", .audio), folder("20260103", .photo), folder("20260105", .video), folder("20260101", .audio)]
        let plan = RetentionPolicy(retentionDays: 30).decide(today: try date("20260315"), entries: entries)
        XCTAssertEqual(deleted(plan), ["audio/20260101", "photo/20260103", "video/20260105", "audio/20260105"])
        XCTAssertEqual(plan.deletions.last?.reason, .age(days: 69))
        XCTAssertEqual(plan.deletions.last?.reason.description, "69 days old")
    }
}
