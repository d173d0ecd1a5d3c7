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
    /// `stride` wider than a row pads the rows, as many panels' framebuffers do.
    func writeScreen(to path: String, size: FrameSize? = nil, stride: Int? = nil) throws {
        let (width, height) = (size?.width ?? width, size?.height ?? height)
        let stride = stride ?? width * 4
        var bytes = Array("KIOSKFB1".utf8)
        for field in [4096, width, height, stride, 32, 16, 8, 8, 8, 0, 8, 0, 0] {
            let value = UInt32(field)
            bytes += [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 24)]
        }
        bytes += [UInt8](repeating: 0, count: 4096 - bytes.count)
        bytes.reserveCapacity(4096 + stride * height)
        for y in 0..<height {
            var row = [UInt8](repeating: 0, count: stride)
            for x in 0..<width {
                let colour: (UInt8, UInt8, UInt8) = switch (x < width / 2, y < height / 2) {
                case (true, true): (230, 20, 20)
                case (false, true): (20, 200, 20)
                case (true, false): (20, 20, 230)
                case (false, false): (240, 240, 240)
                }
                (row[x * 4], row[x * 4 + 1], row[x * 4 + 2]) = (colour.2, colour.1, colour.0)   // B, G, R, X in memory
            }
            bytes += row
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

    /// How an `ffmpeg` receiver waits for the broadcast.
    enum Listener {
        case rtmp, rtsp, srt

        func input(_ url: String) -> [String] {
            switch self {
            case .rtmp: ["-listen", "1", "-f", "flv", "-i", url]
            case .rtsp: ["-rtsp_flags", "listen", "-i", url]
            // SRT's listener mode is an option of the URL; the broadcast calls (the default).
            case .srt: ["-f", "mpegts", "-i", url + "?mode=listener"]
            }
        }
    }

    /// A receiver: `ffmpeg` listening on `url`, copying what arrives into `output`.
    func receiver(_ url: String, _ listener: Listener, output: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try requiredProgram("ffmpeg", package: "ffmpeg"))
        process.arguments = ["-nostdin", "-v", "error"] + listener.input(url) + ["-c", "copy", "-y", output]
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Waits until `receiver` (an `ffmpeg` listener) listens on `port` (TCP) or has bound it
    /// (UDP, for SRT): `waitForListener`.
    func waitForReceiver(port: Int, udp: Bool = false, _ receiver: Process, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertTrue(waitForListener(port: port, udp: udp, receiver),
                      "waited for the ffmpeg receiver to \(udp ? "bind UDP" : "listen on TCP") port \(port) (running: \(receiver.isRunning))",
                      file: file, line: line)
    }

    /// The seconds of media an HLS playlist lists (the sum of its #EXTINF durations).
    func listedSeconds(_ playlist: String) -> Double {
        let text = (try? String(contentsOfFile: playlist, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").filter { $0.hasPrefix("#EXTINF:") }
            .compactMap { Double($0.dropFirst("#EXTINF:".count).split(separator: ",").first ?? "") }.reduce(0, +)
    }

    /// The broadcast, started; its peak resident memory read from /proc while it runs.
    final class Broadcast {
        /// The shipped screen broadcast (scripts/build-broadcast's kioskcam-broadcast, against
        /// its own FFmpeg), when KIOSKCAM_BROADCAST_PROGRAM names it: scripts/test runs the
        /// screen tests again with it. Otherwise `kioskcam broadcast` of this build.
        static let shippedProgram = ProcessInfo.processInfo.environment["KIOSKCAM_BROADCAST_PROGRAM"].flatMap { $0.isEmpty ? nil : $0 }

        let process = Process()
        let stderr: String
        init(_ arguments: [String], stderr: String) throws {
            self.stderr = stderr
            if let program = Self.shippedProgram {
                process.executableURL = URL(fileURLWithPath: program)
                process.arguments = arguments
            } else {
                process.executableURL = URL(fileURLWithPath: Package.kioskcamBinary)
                process.arguments = ["broadcast"] + arguments
            }
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

    /// The memory a broadcast may use: at most 40 MiB that a cgroup cannot reclaim, always;
    /// and for the shipped program sending an 800x480 screen (the issue's target), a peak
    /// RSS, its file pages included, under the unit's 50 MB cap.
    func assertWithinBudget(_ peak: (resident: Int, anonymous: Int), checksResident: Bool = true,
                            file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertGreaterThan(peak.anonymous, 0, file: file, line: line)
        XCTAssertLessThan(peak.anonymous, 40 * 1024, "peak anonymous memory \(peak.anonymous) KiB (VmHWM \(peak.resident) KiB)",
                          file: file, line: line)
        if Broadcast.shippedProgram != nil, checksResident {
            XCTAssertLessThan(peak.resident, 50 * 1000 * 1000 / 1024, "VmHWM \(peak.resident) KiB of the shipped program",
                              file: file, line: line)
        }
        print("broadcast memory: VmHWM \(peak.resident) KiB, peak anonymous \(peak.anonymous) KiB (\(Broadcast.shippedProgram ?? "kioskcam broadcast"))")
    }

    /// One decoded frame of `path` at `seconds`, as RGB24 of `size` (800x480 unless said).
    func frame(of path: String, at seconds: Double, size: FrameSize? = nil) throws -> [UInt8] {
        let ffmpeg = try requiredProgram("ffmpeg", package: "ffmpeg")
        let raw = path + ".rgb"
        let size = size ?? FrameSize(width: width, height: height)
        _ = try Tool.run(ffmpeg, ["-nostdin", "-v", "error", "-ss", String(seconds), "-i", path, "-frames:v", "1",
                                  "-s", size.description, "-pix_fmt", "rgb24", "-f", "rawvideo", "-y", raw])
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
        let rtmpPort = try freeLoopbackPort(), rtspPort = try freeLoopbackPort()
        let rtmp = "rtmp://127.0.0.1:\(rtmpPort)/live/test"
        let rtsp = "rtsp://127.0.0.1:\(rtspPort)/live"
        let flv = folder.path + "/out.flv", mkv = folder.path + "/out.mkv"
        let receivers = [try receiver(rtmp, .rtmp, output: flv), try receiver(rtsp, .rtsp, output: mkv)]
        defer { for receiver in receivers where receiver.isRunning { receiver.terminate() } }
        try waitForReceiver(port: rtmpPort, receivers[0])
        try waitForReceiver(port: rtspPort, receivers[1])
        let statusFile = folder.path + "/state/broadcast.json"
        let broadcast = try Broadcast(["--config", config, "--source", "screen", "--to", "library", "--to", rtmp, "--to", rtsp,
                                       "--duration", "8s"], stderr: folder.path + "/broadcast.log")
        var sawLive = false
        let deadline = Date(timeIntervalSinceNow: 30)
        while Date() < deadline, !sawLive, broadcast.process.isRunning {
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
        assertWithinBudget(peak)
    }

    /// Checks that `path` decodes as H.264 + AAC lasting about `seconds`, showing what
    /// the screen showed (`expected`, a decoded screenshot), with the tone.
    func assertArrived(_ path: String, seconds: Double, expected: [UInt8], file: StaticString = #filePath, line: UInt = #line) throws {
        let probe = try FFprobe.probe(path)
        print("arrived: \(path): \(probe.format.durationSeconds) s, \(probe.video?.frameCount ?? 0) frames")
        XCTAssertEqual(probe.video?.codec_name, "h264", path, file: file, line: line)
        XCTAssertEqual(probe.video?.width, width, path, file: file, line: line)
        XCTAssertEqual(probe.audio?.codec_name, "aac", path, file: file, line: line)
        // A receiver may start at the second keyframe (2 s GOPs) and lose the last packets in flight.
        XCTAssertEqual(probe.format.durationSeconds, seconds, accuracy: 2.1, path, file: file, line: line)
        XCTAssertGreaterThan(probe.video?.frameCount ?? 0, Int((seconds - 2.1) * 10), path, file: file, line: line)
        XCTAssertLessThan(try difference(frame(of: path, at: 1), expected), 8, "\(path) shows what the screen showed",
                          file: file, line: line)
        XCTAssertGreaterThan(try meanVolume(path), -40, "\(path) has the tone", file: file, line: line)
    }

    /// The screen as a decoded screenshot (`kioskcam screenshot`), to compare with.
    func screenshot(_ config: String, _ folder: TemporaryDirectory) throws -> [UInt8] {
        let path = folder.path + "/screen.png"
        _ = try Tool.run(Package.kioskcamBinary, ["screenshot", "--config", config, "-o", path])
        return try frame(of: path, at: 0)
    }

    /// The HLS playlist's text; it must exist.
    func playlist(_ path: String) throws -> String {
        try XCTUnwrap(try? String(contentsOfFile: path, encoding: .utf8), "no playlist at \(path)")
    }

    /// SRT (to the `ffmpeg` CLI as an SRT listener) and an HLS folder that did not exist
    /// yet, at once, for `--duration 8s`: both decode as H.264 + AAC of about 8 s showing
    /// the screen, and the playlist is finished (#EXT-X-ENDLIST) when the duration ends.
    func testScreenGoesToAnSRTListenerAndAnHLSFolder() throws {
        let folder = TemporaryDirectory()
        let config = try configuration(folder)
        // SRT is UDP: a port the kernel just gave out for TCP is as good as any on loopback.
        let srtPort = try freeLoopbackPort()
        let srt = "srt://127.0.0.1:\(srtPort)"
        let ts = folder.path + "/out.ts"
        let listener = try receiver(srt, .srt, output: ts)
        defer { if listener.isRunning { listener.terminate() } }
        try waitForReceiver(port: srtPort, udp: true, listener)
        let hls = folder.path + "/www/live"
        let broadcast = try Broadcast(["--config", config, "--to", srt, "--to", hls, "--duration", "8s"],
                                      stderr: folder.path + "/broadcast.log")
        let peak = broadcast.finish(timeout: 60)
        XCTAssertEqual(broadcast.process.terminationStatus, 0, broadcast.log)
        // The listener sees the caller hang up and ends its file.
        let deadline = Date(timeIntervalSinceNow: 10)
        while listener.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        if listener.isRunning { listener.terminate() }
        listener.waitUntilExit()

        let expected = try screenshot(config, folder)
        try assertArrived(ts, seconds: 8, expected: expected)
        let index = hls + "/index.m3u8"
        let finished = try playlist(index)
        XCTAssertTrue(finished.contains("#EXT-X-ENDLIST"), finished)
        try assertArrived(index, seconds: 8, expected: expected)
        let status = try XCTUnwrap(FileManager.default.contents(atPath: folder.path + "/state/broadcast.json").flatMap(BroadcastStatus.decode))
        XCTAssertEqual(status.state, .stopped, broadcast.log)
        XCTAssertEqual(Set(status.destinations.map(\.name)), [srt, index])
        XCTAssertTrue(status.destinations.allSatisfy { $0.bytes > 50_000 }, "\(status)")
        assertWithinBudget(peak)
    }

    /// SIGTERM (what `systemctl stop` and `broadcast-stop` send) finishes the HLS playlist
    /// as the duration's end does: #EXT-X-ENDLIST, and every second sent until then.
    func testSIGTERMFinishesTheHLSPlaylist() throws {
        let folder = TemporaryDirectory()
        let config = try configuration(folder)
        let hls = folder.path + "/hls"
        let broadcast = try Broadcast(["--config", config, "--to", hls + "/"], stderr: folder.path + "/broadcast.log")
        let index = hls + "/index.m3u8"
        var started: Date?
        let deadline = Date(timeIntervalSinceNow: 20)
        while started == nil, broadcast.process.isRunning, Date() < deadline {
            if FileManager.default.fileExists(atPath: index) { started = Date() }
            Thread.sleep(forTimeInterval: 0.1)
        }
        XCTAssertNotNil(started, "no playlist: \(broadcast.log)")
        // Six seconds more of the broadcast: the playlist lists them (its first 2 s segment
        // is listed once complete, so about 8 s were sent when SIGTERM comes).
        XCTAssertTrue(waitUntil(60) { listedSeconds(index) >= 6 || !broadcast.process.isRunning },
                      "waited for the playlist to list 6 s: \(listedSeconds(index)) s, \(broadcast.log)")
        let live = try playlist(index)
        XCTAssertFalse(live.contains("#EXT-X-ENDLIST"), "a live playlist is not finished yet: \(live)")
        broadcast.process.terminate()
        _ = broadcast.finish(timeout: 30)
        XCTAssertEqual(broadcast.process.terminationStatus, 0, broadcast.log)
        XCTAssertTrue(broadcast.log.contains("SIGTERM"), broadcast.log)
        let finished = try playlist(index)
        XCTAssertTrue(finished.contains("#EXT-X-ENDLIST"), finished)
        // The first segment is listed once it is complete (2 s in): about 8 s in all.
        try assertArrived(index, seconds: 8, expected: try screenshot(config, folder))
    }

    /// A real RTMP server (nginx with libnginx-mod-rtmp): the broadcast publishes to it, a
    /// viewer pulls the stream from it meanwhile, and what the server recorded decodes as
    /// H.264 + AAC of the whole 10 s, showing the screen.
    func testScreenGoesToAnNginxRTMPServerAndPlaysBackFromIt() throws {
        let folder = TemporaryDirectory()
        let config = try configuration(folder)
        let server = try NginxRTMPServer(folder: folder.path + "/nginx")
        let url = server.url("kiosk")
        let statusFile = folder.path + "/state/broadcast.json"
        let broadcast = try Broadcast(["--config", config, "--to", url, "--duration", "10s"], stderr: folder.path + "/broadcast.log")
        var live = false
        let deadline = Date(timeIntervalSinceNow: 30)
        while !live, broadcast.process.isRunning, Date() < deadline {
            live = FileManager.default.contents(atPath: statusFile).flatMap(BroadcastStatus.decode)?.state == .live
            Thread.sleep(forTimeInterval: 0.2)
        }
        XCTAssertTrue(live, broadcast.log)
        // A viewer: four seconds pulled from the server while the broadcast goes on.
        let pulled = folder.path + "/pulled.flv"
        let viewer = try Tool.run(try requiredProgram("ffmpeg", package: "ffmpeg"),
                                  ["-nostdin", "-v", "error", "-i", url, "-t", "4", "-c", "copy", "-y", pulled], allowFailure: true)
        XCTAssertEqual(viewer.status, 0, viewer.stderr)
        let peak = broadcast.finish(timeout: 60)
        XCTAssertEqual(broadcast.process.terminationStatus, 0, broadcast.log)
        // nginx closes the recording when the publisher leaves.
        let closed = Date(timeIntervalSinceNow: 10)
        while !server.errorLog.contains("deleteStream"), Date() < closed { Thread.sleep(forTimeInterval: 0.1) }
        server.stop()

        let expected = try screenshot(config, folder)
        try assertArrived(server.recording("kiosk"), seconds: 10, expected: expected)
        let viewed = try FFprobe.probe(pulled)
        XCTAssertEqual(viewed.video?.codec_name, "h264")
        XCTAssertEqual(viewed.audio?.codec_name, "aac")
        XCTAssertEqual(viewed.format.durationSeconds, 4, accuracy: 0.5)
        XCTAssertLessThan(try difference(frame(of: pulled, at: 1), expected), 8, "the viewer sees the screen")
        assertWithinBudget(peak)
    }

    /// The RTMP receiver goes away for 10 s mid-stream: the broadcast reconnects by itself,
    /// the library file beside it has no gap, and memory stays under the cap.
    func testTheReceiverGoingAwayForTenSecondsLeavesNoGapInTheFile() throws {
        let folder = TemporaryDirectory()
        let config = try configuration(folder)
        let rtmpPort = try freeLoopbackPort()
        let rtmp = "rtmp://127.0.0.1:\(rtmpPort)/live/test"
        let first = try receiver(rtmp, .rtmp, output: folder.path + "/first.flv")
        try waitForReceiver(port: rtmpPort, first)
        let broadcast = try Broadcast(["--config", config, "--to", "library", "--to", rtmp, "--duration", "30s"],
                                      stderr: folder.path + "/broadcast.log")
        // Mid-stream: the broadcast is live and has sent the first receiver some of it.
        let statusFile = folder.path + "/state/broadcast.json"
        XCTAssertTrue(waitUntil(30) {
            guard let status = FileManager.default.contents(atPath: statusFile).flatMap(BroadcastStatus.decode) else { return false }
            return status.state == .live && (status.destinations.first { $0.name.hasPrefix("rtmp://") }?.bytes ?? 0) > 0
        }, "waited for the broadcast to be live to the first receiver: \(broadcast.log)")
        first.terminate()
        first.waitUntilExit()
        Thread.sleep(forTimeInterval: 10)   // the scenario: the receiver is away for 10 s
        let second = try receiver(rtmp, .rtmp, output: folder.path + "/second.flv")
        defer { if second.isRunning { second.terminate() } }
        let peak = broadcast.finish(timeout: 90)
        // The receiver ends when the broadcast hangs up; one it never reached would wait forever.
        _ = waitUntil(30) { !second.isRunning }
        if second.isRunning { second.terminate() }
        second.waitUntilExit()
        XCTAssertEqual(broadcast.process.terminationStatus, 0, broadcast.log)
        assertWithinBudget(peak)
        let reconnected = try FFprobe.probe(folder.path + "/second.flv")
        XCTAssertEqual(reconnected.video?.codec_name, "h264", "reconnected: \(broadcast.log)")
        XCTAssertGreaterThan(reconnected.video?.frameCount ?? 0, 20, "reconnected: \(broadcast.log)")
        let file = try libraryFile(broadcast)
        let probe = try FFprobe.probe(file)
        // No gap: 30 s at 10 fps in the file however the network fared.
        XCTAssertEqual(probe.format.durationSeconds, 30, accuracy: 1.5)
        XCTAssertGreaterThan(probe.video?.frameCount ?? 0, 270)
        let status = try XCTUnwrap(FileManager.default.contents(atPath: folder.path + "/state/broadcast.json").flatMap(BroadcastStatus.decode))
        let stream = try XCTUnwrap(status.destinations.first { $0.name.hasPrefix("rtmp://") })
        XCTAssertGreaterThan(stream.bytes, 100_000)
    }

    /// The daemon starts and stops the broadcast over the socket (`broadcast start`,
    /// `broadcast stop`, and the old `broadcast-start`/`broadcast-stop`) and shows what it reports in `status`; the camera is refused
    /// while the daemon holds it.
    func testTheDaemonStartsAndStopsTheBroadcastAndShowsItsState() throws {
        let folder = TemporaryDirectory()
        let daemon = try KioskcamDaemon(root: folder.path, sections: "")
        defer { _ = daemon.terminate() }
        let rtmpPort = try freeLoopbackPort()
        let rtmp = "rtmp://127.0.0.1:\(rtmpPort)/live/test"
        let flv = folder.path + "/daemon.flv"
        let listener = try receiver(rtmp, .rtmp, output: flv)
        defer { if listener.isRunning { listener.terminate() } }
        try waitForReceiver(port: rtmpPort, listener)
        // `watch`: the broadcast's state changes arrive as events.
        let watcher = Process()
        watcher.executableURL = URL(fileURLWithPath: Package.kioskcamBinary)
        watcher.arguments = ["watch", "--config", daemon.config, "--events", "broadcast", "--json", "--count", "2"]
        let watched = folder.path + "/watch.out"
        FileManager.default.createFile(atPath: watched, contents: nil)
        watcher.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: watched))
        try watcher.run()
        defer { if watcher.isRunning { watcher.terminate() } }
        // The watcher is connected (it subscribes as it connects): the daemon's metrics count it.
        let metrics = daemon.root + "/metrics/kioskcam.prom"
        XCTAssertTrue(waitUntil(30) {
            ((try? String(contentsOfFile: metrics, encoding: .utf8)) ?? "").contains("kioskcam_control_clients 1")
        }, "waited for `kioskcam watch` to connect (kioskcam_control_clients 1 in \(metrics))")
        // --size reaches the broadcast: the 800x480 screen goes out at 640x384.
        let started = try daemon.kioskcam(["broadcast", "start", "--to", "library", "--to", rtmp, "--size", "640x384"])
        XCTAssertEqual(started.status, 0, started.stderr)
        // The old spelling still reaches the same request, and names the new one.
        let again = try daemon.kioskcam(["broadcast-start", "--to", "library"])
        XCTAssertNotEqual(again.status, 0)
        XCTAssertTrue(again.stderr.contains("already running"), again.stderr)
        XCTAssertTrue(again.stderr.contains("`broadcast-start` is now `kioskcam broadcast start`"), again.stderr)
        var live = false
        let deadline = Date(timeIntervalSinceNow: 20)
        while Date() < deadline, !live {
            live = daemon.status()["broadcast_state"] as? String == "live"
            Thread.sleep(forTimeInterval: 0.3)
        }
        XCTAssertTrue(live, "status: \(daemon.status()) log: \(daemon.logText())")
        XCTAssertTrue(waitUntil(30) { ((try? String(contentsOfFile: watched, encoding: .utf8)) ?? "").contains(#""state":"live""#) },
                      "waited for `kioskcam watch` to print the live broadcast event")
        let events = (try? String(contentsOfFile: watched, encoding: .utf8)) ?? ""
        XCTAssertTrue(events.contains(#""event":"broadcast""#) && events.contains(#""state":"live""#), events)
        let text = try daemon.kioskcam(["status"])
        XCTAssertTrue(text.stdout.contains("broadcast:    ● LIVE screen 640x384 10 fps → 2"), text.stdout)
        let badSize = try daemon.kioskcam(["broadcast", "start", "--to", "library", "--size", "641x384"])
        XCTAssertEqual(badSize.status, 64, badSize.stderr)
        XCTAssertTrue(badSize.stderr.contains("960x540"), badSize.stderr)
        let camera = try Tool.run(Package.kioskcamBinary, ["broadcast", "--config", daemon.config, "--source", "camera", "--to", "library"],
                                  allowFailure: true)
        XCTAssertEqual(camera.status, 75, camera.stderr)
        XCTAssertTrue(camera.stderr.contains("[stream] url"), camera.stderr)
        let stopped = try daemon.kioskcam(["broadcast", "stop"])
        XCTAssertEqual(stopped.status, 0, stopped.stderr)
        XCTAssertEqual(daemon.status()["broadcast_state"] as? String, "stopped")
        let oldStop = try daemon.kioskcam(["broadcast-stop"])
        XCTAssertNotEqual(oldStop.status, 0, "nothing left to stop")
        XCTAssertTrue(oldStop.stderr.contains("`broadcast-stop` is now `kioskcam broadcast stop`"), oldStop.stderr)
        listener.waitUntilExit()
        XCTAssertEqual(try FFprobe.probe(flv).video?.codec_name, "h264")
        XCTAssertEqual(try FFprobe.probe(flv).video?.width, 640)
        let screens = folder.files().filter { $0.hasPrefix("media/screen/") && $0.hasSuffix(".mp4") }.map { folder.path + "/" + $0 }
        XCTAssertEqual(screens.count, 1, "\(folder.files())")
        XCTAssertGreaterThan(try FFprobe.probe(try XCTUnwrap(screens.first)).format.durationSeconds, 2)
    }

    /// A 1920x1080 screen with padded rows (so its frames are copied) does not fit the
    /// budget as it is: the plan scales it to the largest 16:9 size that does, the log says
    /// so, and the library file is at that size showing the screen scaled down.
    func testAFullHDScreenIsScaledToThePlannedSize() throws {
        let folder = TemporaryDirectory()
        let config = try configuration(folder)
        let source = FrameSize(width: 1920, height: 1080)
        try writeScreen(to: folder.path + "/screen.fb", size: source, stride: 1920 * 4 + 256)
        let plan = try BroadcastPlan.choose(sourceSize: source, bytesPerSourcePixel: 4, framesPerSecond: nil, isScreen: true,
                                            networkDestinations: 0)
        XCTAssertEqual(plan.size, FrameSize(width: 1324, height: 744))
        let broadcast = try Broadcast(["--config", config, "--to", "library", "--duration", "4s"], stderr: folder.path + "/broadcast.log")
        let peak = broadcast.finish(timeout: 90)
        XCTAssertEqual(broadcast.process.terminationStatus, 0, broadcast.log)
        XCTAssertTrue(broadcast.log.contains("the screen's 1920x1080 is scaled to \(plan.size)"), broadcast.log)
        let file = try libraryFile(broadcast)
        let probe = try FFprobe.probe(file)
        XCTAssertEqual(probe.video?.codec_name, "h264")
        XCTAssertEqual(probe.video?.width, plan.size.width)
        XCTAssertEqual(probe.video?.height, plan.size.height)
        XCTAssertEqual(probe.format.durationSeconds, 4, accuracy: 1)
        // The screenshot (the full 1920x1080) scaled down by ffmpeg, against the file's own pixels.
        let screenshot = folder.path + "/screen.png"
        _ = try Tool.run(Package.kioskcamBinary, ["screenshot", "--config", config, "-o", screenshot])
        let expected = try frame(of: screenshot, at: 0, size: plan.size)
        XCTAssertLessThan(try difference(frame(of: file, at: 1, size: plan.size), expected), 6, "the file shows the screen scaled down")
        // Not VmHWM against the cap here: the 1920x1080 screen file is mapped and read whole
        // (8 MiB that are the test's, not the broadcast's: a cgroup charges them to the
        // writer, as it charges a board's /dev/fbN to the kernel), and the larger picture
        // leaves ~48.5 MiB without it: too close to 50 to hold on every machine. What a
        // cgroup cannot reclaim is the anonymous memory, checked as everywhere.
        assertWithinBudget(peak, checksResident: false)
        print("1080p screen scaled to \(plan.size): peak anonymous \(peak.anonymous) KiB, VmHWM \(peak.resident) KiB")
    }

    /// kioskcam-broadcast has no cameras: `--source camera` is refused before anything
    /// opens, in its own name, naming the two ways that have them.
    func testTheSmallProgramRefusesTheCameraAndSaysWhereItIs() throws {
        let folder = TemporaryDirectory()
        let config = try configuration(folder)
        let program = (Package.kioskcamBinary as NSString).deletingLastPathComponent + "/kioskcam-broadcast"
        let result = try Tool.run(Broadcast.shippedProgram ?? program, ["--config", config, "--source", "camera", "--to", "library"],
                                  allowFailure: true)
        XCTAssertEqual(result.status, 64, result.stderr)
        XCTAssertTrue(result.stderr.hasPrefix("kioskcam-broadcast: error: "), result.stderr)
        XCTAssertTrue(result.stderr.contains("kioskcam broadcast --source camera") && result.stderr.contains("[stream] url"), result.stderr)
        XCTAssertTrue(folder.files().filter { $0.hasPrefix("media/") }.isEmpty, "nothing recorded: \(folder.files())")
    }

    /// A 3 s broadcast that must end well (exit 0).
    private func finishedBroadcast(_ folder: TemporaryDirectory, _ arguments: [String]) throws -> Broadcast {
        let broadcast = try Broadcast(arguments + ["--duration", "3s"], stderr: folder.path + "/broadcast.log")
        _ = broadcast.finish(timeout: 60)
        XCTAssertEqual(broadcast.process.terminationStatus, 0, broadcast.log)
        return broadcast
    }

    /// The library file a broadcast names in its log (its one line that is a path).
    private func libraryFile(_ broadcast: Broadcast) throws -> String {
        try XCTUnwrap(broadcast.log.split(separator: "\n").map(String.init).first { $0.hasPrefix("/") && $0.hasSuffix(".mp4") },
                      broadcast.log)
    }

    /// `--size` picks the size (the panel's shape, smaller); the file is at that size.
    func testSizeOptionPicksTheSentSize() throws {
        let folder = TemporaryDirectory()
        let config = try configuration(folder)
        let broadcast = try finishedBroadcast(folder, ["--config", config, "--to", "library", "--size", "400x240"])
        XCTAssertTrue(broadcast.log.contains("is scaled to 400x240 (--size)"), broadcast.log)
        let file = try libraryFile(broadcast)
        let probe = try FFprobe.probe(file)
        XCTAssertEqual(probe.video?.width, 400)
        XCTAssertEqual(probe.video?.height, 240)
        let size = FrameSize(width: 400, height: 240)
        let screenshot = folder.path + "/screen.png"
        _ = try Tool.run(Package.kioskcamBinary, ["screenshot", "--config", config, "-o", screenshot])
        XCTAssertLessThan(try difference(frame(of: file, at: 1, size: size), frame(of: screenshot, at: 0, size: size)), 8)
    }

    /// For the camera `--size` is the size the camera delivers (`camera.size`): nothing
    /// is scaled, and the file is at that size.
    func testSizeOptionSetsTheCamerasSize() throws {
        let folder = TemporaryDirectory()
        let config = try configuration(folder)
        let broadcast = try finishedBroadcast(folder, ["--config", config, "--source", "camera", "--to", "library", "--size", "256x192"])
        XCTAssertFalse(broadcast.log.contains("is scaled to"), broadcast.log)
        let file = try libraryFile(broadcast)
        let probe = try FFprobe.probe(file)
        XCTAssertEqual(probe.video?.width, 256)
        XCTAssertEqual(probe.video?.height, 192)
        XCTAssertGreaterThan(probe.video?.frameCount ?? 0, 30)
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
            (["--to", "library", "--size", "big"], "--size big: use WIDTHxHEIGHT"),
            (["--to", "library", "--size", "401x240"], "even numbers, such as 400x240"),
            (["--to", "library", "--size", "1600x960"], "larger than the source's 800x480"),
            (["--to", "library", "--size", "400x400"], "use e.g. 400x240"),
        ]
        for (arguments, message) in cases {
            let result = try Tool.run(Package.kioskcamBinary, ["broadcast", "--config", config] + arguments, allowFailure: true)
            XCTAssertEqual(result.status, 64, "\(arguments): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
    }
}
