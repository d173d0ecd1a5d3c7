import Foundation
import KioskCore
import KioskMedia
@testable import KioskRecording
import KioskTestSupport
import Logging
import XCTest

/// The timelapse through the real graph: libx264, libavformat's fragmented MP4, and the
/// movie read back by ffprobe and decoded by the ffmpeg CLI. Capture time is a manual
/// clock, so ten minutes of a moving scene take seconds; the frames are real pictures.
final class TimelapseGraphTests: XCTestCase {
    let size = FrameSize(width: 320, height: 240)
    var format: VideoFormat { VideoFormat(size: size, pixelFormat: .yuv420, framesPerSecond: 30) }
    let day = CalendarDate(year: 2026, month: 11, day: 29)!

    /// Where the scene's box is at capture second `second`: it walks across the picture.
    static func boxX(_ second: Int) -> Int { 8 + (second * 16) % 256 }

    private func settings(_ size: FrameSize) -> VideoTrackSettings {
        VideoTrackSettings(input: VideoFormat(size: size, pixelFormat: .yuv420, framesPerSecond: 30), bitrate: 400_000)
    }

    /// Runs a timelapse branch over `seconds` of capture at 30 fps, starting at capture
    /// second `from`, each kept frame waited for; returns what the output says it wrote.
    @discardableResult
    private func run(seconds: Int, from: Int = 0, size: FrameSize? = nil, directory: String,
                     dayOf: @escaping @Sendable (MonotonicInstant) -> CalendarDate) throws -> TimelapseOutput.Status {
        let size = size ?? self.size
        let format = VideoFormat(size: size, pixelFormat: .yuv420, framesPerSecond: 30)
        let clock = ManualClock(MonotonicInstant(nanoseconds: Int64(1_000 + from) * 1_000_000_000))
        let branch = TimelapseBranch(settings: settings(size), intervalSeconds: 1, framesPerSecond: 30, directory: directory,
                                     clock: clock, logger: Logger(label: "timelapse-test"), dayOf: dayOf)
        let pool = BufferPool(bufferCapacity: format.frameByteCount, count: 2)
        var written = 0
        for second in from..<(from + seconds) {
            for tick in 0..<30 {
                let buffer = try XCTUnwrap(pool.take())
                let bytes = buffer.baseAddress.assumingMemoryBound(to: UInt8.self)
                bytes.update(repeating: 60, count: size.pixelCount)
                (bytes + size.pixelCount).update(repeating: 128, count: size.pixelCount / 2)
                let x = Self.boxX(second) * size.width / 320
                for y in 40..<min(size.height, 120) { (bytes + y * size.width + x).update(repeating: 230, count: 32 * size.width / 320) }
                buffer.byteCount = format.frameByteCount
                branch.take(VideoFrame(buffer: buffer, format: format, timestamp: clock.now(), sequence: second * 30 + tick))
                if tick == 0 {
                    // One frame a second is kept: wait until it is in the movie.
                    let deadline = Date(timeIntervalSinceNow: 20)
                    while branch.output.status.written <= written && Date() < deadline { Thread.sleep(forTimeInterval: 0.002) }
                    XCTAssertEqual(branch.output.status.written, written + 1, "frame of second \(second) written")
                    written = branch.output.status.written
                }
                clock.advance(byNanoseconds: 1_000_000_000 / 30)
            }
        }
        let status = branch.output.status
        branch.shutdown()
        XCTAssertEqual(branch.droppedFrames, 0)
        return status
    }

    /// Decodes the whole movie: no error from the decoder or the demuxer.
    private func assertPlays(_ path: String, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(try FFmpegDecode.complaints(path), "", "the decoder met no damage", file: file, line: line)
    }

    /// Frame times as the demuxer reads them.
    private func frameTimes(_ path: String) throws -> [Double] {
        let out = try Tool.run("/usr/bin/ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "packet=pts_time",
                                                    "-of", "csv=p=0", path])
        return out.stdout.split(separator: "\n").compactMap { Double($0) }
    }

    /// The box's left edge in the decoded frame `index` (luma, brightest columns).
    private func boxX(in path: String, frame index: Int, width: Int = 320, height: Int = 240) throws -> Int {
        let raw = path + ".\(index).gray"
        _ = try Tool.run("/usr/bin/ffmpeg", ["-v", "error", "-nostdin", "-y", "-i", path, "-vf", "select=eq(n\\,\(index))",
                                             "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "gray", raw])
        let pixels = [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
        XCTAssertEqual(pixels.count, width * height)
        guard pixels.count == width * height else { return -1 }
        let row = 80 * width
        return (0..<width).first { pixels[row + $0] > 150 } ?? -1
    }

    /// The sequence numbers of the movie's fragments (`mfhd`), in file order.
    private func fragmentNumbers(_ path: String) throws -> [UInt32] {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var numbers: [UInt32] = []
        var at = 0
        func be32(_ i: Int) -> UInt32 { UInt32(bytes[i]) << 24 | UInt32(bytes[i + 1]) << 16 | UInt32(bytes[i + 2]) << 8 | UInt32(bytes[i + 3]) }
        while at + 8 <= bytes.count {
            let size = Int(be32(at))
            guard size >= 8, at + size <= bytes.count else { break }
            if String(decoding: bytes[(at + 4)..<(at + 8)], as: UTF8.self) == "moof", size >= 24 {
                numbers.append(be32(at + 20))   // moof header, mfhd header, version/flags
            }
            at += size
        }
        return numbers
    }

    /// Ten minutes of a moving scene at `interval_seconds = 1` give 600 frames that play,
    /// each the scene of its second, in order, 1/30 s apart.
    func testTenMinutesAtOneSecondGiveSixHundredFramesThatPlay() throws {
        let folder = TemporaryDirectory()
        let day = day
        let status = try run(seconds: 600, directory: folder.path + "/timelapse", dayOf: { _ in day })
        let movie = folder.path + "/timelapse/20261129.mp4"
        XCTAssertEqual(status.path, movie)
        XCTAssertEqual(status.frames, 600)
        let probe = try FFprobe.probe(movie)
        XCTAssertEqual(probe.video?.frameCount, 600)
        XCTAssertEqual(probe.video?.codec_name, "h264")
        XCTAssertEqual(probe.format.durationSeconds, 20, accuracy: 0.05, "600 frames at 30 fps")
        try assertPlays(movie)
        let times = try frameTimes(movie)
        XCTAssertEqual(times.count, 600)
        for (n, time) in times.enumerated() { XCTAssertEqual(time, Double(n) / 30, accuracy: 0.001, "frame \(n)") }
        XCTAssertEqual(try fragmentNumbers(movie), (1...600).map(UInt32.init), "one fragment a frame, numbered from 1")
        let header = try MP4HeaderLength.read(movie)
        XCTAssertEqual(header.movieSeconds, 20, accuracy: 1.0 / 30, "the closed movie's header says its length")
        XCTAssertEqual(try XCTUnwrap(header.fragmentSeconds), 20, accuracy: 1.0 / 30, "and so does its mehd")
        for frame in [0, 1, 17, 599] {
            XCTAssertEqual(Double(try boxX(in: movie, frame: frame)), Double(Self.boxX(frame)), accuracy: 2, "frame \(frame) shows second \(frame)")
        }
    }

    /// A restart continues the day's movie where its last whole frame ends — after a
    /// crash tore the last fragment too — and the frames, their times and the fragment
    /// numbers run on as if one muxer had written them all.
    func testARestartContinuesTheDaysMovieAfterATornEnd() throws {
        let folder = TemporaryDirectory()
        let day = day, directory = folder.path + "/timelapse"
        try run(seconds: 40, directory: directory, dayOf: { _ in day })
        let movie = directory + "/20261129.mp4"
        XCTAssertEqual(try MP4HeaderLength.read(movie).movieSeconds, 40.0 / 30, accuracy: 1.0 / 30)
        let whole = try Data(contentsOf: URL(fileURLWithPath: movie))
        // A crash mid-write: half of a fragment's bytes after the last whole one.
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: movie))
        handle.seekToEndOfFile()
        handle.write(whole.suffix(900).prefix(450))
        try handle.close()

        let status = try run(seconds: 20, from: 40, directory: directory, dayOf: { _ in day })
        XCTAssertEqual(status.frames, 60)
        XCTAssertEqual(folder.files().filter { $0.hasSuffix(".mp4") }, ["timelapse/20261129.mp4"])
        XCTAssertEqual(try FFprobe.probe(movie).video?.frameCount, 60)
        try assertPlays(movie)
        let times = try frameTimes(movie)
        XCTAssertEqual(times.count, 60)
        for (n, time) in times.enumerated() { XCTAssertEqual(time, Double(n) / 30, accuracy: 0.001, "frame \(n)") }
        XCTAssertEqual(try fragmentNumbers(movie), (1...60).map(UInt32.init))
        let header = try MP4HeaderLength.read(movie)
        XCTAssertEqual(header.movieSeconds, 2, accuracy: 1.0 / 30, "closed again, the header counts both runs' frames")
        XCTAssertEqual(try XCTUnwrap(header.fragmentSeconds), 2, accuracy: 1.0 / 30)
        XCTAssertEqual(Double(try boxX(in: movie, frame: 39)), Double(Self.boxX(39)), accuracy: 2)
        XCTAssertEqual(Double(try boxX(in: movie, frame: 40)), Double(Self.boxX(40)), accuracy: 2, "the second run's first frame follows")
    }

    /// A camera of another size cannot go on in the same movie: the day goes on in
    /// `YYYYMMDD-2.mp4`, and both play.
    func testAnotherPictureSizeGoesOnInTheNextPart() throws {
        let folder = TemporaryDirectory()
        let day = day, directory = folder.path + "/timelapse"
        try run(seconds: 5, directory: directory, dayOf: { _ in day })
        let status = try run(seconds: 5, from: 5, size: FrameSize(width: 160, height: 120), directory: directory, dayOf: { _ in day })
        XCTAssertEqual(status.path, directory + "/20261129-2.mp4")
        XCTAssertEqual(try FFprobe.probe(directory + "/20261129.mp4").video?.frameCount, 5)
        let second = try FFprobe.probe(directory + "/20261129-2.mp4")
        XCTAssertEqual(second.video?.frameCount, 5)
        XCTAssertEqual(second.video?.width, 160)
        try assertPlays(directory + "/20261129.mp4")
        try assertPlays(directory + "/20261129-2.mp4")
    }

    /// Midnight: the first frame of the new day starts the new day's movie, with a keyframe.
    func testMidnightStartsTheNextDaysMovie() throws {
        let folder = TemporaryDirectory()
        let directory = folder.path + "/timelapse"
        let midnight = MonotonicInstant(nanoseconds: 1_007_500_000_000)   // capture second 7.5
        let today = day, tomorrow = day.adding(days: 1)
        try run(seconds: 12, directory: directory, dayOf: { $0 < midnight ? today : tomorrow })
        XCTAssertEqual(try FFprobe.probe(directory + "/20261129.mp4").video?.frameCount, 8)
        XCTAssertEqual(try FFprobe.probe(directory + "/20261130.mp4").video?.frameCount, 4)
        try assertPlays(directory + "/20261129.mp4")
        try assertPlays(directory + "/20261130.mp4")
        XCTAssertEqual(Double(try boxX(in: directory + "/20261130.mp4", frame: 0)), Double(Self.boxX(8)), accuracy: 2)
    }

    /// A file in the day's place that is not a movie is left alone; the day goes on in part 2.
    func testAForeignFileIsLeftAlone() throws {
        let folder = TemporaryDirectory()
        let day = day, directory = folder.path + "/timelapse"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let foreign = Data(repeating: 0x41, count: 10_000)
        try foreign.write(to: URL(fileURLWithPath: directory + "/20261129.mp4"))
        let status = try run(seconds: 3, directory: directory, dayOf: { _ in day })
        XCTAssertEqual(status.path, directory + "/20261129-2.mp4")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: directory + "/20261129.mp4")), foreign)
        try assertPlays(directory + "/20261129-2.mp4")
    }
}
