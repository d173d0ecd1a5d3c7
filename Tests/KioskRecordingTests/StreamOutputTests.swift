import Foundation
import KioskCore
import KioskMedia
import KioskRecording
import KioskSources
import KioskTestSupport
import Logging
import XCTest

/// The generic libavformat output, against real receivers: an HLS folder, and the
/// `ffmpeg` CLI listening for RTMP — fed by the graph's one encode, beside a recording.
final class StreamOutputTests: XCTestCase {
    let logger = Logger(label: "test")
    let format = VideoFormat(size: FrameSize(width: 320, height: 240), pixelFormat: .yuv420, framesPerSecond: 30)

    private func graph(_ folder: TemporaryDirectory) -> MediaGraph {
        MediaGraph(settings: RecorderSettings(layout: LibraryLayout(root: folder.path + "/media"),
                                              video: VideoTrackSettings(input: format, bitrate: 800_000, preset: "ultrafast"),
                                              audio: AudioTrackSettings(input: AudioFormat(sampleRate: 48_000, channels: 1))),
                   previewFramesPerSecond: 5, clock: SystemClock(), logger: logger, onEvent: { _ in })
    }

    /// A folder as the destination, as `kioskcam broadcast --to FOLDER` takes it: made if
    /// missing, `index.m3u8` inside; a folder that cannot be made is one clear error and
    /// the stream stops (no reconnect loop).
    func testAFolderIsMadeAndAnUnusableOneIsOneError() throws {
        let folder = TemporaryDirectory()
        let graph = graph(folder)
        let stream = StreamOutput(url: folder.path + "/made/here/", queueBytes: 1_000_000, clock: SystemClock(), logger: logger)
        XCTAssertEqual(stream.url, folder.path + "/made/here/index.m3u8")
        graph.encoder.add(stream)
        let camera = NumberedCamera(format: format)
        camera.start(into: graph)
        stream.start()
        XCTAssertTrue(waitUntil(20, interval: 0.05) { FileManager.default.fileExists(atPath: folder.path + "/made/here/index.m3u8") }, "\(stream.status)")
        XCTAssertEqual(stream.status.state, .live)
        stream.stop()

        FileManager.default.createFile(atPath: folder.path + "/a-file", contents: Data("x".utf8))
        let blocked = StreamOutput(url: folder.path + "/a-file/cam", queueBytes: 1_000_000, clock: SystemClock(), logger: logger)
        graph.encoder.add(blocked)
        blocked.start()
        XCTAssertTrue(waitUntil(10, interval: 0.05) { blocked.status.state == .failed }, "\(blocked.status)")
        XCTAssertTrue(blocked.status.lastError?.contains("cannot create the HLS folder \(folder.path)/a-file/cam") == true,
                      blocked.status.lastError ?? "no error")
        XCTAssertEqual(blocked.status.connects, 0, "it never tried to connect")
        blocked.stop()
        camera.stop()
        graph.shutdown()
    }

    /// An HLS playlist in a folder, any web server can serve it: it plays, with sound.
    func testHLSFolderPlaysWithSound() throws {
        let folder = TemporaryDirectory()
        let graph = graph(folder)
        let playlist = folder.path + "/live/index.m3u8"
        try FileManager.default.createDirectory(atPath: folder.path + "/live", withIntermediateDirectories: true)
        let stream = StreamOutput(url: playlist, queueBytes: 1_000_000, clock: SystemClock(), logger: logger)
        graph.encoder.add(stream)
        let camera = NumberedCamera(format: format)
        let microphone = ToneMicrophone(format: AudioFormat(sampleRate: 48_000, channels: 1), frequency: 440)
        camera.start(into: graph)
        microphone.start(into: graph)
        stream.start()
        XCTAssertTrue(waitUntil(10, interval: 0.05) { stream.status.state == .live }, "\(stream.status)")
        Thread.sleep(forTimeInterval: 5)
        stream.stop()
        camera.stop()
        microphone.stop()
        graph.shutdown()
        XCTAssertEqual(stream.status.state, .stopped)
        XCTAssertGreaterThan(stream.status.bytesSent, 50_000)
        let probe = try FFprobe.probe(playlist)
        XCTAssertEqual(probe.video?.codec_name, "h264")
        XCTAssertEqual(probe.audio?.codec_name, "aac")
        XCTAssertGreaterThan(probe.video?.frameCount ?? 0, 60)
        // The stop finished the segment going on to about a second (here, to the next
        // keyframe a second on), instead of cutting it to the frames of the instant.
        let playlistText = try String(contentsOfFile: playlist, encoding: .utf8)
        let durations = playlistText.split(separator: "\n").filter { $0.hasPrefix("#EXTINF:") }
            .compactMap { Double($0.dropFirst(8).split(separator: ",").first ?? "") }
        XCTAssertTrue(playlistText.contains("#EXT-X-ENDLIST"), playlistText)
        XCTAssertGreaterThanOrEqual(durations.last ?? 0, 0.9, "the last segment: \(playlistText)")
    }

    /// RTMP to a real receiver (the `ffmpeg` CLI listening), then the receiver goes away
    /// and comes back: the stream reconnects by itself and starts again at a keyframe,
    /// and the recording beside it is not disturbed.
    func testRTMPToAReceiverSurvivesTheReceiverGoingAway() throws {
        let folder = TemporaryDirectory()
        let graph = graph(folder)
        let port = 19_000 + Int.random(in: 0..<1000)
        let url = "rtmp://127.0.0.1:\(port)/live/test"
        func receiver(_ name: String) throws -> Process {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
            process.arguments = ["-nostdin", "-v", "error", "-listen", "1", "-f", "flv", "-i", url, "-c", "copy", "-y", folder.path + "/" + name]
            process.standardError = FileHandle.nullDevice
            try process.run()
            return process
        }
        let first = try receiver("first.flv")
        XCTAssertTrue(waitForListener(port: port, first), "waited for the ffmpeg receiver to listen on port \(port)")
        let stream = StreamOutput(url: url, queueBytes: 600_000, clock: SystemClock(), logger: logger)
        graph.encoder.add(stream)
        let camera = NumberedCamera(format: format)
        let microphone = ToneMicrophone(format: AudioFormat(sampleRate: 48_000, channels: 1), frequency: 440)
        camera.start(into: graph)
        microphone.start(into: graph)
        try graph.video.start()
        stream.start()
        XCTAssertTrue(waitUntil(10, interval: 0.05) { stream.status.state == .live }, "\(stream.status)")
        Thread.sleep(forTimeInterval: 3)
        first.terminate()   // the receiver goes away
        first.waitUntilExit()
        XCTAssertTrue(waitUntil(15, interval: 0.05) { stream.status.state == .reconnecting }, "\(stream.status)")
        let second = try receiver("second.flv")
        XCTAssertTrue(waitUntil(40, interval: 0.05) { stream.status.state == .live && stream.status.connects == 2 }, "\(stream.status)")
        Thread.sleep(forTimeInterval: 3)
        stream.stop()
        second.waitUntilExit()
        try graph.video.stop()
        XCTAssertEqual(graph.video.waitUntilIdle(timeout: 10), .idle)
        camera.stop()
        microphone.stop()
        graph.shutdown()
        for name in ["first.flv", "second.flv"] {
            let probe = try FFprobe.probe(folder.path + "/" + name)
            XCTAssertEqual(probe.video?.codec_name, "h264", name)
            XCTAssertEqual(probe.audio?.codec_name, "aac", name)
            XCTAssertGreaterThan(probe.video?.frameCount ?? 0, 30, name)
        }
        // One encode for both: the recording is whole however the stream fared.
        let recorded = try XCTUnwrap(graph.video.status.finishedFiles.first)
        XCTAssertGreaterThan(try XCTUnwrap(FFprobe.probe(recorded).video).durationSeconds, 5)
        XCTAssertEqual(graph.encoder.dropped.droppedVideoFrames, 0)
    }

    func testDestinationsAndRedaction() {
        XCTAssertEqual(PacketStreamWriter.muxerName(for: "rtmp://host/app/key"), "flv")
        XCTAssertEqual(PacketStreamWriter.muxerName(for: "rtsp://host:8554/cam"), "rtsp")
        XCTAssertEqual(PacketStreamWriter.muxerName(for: "srt://host:9000"), "mpegts")
        XCTAssertEqual(PacketStreamWriter.muxerName(for: "/var/www/live/index.m3u8"), "hls")
        XCTAssertEqual(PacketStreamWriter.redacted("rtmp://user:secret@host/live"), "rtmp://user:***@host/live")
        XCTAssertEqual(PacketStreamWriter.redacted("rtmp://host/live/key"), "rtmp://host/live/key")
    }
}
