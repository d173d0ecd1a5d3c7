import XCTest
@testable import KioskCore

final class DiskGuardPolicyTests: XCTestCase {
    private let GiB: Int64 = 1 << 30
    private let MiB: Int64 = 1 << 20
    private let today = CalendarDate(year: 2026, month: 3, day: 15)!  // a literal, valid date

    private func day(_ age: Int) -> CalendarDate { today.adding(days: -age) }

    // MARK: Floor

    func testDefaultFloorIsOneGiB() {
        let policy = DiskGuardPolicy()
        XCTAssertEqual(policy.floor(totalBytes: 64 * GiB, currentBitrate: nil), GiB)
        XCTAssertEqual(policy.floor(totalBytes: 0, currentBitrate: nil), GiB, "size unknown: the default stands")
    }

    func testOneHourAtTheBitrateWins() {
        // 1280x720's default video bitrate (9308 kbit/s) + 128 kbit/s AAC.
        let bitrate = 9_308_000
        let floor = DiskGuardPolicy().floor(totalBytes: 64 * GiB, currentBitrate: bitrate)
        XCTAssertEqual(floor, 4_188_600_000, "9.308 Mbit/s × 3600 s / 8 = 4.19 GB")
        XCTAssertGreaterThan(floor, GiB)
        // A low bitrate leaves the 1 GiB default in place.
        XCTAssertEqual(DiskGuardPolicy().floor(totalBytes: 64 * GiB, currentBitrate: 128_000), GiB)
        XCTAssertEqual(DiskGuardPolicy().floor(totalBytes: 64 * GiB, currentBitrate: 0), GiB)
    }

    func testConfiguredBytesAndPercent() {
        XCTAssertEqual(DiskGuardPolicy(floorBytes: 200 * MiB).floor(totalBytes: 64 * GiB, currentBitrate: nil), 200 * MiB,
                       "a configured floor replaces the 1 GiB default")
        XCTAssertEqual(DiskGuardPolicy(floorBytes: 5 * GiB).floor(totalBytes: 64 * GiB, currentBitrate: nil), 5 * GiB)
        XCTAssertEqual(DiskGuardPolicy(floorPercent: 10).floor(totalBytes: 64 * GiB, currentBitrate: nil), 6_871_947_674,
                       "10 % of 64 GiB, rounded up")
        // Both configured: the larger.
        XCTAssertEqual(DiskGuardPolicy(floorBytes: 2 * GiB, floorPercent: 1).floor(totalBytes: 100 * GiB, currentBitrate: nil), 2 * GiB)
        XCTAssertEqual(DiskGuardPolicy(floorBytes: 2 * GiB, floorPercent: 5).floor(totalBytes: 100 * GiB, currentBitrate: nil), 5 * GiB)
        // The hour at the bitrate still counts with a configured floor.
        XCTAssertEqual(DiskGuardPolicy(floorBytes: 200 * MiB).floor(totalBytes: 64 * GiB, currentBitrate: 9_308_000), 4_188_600_000)
        // Nonsense is clamped, never a trap.
        XCTAssertEqual(DiskGuardPolicy(floorPercent: 250).floor(totalBytes: 8 * GiB, currentBitrate: nil), 8 * GiB)
        XCTAssertEqual(DiskGuardPolicy(floorBytes: -5, floorPercent: -1).floor(totalBytes: 8 * GiB, currentBitrate: nil), 0)
        XCTAssertEqual(DiskGuardPolicy(floorPercent: .nan).floor(totalBytes: 8 * GiB, currentBitrate: nil), GiB)
        XCTAssertEqual(DiskGuardPolicy().floor(totalBytes: Int64.max, currentBitrate: Int.max), Int64.max / 2)
    }

    func testAutomaticFloorIsCappedAtHalfTheDisk() {
        // A 4 GiB card at 9.3 Mbit/s: an hour (4.19 GB) would forbid recording for ever.
        XCTAssertEqual(DiskGuardPolicy().floor(totalBytes: 4 * GiB, currentBitrate: 9_308_000), 2 * GiB)
        XCTAssertEqual(DiskGuardPolicy().floor(totalBytes: GiB, currentBitrate: nil), GiB / 2)
        // What is configured is honoured.
        XCTAssertEqual(DiskGuardPolicy(floorBytes: 3 * GiB).floor(totalBytes: 4 * GiB, currentBitrate: nil), 3 * GiB)
    }

    func testHardFloor() {
        XCTAssertEqual(DiskGuardPolicy().hardFloor(totalBytes: 64 * GiB, currentBitrate: nil), 512 * MiB, "half of 1 GiB")
        XCTAssertEqual(DiskGuardPolicy().hardFloor(totalBytes: 64 * GiB, currentBitrate: 9_308_000), 2_094_300_000)
        XCTAssertEqual(DiskGuardPolicy(floorBytes: 400 * MiB).hardFloor(totalBytes: 64 * GiB, currentBitrate: nil), 256 * MiB,
                       "at least 256 MiB")
        XCTAssertEqual(DiskGuardPolicy(floorBytes: 100 * MiB).hardFloor(totalBytes: 64 * GiB, currentBitrate: nil), 100 * MiB,
                       "never above the floor itself")
        let policy = DiskGuardPolicy()
        XCTAssertFalse(policy.mustStopRecording(freeBytes: 600 * MiB, totalBytes: 64 * GiB, currentBitrate: nil))
        XCTAssertTrue(policy.mustStopRecording(freeBytes: 500 * MiB, totalBytes: 64 * GiB, currentBitrate: nil))
    }

    // MARK: Plan

    func testNothingToDoOverTheFloor() {
        let plan = DiskGuardPolicy().plan(freeBytes: 2 * GiB, totalBytes: 64 * GiB, bitrate: nil,
                                          days: [(day(10), GiB)], today: today)
        XCTAssertEqual(plan.deletions, [])
        XCTAssertTrue(plan.canRecord)
        XCTAssertNil(plan.message)
        XCTAssertEqual(plan.projectedFreeBytes, 2 * GiB)
    }

    func testOldestDaysGoFirstAcrossKindsAndItStopsOverTheFloor() {
        // Each date listed once per kind; the guard adds them up.
        let days: [(date: CalendarDate, bytes: Int64)] = [
            (day(3), 300 * MiB), (day(5), 200 * MiB), (day(5), 100 * MiB), (day(4), 300 * MiB), (day(7), 100 * MiB),
            (day(7), 50 * MiB), (day(6), 300 * MiB), (today, 5 * GiB),
        ]
        let plan = DiskGuardPolicy(floorBytes: GiB).plan(freeBytes: 300 * MiB, totalBytes: 64 * GiB, bitrate: nil,
                                                         days: days, today: today)
        // 300 + 150 (day 7) + 300 (day 6) + 300 (day 5) = 1050 MiB ≥ 1024: day 4 and day 3 stay.
        XCTAssertEqual(plan.deletions, [.init(date: day(7), bytes: 150 * MiB), .init(date: day(6), bytes: 300 * MiB),
                                        .init(date: day(5), bytes: 300 * MiB)])
        XCTAssertEqual(plan.deletions.first?.reason, .space)
        XCTAssertEqual(plan.projectedFreeBytes, 1050 * MiB)
        XCTAssertTrue(plan.canRecord)
        XCTAssertNil(plan.message)
    }

    func testContinuousFootageOfEveryOlderDayGoesBeforeAnyEventClip() {
        // Days 5, 4 and 3 hold 300 MiB each, of which 100, 0 and 50 MiB are event clips; day 2 only clips.
        let days: [(date: CalendarDate, bytes: Int64)] = [(day(5), 300 * MiB), (day(4), 300 * MiB), (day(3), 300 * MiB),
                                                          (day(2), 80 * MiB), (today, GiB)]
        let clips: [CalendarDate: Int64] = [day(5): 100 * MiB, day(3): 50 * MiB, day(2): 80 * MiB, today: 10 * MiB]
        let policy = DiskGuardPolicy(floorBytes: GiB)
        // 250 MiB short: day 5's and day 4's footage are enough; every clip stays.
        let footage = policy.plan(freeBytes: 774 * MiB, totalBytes: 64 * GiB, bitrate: nil, days: days, eventBytes: clips, today: today)
        XCTAssertEqual(footage.deletions, [.init(date: day(5), bytes: 200 * MiB, share: .continuous),
                                           .init(date: day(4), bytes: 300 * MiB, share: .all)])
        // 850 MiB short: all footage (750 MiB), then the oldest clips; the newer clips stay.
        let clipsToo = policy.plan(freeBytes: 174 * MiB, totalBytes: 64 * GiB, bitrate: nil, days: days, eventBytes: clips, today: today)
        XCTAssertEqual(clipsToo.deletions, [.init(date: day(5), bytes: 200 * MiB, share: .continuous),
                                            .init(date: day(4), bytes: 300 * MiB, share: .all),
                                            .init(date: day(3), bytes: 250 * MiB, share: .continuous),
                                            .init(date: day(5), bytes: 100 * MiB, share: .events)])
        XCTAssertTrue(clipsToo.canRecord)
        // Not enough at all: every older day goes whole in the end, today's clips stay.
        let everything = policy.plan(freeBytes: 0, totalBytes: 64 * GiB, bitrate: nil, days: days, eventBytes: clips, today: today)
        XCTAssertEqual(everything.deletions.map(\.share), [.continuous, .all, .continuous, .events, .events, .all])
        XCTAssertEqual(everything.deletions.last, .init(date: day(2), bytes: 80 * MiB, share: .all), "a day of clips only goes whole")
        XCTAssertEqual(everything.projectedFreeBytes, 980 * MiB)
        XCTAssertFalse(everything.canRecord)
        XCTAssertTrue(everything.message?.contains("(4 days, 1.0 GiB)") == true, everything.message ?? "")
        // Clip bytes larger than the day (a torn scan) count as the whole day, no more.
        let torn = policy.plan(freeBytes: 0, totalBytes: 64 * GiB, bitrate: nil, days: [(day(1), 10 * MiB)],
                               eventBytes: [day(1): 99 * MiB], today: today)
        XCTAssertEqual(torn.deletions, [.init(date: day(1), bytes: 10 * MiB, share: .all)])
    }

    func testExactlyAtTheFloorIsEnough() {
        let plan = DiskGuardPolicy(floorBytes: GiB).plan(freeBytes: GiB - 100, totalBytes: 64 * GiB, bitrate: nil,
                                                         days: [(day(2), 100), (day(1), 100)], today: today)
        XCTAssertEqual(plan.deletions.map(\.date), [day(2)])
        XCTAssertTrue(plan.canRecord)
    }

    func testNeverTodayProtectedOrFutureDays() {
        let inProgress = day(9)
        let days: [(date: CalendarDate, bytes: Int64)] = [(day(9), GiB), (today, GiB), (today.adding(days: 3), GiB), (day(2), 10 * MiB)]
        let plan = DiskGuardPolicy(floorBytes: 10 * GiB).plan(freeBytes: 0, totalBytes: 64 * GiB, bitrate: nil,
                                                              days: days, today: today, protected: [inProgress])
        XCTAssertEqual(plan.deletions.map(\.date), [day(2)])
        XCTAssertFalse(plan.canRecord)
        XCTAssertEqual(plan.message, "free space 0 bytes is below the floor 10.0 GiB and deleting every older day "
                       + "(1 day, 10.0 MiB) is not enough (only today's recordings, the day of the recording in progress and "
                       + "1 day dated in the future (clock wrong?) are left): free space or lower storage.min_free_* settings")
    }

    func testCannotRecordWhenOnlyTodayIsLeft() {
        let plan = DiskGuardPolicy().plan(freeBytes: 858_993_459, totalBytes: 64 * GiB, bitrate: nil,
                                          days: [(today, 20 * GiB)], today: today)
        XCTAssertEqual(plan.deletions, [])
        XCTAssertFalse(plan.canRecord)
        XCTAssertEqual(plan.message, "free space 0.8 GiB is below the floor 1.0 GiB and nothing can be deleted "
                       + "(only today's recordings are left): free space or lower storage.min_free_* settings")
    }

    func testCannotRecordWhenSomethingElseFillsTheDisk() {
        let plan = DiskGuardPolicy().plan(freeBytes: 10 * MiB, totalBytes: 64 * GiB, bitrate: nil, days: [], today: today)
        XCTAssertFalse(plan.canRecord)
        XCTAssertEqual(plan.message, "free space 10.0 MiB is below the floor 1.0 GiB and nothing can be deleted "
                       + "(the library holds nothing else to delete; something else is filling the disk): "
                       + "free space or lower storage.min_free_* settings")
    }

    func testByteCountText() {
        XCTAssertEqual(ByteCountText.text(858_993_459), "0.8 GiB")
        XCTAssertEqual(ByteCountText.text(GiB), "1.0 GiB")
        XCTAssertEqual(ByteCountText.text(4_188_600_000), "3.9 GiB")
        XCTAssertEqual(ByteCountText.text(12 * MiB + MiB / 2), "12.5 MiB")
        XCTAssertEqual(ByteCountText.text(300 << 10), "300.0 KiB")
        XCTAssertEqual(ByteCountText.text(12), "12 bytes")
        XCTAssertEqual(ByteCountText.text(-GiB), "-1.0 GiB")
    }
}
