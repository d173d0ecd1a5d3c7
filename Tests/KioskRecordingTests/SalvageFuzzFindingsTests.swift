import Foundation
import KioskCore
import KioskMedia
import KioskRecording
import KioskTestSupport
import Logging
import XCTest

/// Files FuzzSalvage (scripts/fuzz) found start-up salvage mishandling, each rebuilt from
/// a real interrupted recording with the one change that matters.
final class SalvageFuzzFindingsTests: XCTestCase {
    let format = VideoFormat(size: FrameSize(width: 160, height: 120), pixelFormat: .yuyv, framesPerSecond: 30)
    let time = LocalTimestamp(year: 2026, month: 3, day: 4, hour: 5, minute: 6, second: 7)

    /// An interrupted recording as `kill -9` leaves it: `frames` frames, no trailer.
    private func writeInterruptedRecording(_ path: String, frames: Int = 60) throws {
        let writer = try MP4Writer(settings: MP4WriterSettings(path: path, video: VideoTrackSettings(input: format), audio: nil))
        let renderer = TestPatternRenderer(format: format)
        var pixels = [UInt8](repeating: 0, count: format.frameByteCount)
        for index in 0..<frames {
            pixels.withUnsafeMutableBytes { renderer.render(into: $0, sequence: index, caption: []) }
            try pixels.withUnsafeBytes { try writer.writeVideo($0, nanosecondsFromStart: Int64(index) * 33_333_333) }
        }
        writer.abandon()
    }

    /// Replaces the first `old` box type in the file with `new` (same length).
    private func renameBox(_ old: String, to new: String, in path: String) throws {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let type = Array(old.utf8)
        let at = try XCTUnwrap((0...(bytes.count - type.count)).first { Array(bytes[$0..<($0 + type.count)]) == type })
        bytes.replaceSubrange(at..<(at + type.count), with: Array(new.utf8))
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// A track whose codec set-up is gone (one letter of its `minf` box changed): reading
    /// it back fails, and so does re-muxing it, because the muxer refuses a stream without
    /// a codec (EINVAL). That refusal was taken for an error that may pass, so the file
    /// stayed in the temp area and was salvaged again at the next two starts before
    /// quarantine took it. It cannot pass: the file goes to quarantine at once.
    func testAStreamTheMuxerRefusesIsQuarantinedAtOnceNotRetried() throws {
        let folder = TemporaryDirectory()
        let layout = LibraryLayout(root: folder.path + "/media")
        let files = LibraryFiles(layout: layout)
        try files.prepare()
        let temp = layout.incomingPath(.video, time)
        try writeInterruptedRecording(temp)
        try renameBox("minf", to: "mpnf", in: temp)

        let results = IncomingSalvage(files: files, logger: Logger(label: "test")).salvageAll()
        guard case .quarantined(let path, let reason)? = results.first?.outcome, results.count == 1 else {
            return XCTFail("\(results)")
        }
        XCTAssertEqual(path, layout.quarantineDirectory + "/video-20260304-050607.mp4")
        XCTAssertTrue(reason.contains("cannot be read back"), reason)
        XCTAssertTrue(FileManager.default.fileExists(atPath: path + ".txt"))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: layout.incomingDirectory), [],
                       "nothing left to try again, no attempt counter")
    }

    /// Offsets of every `type` box in the file, in order.
    private func boxOffsets(_ type: String, in bytes: [UInt8]) -> [Int] {
        let name = Array(type.utf8)
        return (4...(bytes.count - 4)).filter { Array(bytes[$0..<($0 + 4)]) == name }.map { $0 - 4 }
    }

    /// Sets a `trun` to "no per-sample fields" and `samples` samples.
    private func claimSamples(_ samples: UInt32, trunAt offset: Int, in bytes: inout [UInt8]) {
        bytes.replaceSubrange((offset + 8)..<(offset + 16), with: [0, 0, 0, 0] + withUnsafeBytes(of: samples.bigEndian, Array.init))
    }

    /// A fragment whose `trun` claims 16.9 million samples in a few kilobytes: libavformat
    /// allocated an index entry for each before reading one (600 MB for a 3 KB file,
    /// the OOM killer on a 1 GB board at every start). The scan now ends before such a
    /// fragment, so libavformat never reads it: what came before is recovered.
    func testAFragmentClaimingMillionsOfSamplesIsCutOffWithoutTheMemory() throws {
        let folder = TemporaryDirectory()
        let layout = LibraryLayout(root: folder.path + "/media")
        let files = LibraryFiles(layout: layout)
        try files.prepare()
        let temp = layout.incomingPath(.video, time)
        try writeInterruptedRecording(temp, frames: 90)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: temp)))
        let moofs = boxOffsets("moof", in: bytes)
        XCTAssertGreaterThanOrEqual(moofs.count, 2)
        claimSamples(16_908_296, trunAt: try XCTUnwrap(boxOffsets("trun", in: bytes).first { $0 > moofs[1] }), in: &bytes)
        try Data(bytes).write(to: URL(fileURLWithPath: temp))

        let results = IncomingSalvage(files: files, logger: Logger(label: "test")).salvageAll()
        guard case .recovered(let path, let seconds)? = results.first?.outcome, results.count == 1 else {
            return XCTFail("\(results)")
        }
        XCTAssertEqual(seconds, 1, accuracy: 0.05, "the first fragment, one second")
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int, moofs[1], "cut before the damage")
    }

    /// The same damage in the only fragment: the file held media, so it is kept in
    /// quarantine for a person, not discarded as if it had never held any.
    func testADamagedOnlyFragmentIsQuarantinedNotDiscarded() throws {
        let folder = TemporaryDirectory()
        let layout = LibraryLayout(root: folder.path + "/media")
        let files = LibraryFiles(layout: layout)
        try files.prepare()
        let temp = layout.incomingPath(.video, time)
        try writeInterruptedRecording(temp, frames: 45)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: temp)))
        claimSamples(16_908_296, trunAt: try XCTUnwrap(boxOffsets("trun", in: bytes).first), in: &bytes)
        try Data(bytes).write(to: URL(fileURLWithPath: temp))

        let results = IncomingSalvage(files: files, logger: Logger(label: "test")).salvageAll()
        guard case .quarantined(let path, let reason)? = results.first?.outcome, results.count == 1 else {
            return XCTFail("\(results)")
        }
        XCTAssertTrue(reason.contains("damaged"), reason)
        XCTAssertEqual(FileManager.default.contents(atPath: path).map { [UInt8]($0) }, bytes, "kept whole")
    }
}
