import Foundation
import Glibc
import KioskCore
import KioskTestSupport
import XCTest

/// `kioskcam broadcast` as a user runs it: a file-backed screen with a known picture, the
/// tone microphone, and real receivers (the `ffmpeg` CLI listening for RTMP and RTSP).
final class BroadcastCommandTests: XCTestCase {
    let width = 800, height = 480

    /// A kioskcam framebuffer file (`FramebufferFile`'s header, XRGB8888) holding four
    /// coloured quadrants: red, green, blue, white — easy to recognise after H.264.
    func writeScreen(to path: String) throws {
        let stride = width * 4
        var bytes = Array("KIOSKFB1".utf8)
        for field in [4096, width, height, stride, 32, 16, 8, 8, 8, 0, 8, 0, 0] {
            let value = UInt32(field)
            bytes += [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 24)]
        }
        bytes += [UInt8](repeating: 0, count: 4096 - bytes.count)
        for y in 0..<height {
            for x in 0..<width {
                let colour: (UInt8, UInt8, UInt8) = switch (x < width / 2, y < height / 2) {
                case (true, true): (230, 20, 20)
                case (false, true): (20, 200, 20)
                case (true, false): (20, 20, 230)
                case (false, false): (240, 240, 240)
                }
                bytes += [colour.2, colour.1, colour.0, 0]   // B, G, R, X in memory
            }
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    func configuration(_ folder: TemporaryDirectory) throws -> String {
        try FileManager.default.createDirectory(atPath: folder.path + "/state", withIntermediateDirectories: true)
        try writeScreen(to: folder.path + "/screen.fb")
        let path = folder.path + "/kioskcam.toml"
        try KioskcamDaemon.configuration(root: folder.path).write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// A receiver: `ffmpeg` listening on `url`, copying what arrives into `output`.
    func receiver(_ url: String, rtsp: Bool, output: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try requiredProgram("ffmpeg", package: "ffmpeg"))
        let listen = rtsp ? ["-rtsp_flags", "listen"] : ["-listen", "1", "-f", "flv"]
        process.arguments = ["-nostdin", "-v", "error"] + listen + ["-i", url, "-c", "copy", "-y", output]
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// The broadcast, started; its peak resident memory read from /proc while it runs.
    final class Broadcast {
        let process = Process()
        let stderr: String
        init(_ arguments: [String], stderr: String) throws {
            self.stderr = stderr
            process.executableURL = URL(fileURLWithPath: Package.kioskcamBinary)
            process.arguments = ["broadcast"] + arguments
            FileManager.default.createFile(atPath: stderr, contents: nil)
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: stderr))
            process.standardError = handle
            process.standardOutput = handle
            try process.run()
        }

        /// A field of /proc/PID/status in KiB (0 once the process is gone).
        func statusKiB(_ field: String) -> Int {
            guard let text = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8),
                  let line = text.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }) else { return 0 }
            return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
        }

        /// Waits for the end, sampling memory; returns the peaks in KiB: `resident` is
        /// VmHWM (libraries' shared file pages included), `anonymous` the highest RssAnon
        /// seen — what a memory cgroup cannot reclaim, and so what its limit kills for.
        func finish(timeout: Double) -> (resident: Int, anonymous: Int) {
            var resident = 0, anonymous = 0
            let deadline = Date(timeIntervalSinceNow: timeout)
            while process.isRunning, Date() < deadline {
                resident = max(resident, statusKiB("VmHWM"))
                anonymous = max(anonymous, statusKiB("RssAnon"))
                Thread.sleep(forTimeInterval: 0.1)
            }
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            return (resident, anonymous)
        }

        var log: String { (try? String(contentsOfFile: stderr, encoding: .utf8)) ?? "" }
    }

    /// One decoded frame of `path` at `seconds`, as 800x480 RGB24.
    func frame(of path: String, at seconds: Double) throws -> [UInt8] {
        let ffmpeg = try requiredProgram("ffmpeg", package: "ffmpeg")
        let raw = path + ".rgb"
        _ = try Tool.run(ffmpeg, ["-nostdin", "-v", "error", "-ss", String(seconds), "-i", path, "-frames:v", "1",
                                  "-s", "\(width)x\(height)", "-pix_fmt", "rgb24", "-f", "rawvideo", "-y", raw])
        return Array(try Data(contentsOf: URL(fileURLWithPath: raw)))
    }

    /// Mean absolute difference per channel of two RGB24 pictures.
    func difference(_ a: [UInt8], _ b: [UInt8]) -> Double {
        guard a.count == b.count, !a.isEmpty else { return .infinity }
        var total = 0
        for index in a.indices { total += abs(Int(a[index]) - Int(b[index])) }
        return Double(total) / Double(a.count)
    }

    /// The mean volume of `path`'s sound in dBFS (ffmpeg's volumedetect).
    func meanVolume(_ path: String) throws -> Double {
        let ffmpeg = try requiredProgram("ffmpeg", package: "ffmpeg")
        let output = try Tool.run(ffmpeg, ["-nostdin", "-i", path, "-vn", "-af", "volumedetect", "-f", "null", "-"])
        let line = try XCTUnwrap(output.stderr.split(separator: "\n").first { $0.contains("mean_volume:") })
        let number = line.split(separator: ":").last?.split(separator: " ").first ?? ""
        return try XCTUnwrap(Double(number), String(line))
    }

    /// The screen with sound to RTMP and RTSP receivers and into the library at once: each
    /// gets what the screen showed (compared with `kioskcam screenshot`), with sound; the
    /// library file is in screen/YYYYMMDD/; the state file says stopped with the bytes.
    func testScreenGoesToRTMPAndRTSPReceiversAndTheLibrary() throws {
        let folder = TemporaryDirectory()
        let config = try configuration(folder)
        let rtmp = "rtmp://127.0.0.1:\(try freeLoopbackPort())/live/test"
        let rtsp = "rtsp://127.0.0.1:\(try freeLoopbackPort())/live"
        let flv = folder.path + "/out.flv", mkv = folder.path + "/out.mkv"
        let receivers = [try receiver(rtmp, rtsp: false, output: flv), try receiver(rtsp, rtsp: true, output: mkv)]
        defer { for receiver in receivers where receiver.isRunning { receiver.terminate() } }
        Thread.sleep(forTimeInterval: 1)   // listening
        let statusFile = folder.path + "/state/broadcast.json"
        let broadcast = try Broadcast(["--config", config, "--source", "screen", "--to", "library", "--to", rtmp, "--to", rtsp,
                                       "--duration", "8s"], stderr: folder.path + "/broadcast.log")
        var sawLive = false
        let deadline = Date(timeIntervalSinceNow: 6)
        while Date() < deadline, !sawLive {
            if let data = FileManager.default.contents(atPath: statusFile), let status = BroadcastStatus.decode(data) {
                sawLive = status.state == .live
            }
            Thread.sleep(forTimeInterval: 0.2)
        }
        let peak = broadcast.finish(timeout: 60)
        XCTAssertEqual(broadcast.process.terminationStatus, 0, broadcast.log)
        XCTAssertTrue(sawLive, "the state file said live: \(broadcast.log)")
        for receiver in receivers { receiver.waitUntilExit() }

        let screenshot = folder.path + "/screen.png"
        _ = try Tool.run(Package.kioskcamBinary, ["screenshot", "--config", config, "-o", screenshot])
        let expected = try frame(of: screenshot, at: 0)
        let library = broadcast.log.split(separator: "\n").map(String.init).filter { $0.hasPrefix("/") && $0.hasSuffix(".mp4") }
        XCTAssertEqual(library.count, 1, broadcast.log)
        let file = try XCTUnwrap(library.first)
        XCTAssertTrue(file.range(of: #"/media/screen/\d{8}/\d{6}\.mp4$"#, options: .regularExpression) != nil, file)
        for path in [flv, mkv, file] {
            let probe = try FFprobe.probe(path)
            XCTAssertEqual(probe.video?.codec_name, "h264", path)
            XCTAssertEqual(probe.video?.width, width, path)
            XCTAssertEqual(probe.audio?.codec_name, "aac", path)
            // 10 fps: about 8 s arrive (the receivers may miss the first GOP's second).
            XCTAssertGreaterThan(probe.video?.frameCount ?? 0, 45, path)
            XCTAssertLessThan(try difference(frame(of: path, at: 2), expected), 8, "\(path) shows what the screen showed")
            XCTAssertGreaterThan(try meanVolume(path), -40, "\(path) has the tone")
        }
        let status = try XCTUnwrap(FileManager.default.contents(atPath: statusFile).flatMap(BroadcastStatus.decode))
        XCTAssertEqual(status.state, .stopped)
        XCTAssertEqual(status.destinations.count, 3)
        XCTAssertGreaterThan(status.bytes, 200_000)
        XCTAssertEqual(status.droppedGOPs, 0)
        XCTAssertGreaterThan(peak.anonymous, 0)
        XCTAssertLessThan(peak.anonymous, 40 * 1024, "peak anonymous memory \(peak.anonymous) KiB (VmHWM \(peak.resident) KiB)")
    }

    /// The RTMP receiver goes away for 10 s mid-stream: the broadcast reconnects by itself,
    /// the library file beside it has no gap, and memory stays under the cap.
    func testTheReceiverGoingAwayForTenSecondsLeavesNoGapInTheFile() throws {
        let folder = TemporaryDirectory()
        let config = try configuration(folder)
        let rtmp = "rtmp://127.0.0.1:\(try freeLoopbackPort())/live/test"
        let first = try receiver(rtmp, rtsp: false, output: folder.path + "/first.flv")
        Thread.sleep(forTimeInterval: 1)
        let broadcast = try Broadcast(["--config", config, "--to", "library", "--to", rtmp, "--duration", "30s"],
                                      stderr: folder.path + "/broadcast.log")
        Thread.sleep(forTimeInterval: 5)
        first.terminate()
        first.waitUntilExit()
        Thread.sleep(forTimeInterval: 10)
        let second = try receiver(rtmp, rtsp: false, output: folder.path + "/second.flv")
        defer { if second.isRunning { second.terminate() } }
        let peak = broadcast.finish(timeout: 90)
        second.waitUntilExit()
        XCTAssertEqual(broadcast.process.terminationStatus, 0, broadcast.log)
        XCTAssertLessThan(peak.anonymous, 40 * 1024, "peak anonymous memory \(peak.anonymous) KiB (VmHWM \(peak.resident) KiB)")
        let reconnected = try FFprobe.probe(folder.path + "/second.flv")
        XCTAssertEqual(reconnected.video?.codec_name, "h264", "reconnected: \(broadcast.log)")
        XCTAssertGreaterThan(reconnected.video?.frameCount ?? 0, 20, "reconnected: \(broadcast.log)")
        let file = try XCTUnwrap(broadcast.log.split(separator: "\n").map(String.init).first { $0.hasPrefix("/") && $0.hasSuffix(".mp4") }, broadcast.log)
        let probe = try FFprobe.probe(file)
        // No gap: 30 s at 10 fps in the file however the network fared.
        XCTAssertEqual(probe.format.durationSeconds, 30, accuracy: 1.5)
        XCTAssertGreaterThan(probe.video?.frameCount ?? 0, 270)
        let status = try XCTUnwrap(FileManager.default.contents(atPath: folder.path + "/state/broadcast.json").flatMap(BroadcastStatus.decode))
        let stream = try XCTUnwrap(status.destinations.first { $0.name.hasPrefix("rtmp://") })
        XCTAssertGreaterThan(stream.bytes, 100_000)
    }

    /// The daemon starts and stops the broadcast over the socket (`broadcast-start`,
    /// `broadcast-stop`) and shows what it reports in `status`; the camera is refused
    /// while the daemon holds it.
    func testTheDaemonStartsAndStopsTheBroadcastAndShowsItsState() throws {
        let folder = TemporaryDirectory()
        let daemon = try KioskcamDaemon(root: folder.path, sections: "")
        defer { _ = daemon.terminate() }
        let rtmp = "rtmp://127.0.0.1:\(try freeLoopbackPort())/live/test"
        let flv = folder.path + "/daemon.flv"
        let listener = try receiver(rtmp, rtsp: false, output: flv)
        defer { if listener.isRunning { listener.terminate() } }
        // `watch`: the broadcast's state changes arrive as events.
        let watcher = Process()
        watcher.executableURL = URL(fileURLWithPath: Package.kioskcamBinary)
        watcher.arguments = ["watch", "--config", daemon.config, "--events", "broadcast", "--json", "--count", "2"]
        let watched = folder.path + "/watch.out"
        FileManager.default.createFile(atPath: watched, contents: nil)
        watcher.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: watched))
        try watcher.run()
        defer { if watcher.isRunning { watcher.terminate() } }
        Thread.sleep(forTimeInterval: 1)
        let started = try daemon.kioskcam(["broadcast-start", "--to", "library", "--to", rtmp])
        XCTAssertEqual(started.status, 0, started.stderr)
        let again = try daemon.kioskcam(["broadcast-start", "--to", "library"])
        XCTAssertNotEqual(again.status, 0)
        XCTAssertTrue(again.stderr.contains("already running"), again.stderr)
        var live = false
        let deadline = Date(timeIntervalSinceNow: 20)
        while Date() < deadline, !live {
            live = daemon.status()["broadcast_state"] as? String == "live"
            Thread.sleep(forTimeInterval: 0.3)
        }
        XCTAssertTrue(live, "status: \(daemon.status()) log: \(daemon.logText())")
        Thread.sleep(forTimeInterval: 3)
        let events = (try? String(contentsOfFile: watched, encoding: .utf8)) ?? ""
        XCTAssertTrue(events.contains(#""event":"broadcast""#) && events.contains(#""state":"live""#), events)
        let text = try daemon.kioskcam(["status"])
        XCTAssertTrue(text.stdout.contains("broadcast:    ● LIVE screen 800x480 10 fps → 2"), text.stdout)
        let camera = try Tool.run(Package.kioskcamBinary, ["broadcast", "--config", daemon.config, "--source", "camera", "--to", "library"],
                                  allowFailure: true)
        XCTAssertEqual(camera.status, 75, camera.stderr)
        XCTAssertTrue(camera.stderr.contains("[stream] url"), camera.stderr)
        let stopped = try daemon.kioskcam(["broadcast-stop"])
        XCTAssertEqual(stopped.status, 0, stopped.stderr)
        XCTAssertEqual(daemon.status()["broadcast_state"] as? String, "stopped")
        XCTAssertNotEqual(try daemon.kioskcam(["broadcast-stop"]).status, 0, "nothing left to stop")
        listener.waitUntilExit()
        XCTAssertEqual(try FFprobe.probe(flv).video?.codec_name, "h264")
        let screens = folder.files().filter { $0.hasPrefix("media/screen/") && $0.hasSuffix(".mp4") }.map { folder.path + "/" + $0 }
        XCTAssertEqual(screens.count, 1, "\(folder.files())")
        XCTAssertGreaterThan(try FFprobe.probe(try XCTUnwrap(screens.first)).format.durationSeconds, 2)
    }

    func testBadRequestsNameTheFix() throws {
        let folder = TemporaryDirectory()
        let config = try configuration(folder)
        let cases: [([String], String)] = [
            ([], "give at least one --to"),
            (["--to", "http://example.com/live"], "unsupported scheme"),
            (["--to", "library", "--fps", "30"], "2–15"),
            (["--to", "library", "--source", "window"], "use screen or camera"),
            (["--to", "library", "--duration", "soon"], "--duration soon"),
        ]
        for (arguments, message) in cases {
            let result = try Tool.run(Package.kioskcamBinary, ["broadcast", "--config", config] + arguments, allowFailure: true)
            XCTAssertEqual(result.status, 64, "\(arguments): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
    }
}
