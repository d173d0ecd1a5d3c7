@testable import KioskCore
import XCTest

/// The timelapse's pure parts: when a frame is kept, what the movies are called, which
/// ones retention takes, and the box reading that continues a movie after a restart.
final class TimelapseTests: XCTestCase {
    private func instant(_ seconds: Double) -> MonotonicInstant { MonotonicInstant(nanoseconds: Int64(seconds * 1e9)) }

    /// At 30 fps and a 1 s interval, the first frame and then one a second: 10 s keep 10
    /// frames, spaced by a second on capture time, with no drift from the frame period.
    func testOneFrameAnIntervalOnCaptureTime() {
        var schedule = TimelapseSchedule(intervalSeconds: 1)
        var kept: [Double] = []
        for n in 0..<300 {
            let time = 100 + Double(n) / 30 + (n % 2 == 0 ? 0.004 : -0.004)   // a jittery camera
            if schedule.takes(instant(time)) { kept.append(time) }
        }
        XCTAssertEqual(kept.count, 10)
        for (a, b) in zip(kept, kept.dropFirst()) { XCTAssertEqual(b - a, 1, accuracy: 0.05) }
        XCTAssertEqual(kept.last ?? 0, 109, accuracy: 0.05, "no drift: the tenth frame is 9 s after the first")
    }

    /// A 5 s gap in capture (the camera unplugged) does not give a burst afterwards.
    func testAGapDoesNotBurst() {
        var schedule = TimelapseSchedule(intervalSeconds: 1)
        XCTAssertTrue(schedule.takes(instant(10)))
        XCTAssertTrue(schedule.takes(instant(16)))
        XCTAssertFalse(schedule.takes(instant(16.5)))
        XCTAssertFalse(schedule.takes(instant(16.9)))
        XCTAssertTrue(schedule.takes(instant(17)))
        var minute = TimelapseSchedule(intervalSeconds: 60)
        XCTAssertTrue(minute.takes(instant(0)))
        XCTAssertFalse(minute.takes(instant(59.9)))
        XCTAssertTrue(minute.takes(instant(59.99)), "a frame within the camera's jitter of its time is on time")
    }

    func testNamesAndParts() throws {
        let day = try XCTUnwrap(CalendarDate(year: 2026, month: 11, day: 29))
        XCTAssertEqual(TimelapseFileName.name(for: day), "20261129.mp4")
        XCTAssertEqual(TimelapseFileName.name(for: day, part: 3), "20261129-3.mp4")
        XCTAssertEqual(TimelapseFileName.parse("20261129.mp4")?.day, day)
        XCTAssertEqual(TimelapseFileName.parse("20261129-12.mp4")?.part, 12)
        for wrong in ["20261129.mov", "2026112.mp4", "20261129-.mp4", "20261129-1.mp4", "20261129-02.mp4",
                      "20261129-x.mp4", "20261332.mp4", "notes.mp4", ".mp4", "20261129-99999.mp4"] {
            XCTAssertNil(TimelapseFileName.parse(wrong), wrong)
        }
    }

    /// Retention takes a movie when its day is as old as a recording's folder that goes;
    /// never today's, a future one or a name that is not a movie's.
    func testRetentionTakesOldDaysOnly() throws {
        let today = try XCTUnwrap(CalendarDate(year: 2026, month: 3, day: 1))
        let names = ["20260130.mp4", "20260129.mp4", "20260129-2.mp4", "20260131.mp4", "20260301.mp4", "20260305.mp4",
                     "notes.txt", "20250101.mkv"]
        XCTAssertEqual(RetentionPolicy(retentionDays: 30).expiredTimelapseFiles(names, today: today),
                       ["20260129-2.mp4", "20260129.mp4", "20260130.mp4"])
        XCTAssertEqual(RetentionPolicy(retentionDays: 0).expiredTimelapseFiles(names, today: today), [], "0: age never deletes")
    }

    /// The local date of an instant, across midnight in zones east and west of UTC.
    func testTheLocalDayOfAnInstant() {
        let midnightUTC: Int64 = 1_796_083_200   // 2026-12-01T00:00:00Z
        XCTAssertEqual(CalendarDate(unixSeconds: midnightUTC, utcOffsetSeconds: 0).description, "2026-12-01")
        XCTAssertEqual(CalendarDate(unixSeconds: midnightUTC - 1, utcOffsetSeconds: 0).description, "2026-11-30")
        XCTAssertEqual(CalendarDate(unixSeconds: midnightUTC - 1, utcOffsetSeconds: 3600).description, "2026-12-01")
        XCTAssertEqual(CalendarDate(unixSeconds: midnightUTC, utcOffsetSeconds: -3600).description, "2026-11-30")
        XCTAssertEqual(CalendarDate(unixSeconds: -1, utcOffsetSeconds: 0).description, "1969-12-31")
        _ = CalendarDate(unixSeconds: .max, utcOffsetSeconds: .max)   // clamped, no trap
        _ = CalendarDate(unixSeconds: .min, utcOffsetSeconds: .min)
    }

    func testConfiguration() throws {
        let configuration = try Configuration(toml: "[timelapse]\ninterval_seconds = 10\nfps = 24\n", file: "t.toml")
        XCTAssertEqual(configuration.timelapse.intervalSeconds, 10)
        XCTAssertEqual(configuration.timelapse.framesPerSecond, 24)
        XCTAssertTrue(configuration.timelapse.isEnabled)
        XCTAssertFalse(Configuration().timelapse.isEnabled, "off unless asked for")
        for wrong in ["interval_seconds = -1", "interval_seconds = 86401", "fps = 0", "fps = 61", "interval_seconds = \"10\""] {
            XCTAssertThrowsError(try Configuration(toml: "[timelapse]\n\(wrong)\n", file: "t.toml"), wrong) { error in
                XCTAssertTrue("\(error)".contains("timelapse."), "names the key: \(error)")
            }
        }
    }

    // MARK: Continuing a movie

    private func box(_ type: String, _ payload: [UInt8]) -> [UInt8] {
        let size = UInt32(8 + payload.count)
        return [UInt8(size >> 24), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)] + Array(type.utf8) + payload
    }

    private func fragment(samples: UInt32, bytes: Int) -> [UInt8] {
        let count = [UInt8(samples >> 24), UInt8(samples >> 16 & 0xFF), UInt8(samples >> 8 & 0xFF), UInt8(samples & 0xFF)]
        return box("moof", box("mfhd", [0, 0, 0, 0, 0, 0, 0, 1]) + box("traf", box("trun", [0, 0, 0, 0] + count)))
            + box("mdat", [UInt8](repeating: 7, count: bytes))
    }

    private func read(_ bytes: [UInt8]) -> (Int64, Int) -> [UInt8] {
        { offset, count in
            guard offset >= 0, offset < Int64(bytes.count) else { return [] }
            return Array(bytes[Int(offset)..<min(bytes.count, Int(offset) + count)])
        }
    }

    /// The frames and fragments already in a movie, and where its header is; a torn last
    /// fragment counts for nothing.
    func testContinuationCountsWholeFragmentsOnly() throws {
        let description = box("stsd", [0, 0, 0, 0, 0, 0, 0, 1] + box("avc1", [1, 2, 3]))
        let moov = box("moov", box("mvhd", [0]) + box("trak", box("tkhd", [9]) + box("mdia", box("minf", box("stbl", description)))))
        let whole = box("ftyp", [0, 0, 0, 0]) + moov + fragment(samples: 1, bytes: 50) + fragment(samples: 1, bytes: 40)
        let torn = whole + Array(fragment(samples: 1, bytes: 30).prefix(40))
        let found = try XCTUnwrap(FragmentedMP4Scan.continuation(fileSize: Int64(torn.count), read: read(torn)))
        XCTAssertEqual(found.samples, 2)
        XCTAssertEqual(found.result.fragments, 2)
        XCTAssertEqual(found.result.playableLength, Int64(whole.count))
        XCTAssertEqual(found.fragmentsEnd, Int64(whole.count))
        let junk = whole + box("free", [1, 2, 3])   // torn bytes can look like a box
        XCTAssertEqual(FragmentedMP4Scan.continuation(fileSize: Int64(junk.count), read: read(junk))?.fragmentsEnd, Int64(whole.count),
                       "a writer goes on after the last fragment, not after what follows it")
        XCTAssertEqual(found.headerOffset, 12)
        XCTAssertEqual(found.headerLength, Int64(moov.count))
        XCTAssertNil(FragmentedMP4Scan.continuation(fileSize: 12, read: read(Array(whole.prefix(12)))), "no header: nothing to continue")

        let stsd = try XCTUnwrap(FragmentedMP4Scan.box(at: ["moov", "trak", "mdia", "minf", "stbl", "stsd"], inside: moov[...]))
        XCTAssertEqual(Array(stsd), description)
        XCTAssertEqual(FragmentedMP4Scan.box(at: ["moov", "trak", "mdia", "minf", "stbl", "stsd", "avc1"], inside: moov[...]).map(Array.init),
                       box("avc1", [1, 2, 3]), "stsd's entries are found past its entry count")
        XCTAssertNil(FragmentedMP4Scan.box(at: ["moov", "trak", "edts"], inside: moov[...]))
    }

    /// Box sizes from a damaged header end the walk; none traps (every prefix and a
    /// size field set to each extreme).
    func testBoxLookupSurvivesTornAndLyingSizes() {
        let moov = box("moov", box("trak", box("mdia", box("minf", box("stbl", box("stsd", [0, 0, 0, 0, 0, 0, 0, 1]))))))
        for cut in 0...moov.count {
            _ = FragmentedMP4Scan.box(at: ["moov", "trak", "mdia", "minf", "stbl", "stsd"], inside: moov.prefix(cut))
        }
        for at in stride(from: 0, to: moov.count - 3, by: 8) {
            for size: [UInt8] in [[0, 0, 0, 0], [0, 0, 0, 1], [0xFF, 0xFF, 0xFF, 0xFF], [0, 0, 0, 7], [0x7F, 0xFF, 0xFF, 0xFF]] {
                var bent = moov
                bent.replaceSubrange(at..<(at + 4), with: size)
                _ = FragmentedMP4Scan.box(at: ["moov", "trak", "mdia", "minf", "stbl", "stsd"], inside: bent[...])
                _ = FragmentedMP4Scan.continuation(fileSize: Int64(bent.count), read: read(bent))
            }
        }
        XCTAssertNil(FragmentedMP4Scan.box(at: [], inside: moov[...]))
    }
}
