import Foundation
import XCTest
@testable import KioskCore

final class LibraryLayoutTests: XCTestCase {
    private let layout = LibraryLayout(root: "/media")
    private let time = LocalTimestamp(year: 2026, month: 3, day: 7, hour: 9, minute: 5, second: 4)

    private func utc(_ iso: String, file: StaticString = #filePath, line: UInt = #line) throws -> Date {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        return try XCTUnwrap(formatter.date(from: iso), "bad test date \(iso)", file: file, line: line)
    }

    // MARK: Final paths

    func testFinalPathForEachKind() {
        XCTAssertEqual(layout.finalPath(.video, time), "/media/video/20260307/090504.mp4")
        XCTAssertEqual(layout.finalPath(.photo, time), "/media/photo/20260307/090504.jpg")
        XCTAssertEqual(layout.finalPath(.audio, time), "/media/audio/20260307/090504.m4a")
    }

    func testDirectories() {
        XCTAssertEqual(layout.kindDirectory(.photo), "/media/photo")
        XCTAssertEqual(layout.dateDirectory(.audio, time), "/media/audio/20260307")
        XCTAssertEqual(layout.incomingDirectory, "/media/.incoming")
    }

    func testZeroPaddingAndLargestValues() {
        let early = LocalTimestamp(year: 999, month: 1, day: 2, hour: 0, minute: 0, second: 0)
        XCTAssertEqual(early.dateStamp, "09990102")
        XCTAssertEqual(early.timeStamp, "000000")
        XCTAssertEqual(layout.finalPath(.video, early), "/media/video/09990102/000000.mp4")
        let late = LocalTimestamp(year: 2026, month: 12, day: 31, hour: 23, minute: 59, second: 59)
        XCTAssertEqual(layout.finalPath(.photo, late), "/media/photo/20261231/235959.jpg")
        XCTAssertEqual(late.description, "20261231-235959")
    }

    func testAttemptSuffix() {
        XCTAssertEqual(layout.finalPath(.video, time, attempt: 0), "/media/video/20260307/090504.mp4")
        XCTAssertEqual(layout.finalPath(.video, time, attempt: 1), "/media/video/20260307/090504-1.mp4")
        XCTAssertEqual(layout.finalPath(.audio, time, attempt: 12), "/media/audio/20260307/090504-12.m4a")
    }

    func testTrailingSlashesInRootAreTrimmed() {
        XCTAssertEqual(LibraryLayout(root: "/media/").root, "/media")
        XCTAssertEqual(LibraryLayout(root: "/media///").root, "/media")
        XCTAssertEqual(LibraryLayout(root: "/media/").finalPath(.video, time), "/media/video/20260307/090504.mp4")
        XCTAssertEqual(LibraryLayout(root: "/media/"), layout)
        // The filesystem root itself is not trimmed to nothing.
        XCTAssertEqual(LibraryLayout(root: "/").root, "/")
    }

    // MARK: Incoming (temp) names

    func testIncomingPath() {
        XCTAssertEqual(layout.incomingPath(.video, time), "/media/.incoming/video-20260307-090504.mp4.part")
        XCTAssertEqual(layout.incomingPath(.photo, time, serial: 3), "/media/.incoming/photo-20260307-090504~3.jpg.part")
    }

    func testIncomingNameRoundTripsForEveryKindAndSerial() throws {
        let times = [
            time,
            LocalTimestamp(year: 2026, month: 12, day: 31, hour: 23, minute: 59, second: 59),
            LocalTimestamp(year: 2000, month: 1, day: 1),
        ]
        for kind in MediaKind.allCases {
            for t in times {
                for serial in [0, 1, 42] {
                    let path = layout.incomingPath(kind, t, serial: serial)
                    XCTAssertTrue(path.hasPrefix(layout.incomingDirectory + "/"))
                    let name = String(try XCTUnwrap(path.split(separator: "/").last))
                    let parsed = try XCTUnwrap(LibraryLayout.parseIncomingName(name), name)
                    XCTAssertEqual(parsed.kind, kind, name)
                    XCTAssertEqual(parsed.time, t, name)
                }
            }
        }
    }

    func testJunkIncomingNamesAreRejected() {
        let junk = [
            "",
            ".part",
            "video-20260307-090504.mp4",             // missing .part
            "video-20260307-090504.mp4.tmp",         // wrong suffix
            "video-20260307-090504.mp4.done",        // wrong suffix of the same length
            "movie-20260307-090504.mp4.part",        // unknown kind
            "video-20260307-090504.jpg.part",        // extension of another kind
            "photo-20260307-090504.mp4.part",
            "video-20260307-090504.part",            // no extension
            "video-20261340-090504.mp4.part",        // month 13, day 40
            "video-20261301-090504.mp4.part",        // month 13
            "video-20260100-090504.mp4.part",        // day 0
            "video-20260132-090504.mp4.part",        // day 32
            "video-20260307-250504.mp4.part",        // hour 25
            "video-20260307-096004.mp4.part",        // minute 60
            "video-2026037-090504.mp4.part",         // 7-digit date
            "video-20260307-90504.mp4.part",         // 5-digit time
            "video-20260307090504.mp4.part",         // no dash
            "video-2026o307-090504.mp4.part",        // letter in date
            "video-20260307-090504-1.mp4.part",      // extra dash
            "video.mp4.part",
        ]
        for name in junk {
            XCTAssertNil(LibraryLayout.parseIncomingName(name), "accepted junk name '\(name)'")
        }
    }

    func testTimestampParsing() {
        XCTAssertEqual(LocalTimestamp(parsing: "20260307-090504"), time)
        XCTAssertNil(LocalTimestamp(parsing: "20260307"))
        XCTAssertNil(LocalTimestamp(parsing: "20260307-0905"))
        XCTAssertNil(LocalTimestamp(parsing: "+0260307-090504"))
        XCTAssertNil(LocalTimestamp(parsing: "20260307-09050a"))
    }

    // MARK: Local time from a Date

    func testLocalTimestampInUTC() throws {
        let utcZone = try XCTUnwrap(TimeZone(identifier: "UTC"))
        let date = try utc("2026-03-07T09:05:04Z")
        XCTAssertEqual(LocalTimestamp(date, timeZone: utcZone), time)
        XCTAssertEqual(LocalTimestamp(Date(timeIntervalSince1970: 0), timeZone: utcZone),
                       LocalTimestamp(year: 1970, month: 1, day: 1))
    }

    func testLocalTimestampInBerlinAcrossDaylightSavingChanges() throws {
        let berlin = try XCTUnwrap(TimeZone(identifier: "Europe/Berlin"))
        // Winter: UTC+1.
        XCTAssertEqual(LocalTimestamp(try utc("2026-01-15T12:00:00Z"), timeZone: berlin),
                       LocalTimestamp(year: 2026, month: 1, day: 15, hour: 13))
        // Spring forward on 2026-03-29 at 01:00 UTC: 01:59:59 CET is followed by 03:00:00 CEST.
        XCTAssertEqual(LocalTimestamp(try utc("2026-03-29T00:59:59Z"), timeZone: berlin),
                       LocalTimestamp(year: 2026, month: 3, day: 29, hour: 1, minute: 59, second: 59))
        XCTAssertEqual(LocalTimestamp(try utc("2026-03-29T01:00:00Z"), timeZone: berlin),
                       LocalTimestamp(year: 2026, month: 3, day: 29, hour: 3))
        // Summer: UTC+2.
        XCTAssertEqual(LocalTimestamp(try utc("2026-07-01T12:00:00Z"), timeZone: berlin),
                       LocalTimestamp(year: 2026, month: 7, day: 1, hour: 14))
        // Fall back on 2026-10-25 at 01:00 UTC: 02:30 local happens twice.
        XCTAssertEqual(LocalTimestamp(try utc("2026-10-25T00:30:00Z"), timeZone: berlin),
                       LocalTimestamp(year: 2026, month: 10, day: 25, hour: 2, minute: 30))
        XCTAssertEqual(LocalTimestamp(try utc("2026-10-25T01:30:00Z"), timeZone: berlin),
                       LocalTimestamp(year: 2026, month: 10, day: 25, hour: 2, minute: 30))
    }

    func testDateFolderIsTheLocalDateNotTheUTCDate() throws {
        let berlin = try XCTUnwrap(TimeZone(identifier: "Europe/Berlin"))
        let utcZone = try XCTUnwrap(TimeZone(identifier: "UTC"))
        let date = try utc("2026-12-31T23:30:00Z")
        XCTAssertEqual(LocalTimestamp(date, timeZone: utcZone).dateStamp, "20261231")
        let local = LocalTimestamp(date, timeZone: berlin)
        XCTAssertEqual(local, LocalTimestamp(year: 2027, month: 1, day: 1, hour: 0, minute: 30))
        XCTAssertEqual(layout.finalPath(.video, local), "/media/video/20270101/003000.mp4")
    }

    // MARK: Ordering

    func testOrderingComparesFieldsMostSignificantFirst() {
        let base = LocalTimestamp(year: 2026, month: 6, day: 15, hour: 12, minute: 30, second: 30)
        let later = [
            LocalTimestamp(year: 2027, month: 1, day: 1),
            LocalTimestamp(year: 2026, month: 7, day: 1),
            LocalTimestamp(year: 2026, month: 6, day: 16),
            LocalTimestamp(year: 2026, month: 6, day: 15, hour: 13),
            LocalTimestamp(year: 2026, month: 6, day: 15, hour: 12, minute: 31),
            LocalTimestamp(year: 2026, month: 6, day: 15, hour: 12, minute: 30, second: 31),
        ]
        for other in later {
            XCTAssertLessThan(base, other, "\(base) < \(other)")
            XCTAssertFalse(other < base, "\(other) < \(base)")
        }
        XCTAssertFalse(base < base)
        let ascending = [base] + later.reversed()
        XCTAssertEqual(ascending.shuffled().sorted(), ascending)
        // String order of the names agrees with time order (the library relies on it).
        XCTAssertEqual(ascending.map(\.description).shuffled().sorted(), ascending.map(\.description))
    }

    func testImpossibleDatesAndJunkSerialsAreNotOurNames() {
        XCTAssertNil(LibraryLayout.parseIncomingName("video-20260231-090504.mp4.part"), "31 February")
        XCTAssertNil(LibraryLayout.parseIncomingName("video-20250229-090504.mp4.part"), "2025 is no leap year")
        XCTAssertNotNil(LibraryLayout.parseIncomingName("video-20240229-090504.mp4.part"), "2024 is")
        XCTAssertNil(LibraryLayout.parseIncomingName("video-20260307-090504~junk.mp4.part"))
        XCTAssertNil(LibraryLayout.parseIncomingName("video-20260307-090504~.mp4.part"))
        XCTAssertNotNil(LibraryLayout.parseIncomingName("video-20260307-090504~12.mp4.part"))
    }

    func testRootSlashDoesNotDoubleTheSeparator() {
        let layout = LibraryLayout(root: "/")
        let time = LocalTimestamp(year: 2026, month: 1, day: 2, hour: 3, minute: 4, second: 5)
        XCTAssertEqual(layout.finalPath(.video, time), "/video/20260102/030405.mp4")
        XCTAssertEqual(layout.incomingDirectory, "/.incoming")
    }

    func testISO8601UTCMatchesFoundation() {
        let formatter = ISO8601DateFormatter()
        for seconds: Int64 in [0, 951_782_400 /* 2000-02-29 */, 1_709_164_800, 1_795_000_000, 4_102_444_799, -86_401] {
            XCTAssertEqual(iso8601UTC(secondsSince1970: seconds), formatter.string(from: Date(timeIntervalSince1970: Double(seconds))))
        }
    }

    func testHTTPDateMatchesFoundationInEnglishGMT() {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        XCTAssertEqual(httpDate(secondsSince1970: 784_111_777), "Sun, 06 Nov 1994 08:49:37 GMT", "RFC 9110's own example")
        for seconds: Int64 in [0, 951_782_400, 1_709_164_800, 1_795_000_000, 4_102_444_799, -86_401, -1] {
            XCTAssertEqual(httpDate(secondsSince1970: seconds), formatter.string(from: Date(timeIntervalSince1970: Double(seconds))))
        }
    }

    /// `LocalZone` (the C library's zone) against ICU's `TimeZone` for the same zone, across
    /// Berlin's changes to and from summer time: file names, the overlay and EXIF use it.
    func testLocalZoneAgreesWithFoundationAcrossDaylightSavingChanges() throws {
        let saved = getenv("TZ").map { String(cString: $0) }
        defer {
            if let saved { setenv("TZ", saved, 1) } else { unsetenv("TZ") }
            tzset()
        }
        setenv("TZ", "Europe/Berlin", 1)
        tzset()
        let berlin = try XCTUnwrap(TimeZone(identifier: "Europe/Berlin"))
        for iso in ["2026-01-15T12:00:00Z", "2026-03-29T00:59:59Z", "2026-03-29T01:00:00Z", "2026-07-01T12:00:00Z",
                    "2026-10-25T00:30:00Z", "2026-10-25T01:30:00Z", "2026-12-31T23:30:00Z", "1970-01-01T00:00:00Z"] {
            let date = try utc(iso)
            let local = LocalZone.offset(at: date)
            XCTAssertEqual(local.seconds, berlin.secondsFromGMT(for: date), iso)
            XCTAssertEqual(local.abbreviation, berlin.secondsFromGMT(for: date) == 3600 ? "CET" : "CEST", iso)
            XCTAssertEqual(LocalTimestamp(date), LocalTimestamp(date, timeZone: berlin), iso)
        }
        XCTAssertEqual(LocalTimestamp(try utc("2026-12-31T23:30:00Z")).dateStamp, "20270101")

        setenv("TZ", "UTC", 1)
        tzset()
        XCTAssertEqual(LocalZone.offset(at: try utc("2026-07-01T12:00:00Z")), .utc)
    }

    func testLocalTimeArithmeticNeverTraps() {
        for seconds in [Int64.min, Int64.max, -1, 0] {
            for offset in [Int.min, Int.max, -86_400, 0, 86_400] {
                let time = LocalTimestamp(unixSeconds: seconds, utcOffsetSeconds: offset)
                XCTAssertTrue((1...12).contains(time.month) && (0..<24).contains(time.hour), "\(seconds) \(offset): \(time)")
            }
        }
        for seconds in [Int64.min, Int64.max] {
            XCTAssertTrue(httpDate(secondsSince1970: seconds).hasSuffix(" GMT"), "a file's mtime at \(seconds)")
            XCTAssertTrue(iso8601UTC(secondsSince1970: seconds).hasSuffix("Z"), "a file's mtime at \(seconds)")
        }
        XCTAssertEqual(LocalZone.wholeSeconds(Date(timeIntervalSince1970: .nan)), 0)
        XCTAssertEqual(LocalZone.wholeSeconds(Date(timeIntervalSince1970: -0.5)), -1)
        XCTAssertEqual(LocalZone.offset(atUnixSeconds: .max), .utc, "beyond the C library's years")
        XCTAssertEqual(LocalTimestamp(unixSeconds: 1_795_000_000, utcOffsetSeconds: -5 * 3600),
                       LocalTimestamp(year: 2026, month: 11, day: 18, hour: 6, minute: 6, second: 40))
    }

    func testEventClipsCarryTheirLabelFromTheTempNameToTheLibrary() throws {
        let layout = LibraryLayout(root: "/media")
        let time = LocalTimestamp(year: 2026, month: 11, day: 24, hour: 10, minute: 14, second: 55)
        XCTAssertEqual(layout.finalPath(.video, time, label: "motion"), "/media/video/20261124/101455-motion.mp4")
        XCTAssertEqual(layout.finalPath(.video, time, attempt: 2, label: "sound"), "/media/video/20261124/101455-sound-2.mp4")
        XCTAssertEqual(layout.finalPath(.video, time, label: "../x"), "/media/video/20261124/101455.mp4", "a bad label is left out")
        let temp = layout.incomingPath(.video, time, serial: 1, label: "motion")
        XCTAssertEqual(temp, "/media/.incoming/video-20261124-101455~1+motion.mp4.part")
        let name = String(temp.split(separator: "/").last ?? "")
        XCTAssertEqual(LibraryLayout.parseIncomingName(name)?.time, time)
        XCTAssertEqual(LibraryLayout.parseIncomingLabel(name), "motion")
        XCTAssertNil(LibraryLayout.parseIncomingLabel("video-20261124-101455.mp4.part"))
        XCTAssertNil(LibraryLayout.parseIncomingName("video-20261124-101455+Motion.mp4.part"), "labels are lowercase letters")
        XCTAssertNil(LibraryLayout.parseIncomingName("video-20261124-101455+.mp4.part"))
        XCTAssertFalse(LibraryLayout.isValidLabel(String(repeating: "a", count: 17)))
    }

    func testAFinishedFileNamesItsEventOrNone() {
        let layout = LibraryLayout(root: "/media")
        let time = LocalTimestamp(year: 2026, month: 11, day: 24, hour: 10, minute: 14, second: 55)
        for (kind, label, attempt) in [(MediaKind.video, "motion", 0), (.video, "sound", 3), (.photo, "manual", 0), (.photo, "motion", 12)] {
            let name = String(layout.finalPath(kind, time, attempt: attempt, label: label).split(separator: "/").last ?? "")
            XCTAssertEqual(LibraryLayout.eventLabel(ofFileName: name), label, name)
        }
        for name in ["101455.mp4", "101455-1.mp4", "101455-12.jpg", ".index", "notes.txt", "101455-motion.txt",
                     "101455-motion", "10145-motion.mp4", "1014555-motion.mp4", "101455-Motion.mp4", "101455-motion-.mp4",
                     "101455-motion-x.mp4", "101455-motion-1-2.mp4", "101455--1.mp4", "101455-.mp4", "abcdef-motion.mp4",
                     "101455-motion-12345.mp4", "101455-motion-0.mp4", "101455-motion-01.mp4", "101455-" + String(repeating: "a", count: 60) + ".mp4"] {
            XCTAssertNil(LibraryLayout.eventLabel(ofFileName: name), name)
        }
        XCTAssertTrue(LibraryShare.events.takes(fileName: "101455-motion.mp4"))
        XCTAssertFalse(LibraryShare.continuous.takes(fileName: "101455-motion.mp4"))
        XCTAssertTrue(LibraryShare.continuous.takes(fileName: "101455.mp4"))
        XCTAssertFalse(LibraryShare.continuous.takes(fileName: LibraryIndex.fileName), "the index stays while the folder does")
        XCTAssertFalse(LibraryShare.events.takes(fileName: LibraryIndex.fileName))
        XCTAssertTrue(LibraryShare.all.takes(fileName: LibraryIndex.fileName))
    }
}
