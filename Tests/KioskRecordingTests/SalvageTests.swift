import Foundation
import KioskCore
import KioskMedia
import KioskRecording
import KioskTestSupport
import Logging
import XCTest

/// Start-up salvage against hostile leftovers: nothing read from a file may trap, a file
/// that cannot be repaired is quarantined (kept, never deleted, never retried), and a
/// file on which salvage keeps stopping is quarantined after a bounded number of starts.
final class SalvageTests: XCTestCase {
    let format = VideoFormat(size: FrameSize(width: 320, height: 240), pixelFormat: .yuyv, framesPerSecond: 30)
    let logger = Logger(label: "test")
    let time = LocalTimestamp(year: 2026, month: 3, day: 4, hour: 5, minute: 6, second: 7)

    struct Library {
        let folder = TemporaryDirectory()
        let layout: LibraryLayout
        let files: LibraryFiles
        init() throws {
            layout = LibraryLayout(root: folder.path + "/media")
            files = LibraryFiles(layout: layout)
            try files.prepare()
        }
    }

    /// An interrupted recording as `kill -9` leaves it: `frames` frames, no trailer.
    private func writeInterruptedRecording(_ path: String, frames: Int = 75) throws {
        try writeRecording(path, frames: frames, finished: false)
    }

    private func writeRecording(_ path: String, frames: Int, finished: Bool) throws {
        let writer = try MP4Writer(settings: MP4WriterSettings(path: path, video: VideoTrackSettings(input: format), audio: nil))
        let renderer = TestPatternRenderer(format: format)
        var pixels = [UInt8](repeating: 0, count: format.frameByteCount)
        for index in 0..<frames {
            pixels.withUnsafeMutableBytes { renderer.render(into: $0, sequence: index, caption: []) }
            try pixels.withUnsafeBytes { try writer.writeVideo($0, nanosecondsFromStart: Int64(index) * 33_333_333) }
        }
        if finished { try writer.finish() } else { writer.abandon() }
    }

    private func append(_ bytes: [UInt8], to path: String) throws {
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data(bytes))
        handle.closeFile()
    }

    /// The field crash: a torn box whose 64-bit size is near UInt64.max made the scan's
    /// offset overflow, and the daemon (which salvages at every start) crashed on every
    /// boot. Now the scan stops at the bad box and what came before is recovered.
    func testACorrupt64BitBoxSizeIsCutOffNotATrap() throws {
        let library = try Library()
        let temp = library.layout.incomingPath(.video, time)
        try writeInterruptedRecording(temp)
        // A "large size" box header: size field 1, type, then a 64-bit size.
        try append([0, 0, 0, 1] + Array("moof".utf8) + [0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xF0] + [UInt8](repeating: 9, count: 100), to: temp)

        let results = IncomingSalvage(files: library.files, logger: logger).salvageAll()
        guard case .recovered(let path, let seconds)? = results.first?.outcome, results.count == 1 else { return XCTFail("\(results)") }
        XCTAssertEqual(path, library.layout.finalPath(.video, time))
        XCTAssertEqual(seconds, 2, accuracy: 0.05)
        let probe = try FFprobe.probe(library.layout.finalPath(.video, time))
        XCTAssertEqual(probe.video?.frameCount, 60, "both whole fragments survive; only the bad box is cut")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: library.layout.incomingDirectory), [])
    }

    /// A salvaged file's header says how long it plays, as a finished one's does: the
    /// durations and `mehd` that `kill -9` kept the writer from filling in.
    func testASalvagedFileHeaderCarriesItsRealLength() throws {
        let library = try Library()
        let temp = library.layout.incomingPath(.video, time)
        try writeInterruptedRecording(temp, frames: 75)
        XCTAssertEqual(try MP4HeaderLength.read(temp).movieTicks, 0, "unknown before")
        let before = [UInt8](try Data(contentsOf: URL(fileURLWithPath: temp)))
        XCTAssertNotNil(MP4HeaderLength.box(["moov", "mvex", "free"], in: before[...]), "the room the writer kept")

        let results = IncomingSalvage(files: library.files, logger: logger).salvageAll()
        guard case .recovered(let path, let seconds)? = results.first?.outcome else { return XCTFail("\(results)") }
        let header = try MP4HeaderLength.read(path)
        XCTAssertEqual(header.movieSeconds, seconds, accuracy: 1.0 / 30)
        XCTAssertEqual(seconds, 2.5, accuracy: 0.55, "the whole fragments of 75 frames")
        XCTAssertEqual(try XCTUnwrap(header.fragmentTicks, "a mehd"), header.movieTicks)
        let format = try Tool.run("ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", path]).stdout
        XCTAssertEqual(Double(format.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0, seconds, accuracy: 1.0 / 30)
    }

    /// A file with bytes but no readable header is damaged, not empty: it is moved whole
    /// to quarantine with a note, and the next start does not look at it again.
    func testAFileWithNoHeaderIsQuarantinedWholeAndNotRetried() throws {
        let library = try Library()
        let temp = library.layout.incomingPath(.video, time)
        try writeInterruptedRecording(temp, frames: 150)
        let original = try Data(contentsOf: URL(fileURLWithPath: temp))
        // Damage the first box's size: nothing of the file can be walked any more.
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: temp))
        handle.write(Data([0x7F, 0xFF, 0xFF, 0xFF]))
        handle.closeFile()

        let salvage = IncomingSalvage(files: library.files, logger: logger)
        let results = salvage.salvageAll()
        let quarantined = library.layout.quarantineDirectory + "/video-20260304-050607.mp4"
        guard case .quarantined(let path, let reason)? = results.first?.outcome else { return XCTFail("\(results)") }
        XCTAssertEqual(path, quarantined)
        XCTAssertTrue(reason.contains("no MP4 header"), reason)
        let kept = try Data(contentsOf: URL(fileURLWithPath: quarantined))
        XCTAssertEqual(kept.count, original.count, "kept whole, not cut")
        XCTAssertTrue(try String(contentsOfFile: quarantined + ".txt", encoding: .utf8).contains("no MP4 header"))
        XCTAssertEqual(library.files.quarantinedFileCount(), 1)
        XCTAssertTrue(salvage.salvageAll().isEmpty, "nothing left to retry at the next start")
        XCTAssertFalse(FileManager.default.fileExists(atPath: library.layout.kindDirectory(.video)), "nothing half-made in the library")
    }

    /// Corruption in the middle (a bad size followed by far more data than a crash can
    /// tear) must not be "repaired" by cutting the file there: it is quarantined whole.
    func testDamageInTheMiddleIsQuarantinedNotCut() throws {
        let library = try Library()
        let temp = library.layout.incomingPath(.video, time)
        try writeInterruptedRecording(temp)
        try append([0xFF, 0xFF, 0xFF, 0xF0] + Array("moof".utf8), to: temp)
        // 70 MiB more (sparse: no disk used) after the bad box.
        let fd = open(temp, O_WRONLY)
        XCTAssertEqual(ftruncate(fd, off_t(try XCTUnwrap(FileManager.default.attributesOfItem(atPath: temp)[.size] as? Int) + (70 << 20))), 0)
        close(fd)
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: temp)[.size] as? Int)

        let results = IncomingSalvage(files: library.files, logger: logger).salvageAll()
        guard case .quarantined(let path, let reason)? = results.first?.outcome else { return XCTFail("\(results)") }
        XCTAssertTrue(reason.contains("damaged in the middle"), reason)
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int, size, "not a byte cut")
    }

    /// Salvage that never finishes on a file (kioskcam killed while repairing it, by a
    /// crash or the watchdog) is counted on disk: after three starts the file goes to
    /// quarantine without a fourth try.
    func testAFileSalvageKeepsStoppingOnIsQuarantinedAfterThreeStarts() throws {
        let library = try Library()
        let temp = library.layout.incomingPath(.video, time)
        try writeInterruptedRecording(temp)
        let counter = library.layout.incomingDirectory + "/.video-20260304-050607.mp4.part.attempts"
        try Data("3\n".utf8).write(to: URL(fileURLWithPath: counter))

        let results = IncomingSalvage(files: library.files, logger: logger).salvageAll()
        guard case .quarantined(_, let reason)? = results.first?.outcome else { return XCTFail("\(results)") }
        XCTAssertTrue(reason.contains("3 attempts"), reason)
        XCTAssertFalse(FileManager.default.fileExists(atPath: counter), "the counter goes with the file")
        XCTAssertFalse(FileManager.default.fileExists(atPath: temp))
    }

    /// A finished attempt clears its counter; a counter left by an interrupted attempt
    /// counts, and a stale counter whose file is gone is removed.
    func testAttemptCountersAreClearedAndCounted() throws {
        let library = try Library()
        let temp = library.layout.incomingPath(.video, time)
        try writeInterruptedRecording(temp)
        let counter = library.layout.incomingDirectory + "/.video-20260304-050607.mp4.part.attempts"
        try Data("2\n".utf8).write(to: URL(fileURLWithPath: counter))
        let stale = library.layout.incomingDirectory + "/.video-20250101-000000.mp4.part.attempts"
        try Data("1\n".utf8).write(to: URL(fileURLWithPath: stale))

        let results = IncomingSalvage(files: library.files, logger: logger).salvageAll()
        guard case .recovered? = results.first?.outcome else { return XCTFail("the third attempt still runs: \(results)") }
        XCTAssertFalse(FileManager.default.fileExists(atPath: counter))
        XCTAssertFalse(FileManager.default.fileExists(atPath: stale))
    }

    /// A crash between a move's link into the library and the unlink of the temp name
    /// leaves one finished file under two names. The next start finishes the move instead
    /// of salvaging the file into the library again: the power-cut battery
    /// (scripts/torture) found one recording as both `HHMMSS.mp4` and `HHMMSS-1.mp4`.
    func testAMoveCutShortAfterItsLinkIsFinishedNotSalvagedAgain() throws {
        let library = try Library()
        let temp = library.layout.incomingPath(.video, time)
        try writeRecording(temp, frames: 75, finished: true)
        let directory = library.layout.dateDirectory(.video, time)
        let final = library.layout.finalPath(.video, time)
        try library.files.makeDirectories(directory)
        XCTAssertEqual(link(temp, final), 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: final))

        let results = IncomingSalvage(files: library.files, logger: logger).salvageAll()
        guard case .recovered(let path, let seconds)? = results.first?.outcome, results.count == 1 else { return XCTFail("\(results)") }
        XCTAssertEqual(path, final)
        XCTAssertEqual(seconds, 2.5, accuracy: 0.05)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory).sorted(), [".index", "050607.mp4"],
                       "one recording, one name")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: final)), before, "the library file is left as it was")
        let index = try String(contentsOfFile: directory + "/" + LibraryIndex.fileName, encoding: .utf8)
        XCTAssertEqual(index.split(separator: "\n").count, 1, index)
        XCTAssertEqual(LibraryIndex.parse(index)["050607.mp4"] ?? 0, 2.5, accuracy: 0.05)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: library.layout.incomingDirectory), [],
                       "no temp name and no attempt counter left")
    }

    /// The count is replaced, never rewritten in place, so a kill while it is written
    /// leaves the old count or the new one. Rewritten in place (truncate, then write), a
    /// kill between the two left an empty counter that read as 0: the power-cut battery
    /// (scripts/torture) saw a file's interrupted attempts forgotten that way. A new count
    /// a kill left unrenamed is removed at the next start.
    func testAnAttemptCounterIsReplacedNotRewrittenInPlace() throws {
        let library = try Library()
        let temp = library.layout.incomingPath(.video, time)
        try writeInterruptedRecording(temp)
        let counter = library.layout.incomingDirectory + "/.video-20260304-050607.mp4.part.attempts"
        try Data("2\n".utf8).write(to: URL(fileURLWithPath: counter))
        try Data().write(to: URL(fileURLWithPath: counter + ".new"))
        let old = open(counter, O_RDONLY)
        XCTAssertGreaterThanOrEqual(old, 0)
        defer { close(old) }

        let results = IncomingSalvage(files: library.files, logger: logger).salvageAll()
        guard case .recovered? = results.first?.outcome else { return XCTFail("the third attempt runs: \(results)") }
        var bytes = [UInt8](repeating: 0, count: 8)
        let count = pread(old, &bytes, bytes.count, 0)
        XCTAssertEqual(String(decoding: bytes.prefix(max(0, count)), as: UTF8.self), "2\n",
                       "the old count stays whole until the new one replaces it")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: library.layout.incomingDirectory), [],
                       "no counter and no unrenamed new count left")
    }

    /// Random damage to real recordings: salvage always answers (recovered, discarded or
    /// quarantined), never traps, and never leaves a file that does not play in the library.
    func testRandomDamageToRealRecordingsAlwaysGetsAnAnswer() throws {
        let library = try Library()
        let pristine = library.folder.path + "/pristine.mp4"
        try writeInterruptedRecording(pristine, frames: 45)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: pristine)))
        var generator = SystemRandomNumberGenerator()
        for round in 0..<40 {
            var damaged = bytes
            for _ in 0..<Int.random(in: 1...6, using: &generator) {
                damaged[Int.random(in: 0..<damaged.count, using: &generator)] = .random(in: 0...255, using: &generator)
            }
            if round % 3 == 0 { damaged.removeLast(Int.random(in: 0..<damaged.count / 2, using: &generator)) }
            let when = LocalTimestamp(year: 2026, month: 3, day: 4, hour: 5, minute: round / 60, second: round % 60)
            try Data(damaged).write(to: URL(fileURLWithPath: library.layout.incomingPath(.video, when)))
        }
        let results = IncomingSalvage(files: library.files, logger: logger).salvageAll()
        XCTAssertEqual(results.count, 40)
        for (file, outcome) in results {
            switch outcome {
            case .recovered(let path, _):
                let probe = try FFprobe.probe(path)
                XCTAssertGreaterThan(probe.video?.frameCount ?? 0, 0, "\(file) → \(path) plays")
            case .discarded, .quarantined:
                break
            case .inUse, .leftInPlace:
                XCTFail("\(file): \(outcome)")
            }
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: library.layout.incomingDirectory).filter { !$0.hasPrefix(".") }, [])
    }
}
