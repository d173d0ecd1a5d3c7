import Foundation
@testable import KioskCore
import KioskTestSupport
import XCTest

@testable import KioskMedia

/// Finished files tell players their real length and bitrate (issue 29): real libx264,
/// AAC and libavformat, read by three players' own code — GStreamer (gst-discoverer),
/// MediaInfo and ffprobe — and by a walk of the boxes.
final class HeaderTruthTests: XCTestCase {
    let format = VideoFormat(size: FrameSize(width: 320, height: 240), pixelFormat: .yuyv, framesPerSecond: 30)
    let audioFormat = AudioFormat(sampleRate: 48_000, channels: 1)

    /// `frames` frames of a moving pattern with a tone, 1/30 s apart; or sound only.
    func record(_ path: String, frames: Int, video: Bool = true) throws -> MP4Writer {
        let writer = try MP4Writer(settings: MP4WriterSettings(
            path: path, video: video ? VideoTrackSettings(input: format) : nil, audio: AudioTrackSettings(input: audioFormat)))
        let renderer = TestPatternRenderer(format: format)
        var pixels = [UInt8](repeating: 0, count: format.frameByteCount)
        var tone = ToneGenerator(format: audioFormat, frequency: 1000)
        var samples = [Int16](repeating: 0, count: 1600)
        for index in 0..<frames {
            if video {
                pixels.withUnsafeMutableBytes { renderer.render(into: $0, sequence: index, caption: Array("\(index)".utf8)) }
                try pixels.withUnsafeBytes { try writer.writeVideo($0, nanosecondsFromStart: Int64(index) * 1_000_000_000 / 30) }
            }
            samples.withUnsafeMutableBufferPointer { tone.fill($0, frameCount: 1600) }
            try samples.withUnsafeBufferPointer { try writer.writeAudio($0) }
        }
        try writer.finish()
        return writer
    }

    func testPlayersReportTheRealLengthAndTheHeaderTheRealBitrate() throws {
        let folder = TemporaryDirectory()
        for (name, video) in [("clip.mp4", true), ("sound.m4a", false)] {
            let path = folder.path + "/" + name
            let writer = try record(path, frames: 150, video: video)
            let real = writer.secondsWritten
            XCTAssertEqual(real, 5.0, accuracy: 0.03, name)
            // Within one frame (a video frame, or 1024 AAC samples for sound).
            let frame = video ? 1.0 / 30 : 1024.0 / 48_000
            for (player, seconds) in try PlayersRead.durations(path) {
                XCTAssertEqual(seconds, real, accuracy: frame, "\(name): \(player) says \(seconds) s for \(real) s")
            }
            let rates = try PlayersRead.headerBitrates(path, box: video ? "btrt" : "esds")
            XCTAssertEqual(rates.count, video ? 2 : 1, name)
            let streams = video ? ["v", "a"] : ["a"]
            for (rate, stream) in zip(rates, streams) {
                let measured = try PlayersRead.packetBytes(path, stream) * 8 / real
                XCTAssertEqual(Double(rate.average), measured, accuracy: measured * 0.10, "\(name) \(stream): average")
                XCTAssertGreaterThanOrEqual(Double(rate.max), Double(rate.average) * 0.99, "\(name) \(stream): peak ≥ average")
                XCTAssertLessThan(Double(rate.max), measured * 4, "\(name) \(stream): not the configured bitrate")
            }
        }
    }

    func testFragmentsAreNumberedFromOneAndTheIndexPointsAtThem() throws {
        let folder = TemporaryDirectory()
        let path = folder.path + "/clip.mp4"
        _ = try record(path, frames: 100)
        let file = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let top = MP4HeaderTruth.boxes(in: file[...])
        XCTAssertEqual(top.last.map { Int($0.end) }, file.count, "every byte is in a whole box")
        let moofs = top.filter { $0.type == "moof" }
        XCTAssertGreaterThanOrEqual(moofs.count, 3)
        // mfhd: size, type, version and flags, then the sequence number.
        let numbers = moofs.map { MP4HeaderTruth.read32(file[...], $0.start + 8 + 12) }
        XCTAssertEqual(numbers, Array(1...UInt32(moofs.count)))
        // The fragment index at the end (mfra/tfra, version 1: time and offset 64-bit each)
        // records where each fragment starts: the room added to the header is counted in.
        let mfra = try XCTUnwrap(top.last { $0.type == "mfra" })
        var offsets: Set<Int> = []
        for tfra in MP4HeaderTruth.children("tfra", in: file[(mfra.start + 8)..<mfra.end]) {
            let body = tfra.start + 8
            XCTAssertEqual(file[body], 1, "version 1")
            let lengths = MP4HeaderTruth.read32(file[...], body + 8)
            let count = Int(MP4HeaderTruth.read32(file[...], body + 12))
            let entry = 16 + Int((lengths >> 4) & 3) + Int((lengths >> 2) & 3) + Int(lengths & 3) + 3
            for index in 0..<count {
                let at = body + 16 + index * entry + 8
                offsets.insert(Int(MP4HeaderTruth.read32(file[...], at)) << 32 | Int(MP4HeaderTruth.read32(file[...], at + 4)))
            }
        }
        XCTAssertFalse(offsets.isEmpty)
        XCTAssertTrue(offsets.isSubset(of: Set(moofs.map(\.start))), "every index entry is a fragment's start")
    }

    /// The header is written in place, field by field, then the `mehd`'s type: a power cut
    /// between any two writes leaves a file every player opens, with every frame.
    func testAPowerCutDuringTheHeaderWriteLeavesAPlayableFile() throws {
        let folder = TemporaryDirectory()
        let path = folder.path + "/clip.mp4"
        _ = try record(path, frames: 60)
        let finished = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let any = [MP4HeaderTruth.Track(kind: .video, endNanoseconds: 1, bytes: 1, peakBitsPerSecond: 1, largestSample: 1),
                   MP4HeaderTruth.Track(kind: .audio, endNanoseconds: 1, bytes: 1, peakBitsPerSecond: 1, largestSample: 1)]
        // The file as it was before the header was touched: the room still `free`, fields 0.
        let mehd = try XCTUnwrap(FragmentedMP4Scan.box(at: ["moov", "mvex", "mehd"], inside: finished[...]))
        var state = finished
        state.replaceSubrange(mehd.startIndex..<mehd.endIndex, with: [0, 0, 0, 20] + Array("free".utf8) + [UInt8](repeating: 0, count: 12))
        let writes = MP4HeaderTruth.patches(initSegment: Array(state.prefix(4096)), tracks: any)
        XCTAssertGreaterThanOrEqual(writes.fields.count, 8, "mvhd, 2 × (tkhd, mdhd, btrt), the mehd's body")
        XCTAssertEqual(writes.commit.count, 1)
        for patch in writes.fields {
            state.replaceSubrange(Int(patch.offset)..<(Int(patch.offset) + patch.bytes.count), with: [UInt8](repeating: 0, count: patch.bytes.count))
        }
        let discoverer = try requiredProgram("gst-discoverer-1.0", package: "gstreamer1.0-plugins-base-apps")
        for (step, patch) in ([nil] + (writes.fields + writes.commit).map(Optional.some)).enumerated() {
            if let patch {
                let range = Int(patch.offset)..<(Int(patch.offset) + patch.bytes.count)
                state.replaceSubrange(range, with: finished[range])
            }
            let cut = folder.path + "/cut-\(step).mp4"
            try Data(state).write(to: URL(fileURLWithPath: cut))
            let video = try XCTUnwrap(FFprobe.probe(cut).video, "after \(step) writes")
            XCTAssertEqual(video.frameCount, 60, "after \(step) writes")
            let gst = try Tool.run(discoverer, [cut], allowFailure: true)
            XCTAssertEqual(gst.status, 0, "after \(step) writes: \(gst.stdout)")
        }
        XCTAssertEqual(state, finished, "the last write completes the header as finish() wrote it")
    }
}
