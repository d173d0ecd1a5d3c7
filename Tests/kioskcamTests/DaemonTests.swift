import Foundation
import KioskCore
import KioskTestSupport
import XCTest

/// `kioskcam run` as systemd and the maintainer see it: the built-in devices, the control
/// socket and its CLI, signals, and a crash in the middle of a recording.
final class DaemonTests: XCTestCase {
    var binary: String { Package.kioskcamBinary }

    /// A daemon on the built-in camera/tone with a file-backed screen, everything under `folder`.
    struct Daemon {
        let folder: TemporaryDirectory
        let config: String
        let process: Process
        let log: String

        var media: String { folder.path + "/media" }

        func kioskcam(_ arguments: [String]) throws -> Tool.Output {
            try Tool.run(Package.kioskcamBinary, arguments + ["--config", config], allowFailure: true)
        }

        func logText() -> String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

        func signal(_ number: Int32) { kill(process.processIdentifier, number) }

        /// Waits for the process to end; returns its exit status.
        func wait(timeout: Double = 30) -> Int32? {
            let deadline = Date(timeIntervalSinceNow: timeout)
            while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
            guard !process.isRunning else { return nil }
            // Foundation's Process keeps itself alive until waitUntilExit() has seen the
            // exit: polling isRunning alone leaks it (LeakSanitizer, scripts/sanitize).
            process.waitUntilExit()
            return process.terminationStatus
        }

        /// Ends a daemon the test left running (a failed assertion, say) and reaps it.
        func killAndReap() {
            if process.isRunning { signal(SIGKILL) }
            process.waitUntilExit()
        }
    }

    func startDaemon(in folder: TemporaryDirectory = TemporaryDirectory(), lock: String = "idle_seconds = 600",
                     environment: [String: String] = [:]) throws -> Daemon {
        let root = folder.path
        let config = root + "/kioskcam.toml"
        try KioskcamDaemon.configuration(root: root, lock: lock).write(toFile: config, atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: root + "/metrics", withIntermediateDirectories: true)
        let log = root + "/daemon.log"
        FileManager.default.createFile(atPath: log, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["run", "--config", config]
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        let daemon = Daemon(folder: folder, config: config, process: process, log: log)
        let deadline = Date(timeIntervalSinceNow: 20)
        while !daemon.logText().contains("kioskcam is running") && Date() < deadline && process.isRunning {
            Thread.sleep(forTimeInterval: 0.05)
        }
        XCTAssertTrue(daemon.logText().contains("kioskcam is running"), daemon.logText())
        return daemon
    }

    func testRecordsThroughTheSocketAndFinishesOnSIGTERM() throws {
        let daemon = try startDaemon()
        defer { daemon.killAndReap() }
        XCTAssertTrue(daemon.logText().contains("built-in test pattern"), "says it runs on built-in devices")

        let status = try daemon.kioskcam(["status", "--json"])
        XCTAssertEqual(status.status, 0, status.stderr)
        let report = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        XCTAssertEqual(report?["state"] as? String, "idle")
        XCTAssertEqual(report?["default_pin"] as? Bool, true, "the factory PIN is flagged")
        let deviceID = try XCTUnwrap(report?["device_id"] as? String)
        XCTAssertNotNil(UUID(uuidString: deviceID))

        XCTAssertEqual(try daemon.kioskcam(["start"]).status, 0)
        XCTAssertNotEqual(try daemon.kioskcam(["start"]).status, 0, "a second start is refused (already recording)")
        XCTAssertNil(waitUntilRecorded(config: daemon.config, seconds: 2), daemon.logText())
        let stop = try daemon.kioskcam(["stop"])
        XCTAssertEqual(stop.status, 0, stop.stderr)

        for _ in 0..<2 {   // the daemon's one JPEG encoder takes still after still
            let still = try daemon.kioskcam(["snapshot"])
            XCTAssertEqual(still.status, 0, still.stderr)
            // Stills are named by the second: the next one waits for the clock's next second
            // (the one just taken is named at or before this one).
            let taken = Date().timeIntervalSince1970.rounded(.down)
            while Date().timeIntervalSince1970.rounded(.down) == taken { Thread.sleep(forTimeInterval: 0.02) }
        }

        // A recording in progress when SIGTERM arrives is finished and kept.
        XCTAssertEqual(try daemon.kioskcam(["start"]).status, 0)
        XCTAssertNil(waitUntilRecorded(config: daemon.config, seconds: 1.5), daemon.logText())
        daemon.signal(SIGTERM)
        XCTAssertEqual(daemon.wait(), 0, daemon.logText())

        let files = daemon.folder.files().filter { !$0.contains(".incoming") }
        let videos = files.filter { $0.hasSuffix(".mp4") }
        XCTAssertEqual(videos.count, 2, "\(files)")
        for video in videos {
            let probe = try FFprobe.probe(daemon.folder.path + "/" + video)
            XCTAssertEqual(probe.video?.codec_name, "h264")
            XCTAssertEqual(probe.audio?.codec_name, "aac")
            XCTAssertGreaterThan(probe.format.durationSeconds, 1.0)
        }
        // Each recording names the device it came from and when it started.
        let tags = try Tool.run("/usr/bin/ffprobe", ["-v", "error", "-show_entries", "format_tags", "-of", "compact",
                                                     daemon.folder.path + "/" + videos[0]]).stdout
        XCTAssertTrue(tags.contains("device_id=\(deviceID)"), tags)
        XCTAssertTrue(tags.contains("creation_time="), tags)
        XCTAssertEqual(files.filter { $0.hasSuffix(".jpg") && $0.contains("/photo/") }.count, 2, "\(files)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: daemon.folder.path + "/control.sock"), "the socket is removed")
        // The identity survives a restart (and a reinstall of the binary).
        XCTAssertEqual(try String(contentsOfFile: daemon.folder.path + "/state/device-id", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines), deviceID)
    }

    /// One recording at a time, through the socket (the CLI): every start/stop
    /// combination of video and sound only. The defect: `start --audio` then `start` ran
    /// both, `stop` ended only the video one, and the client waited 30 s for a sound-only
    /// recording that kept growing.
    func testOneRecordingAtATimeThroughTheSocket() throws {
        let daemon = try startDaemon()
        defer { daemon.killAndReap() }
        func status() throws -> [String: Any] {
            let out = try daemon.kioskcam(["status", "--json"])
            return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [String: Any])
        }

        // Sound only first: a second start of either kind is refused, naming what runs.
        let audioStarted = Date()
        XCTAssertEqual(try daemon.kioskcam(["start", "--audio"]).status, 0)
        for arguments in [["start"], ["start", "--audio"]] {
            let refused = try daemon.kioskcam(arguments)
            XCTAssertNotEqual(refused.status, 0, "\(arguments) while a sound-only recording runs")
            XCTAssertTrue(refused.stderr.contains("already recording: a sound-only recording is running"), refused.stderr)
        }
        XCTAssertEqual(try status()["kind"] as? String, "audio")
        XCTAssertNil(waitUntilRecorded(config: daemon.config, seconds: 2), daemon.logText())
        // `stop` ends it, promptly, and names its file.
        let stopStarted = Date()
        let stop = try daemon.kioskcam(["stop"])
        let audioWall = stopStarted.timeIntervalSince(audioStarted)
        XCTAssertEqual(stop.status, 0, stop.stderr)
        XCTAssertLessThan(Date().timeIntervalSince(stopStarted), 10, "stop answers once the file is finished, not after a time-out")
        XCTAssertTrue(stop.stdout.contains(".m4a"), stop.stdout)
        XCTAssertEqual(try status()["state"] as? String, "idle")
        let notRecording = try daemon.kioskcam(["stop"])
        XCTAssertNotEqual(notRecording.status, 0)
        XCTAssertTrue(notRecording.stderr.contains("not recording"), notRecording.stderr)

        // Video first: sound only is refused; stop ends the video.
        XCTAssertEqual(try daemon.kioskcam(["start"]).status, 0)
        let refusedAudio = try daemon.kioskcam(["start", "--audio"])
        XCTAssertTrue(refusedAudio.stderr.contains("already recording: a video recording is running"), refusedAudio.stderr)
        XCTAssertEqual(try status()["kind"] as? String, "video")
        XCTAssertNil(waitUntilRecorded(config: daemon.config, seconds: 1.5), daemon.logText())
        let stopVideo = try daemon.kioskcam(["stop"])
        XCTAssertEqual(stopVideo.status, 0, stopVideo.stderr)
        XCTAssertTrue(stopVideo.stdout.contains(".mp4"), stopVideo.stdout)

        // Two clients asking at the same moment, one for each kind: exactly one wins.
        for round in 0..<4 {
            let kinds = round % 2 == 0 ? [["start"], ["start", "--audio"]] : [["start", "--audio"], ["start"]]
            let results = ResultsBox()
            let group = DispatchGroup()
            let config = daemon.config
            for arguments in kinds {
                DispatchQueue.global().async(group: group) {
                    let out = try? Tool.run(Package.kioskcamBinary, arguments + ["--config", config], allowFailure: true)
                    results.append(out?.status ?? -1)
                }
            }
            group.wait()
            XCTAssertEqual(results.values.filter { $0 == 0 }.count, 1, "round \(round): \(results.values)")
            // A stop before the first frame reached the file would leave no file: wait for it.
            XCTAssertTrue(waitUntil(30, interval: 0.05) { (try? status())?["state"] as? String == "recording" }, "round \(round): waited for state recording")
            let stopped = try daemon.kioskcam(["stop"])
            XCTAssertEqual(stopped.status, 0, "round \(round): \(stopped.stderr)")
        }

        daemon.signal(SIGTERM)
        XCTAssertEqual(daemon.wait(), 0, daemon.logText())
        let files = daemon.folder.files().filter { !$0.contains(".incoming") }
        let sounds = files.filter { $0.hasSuffix(".m4a") }.sorted()
        XCTAssertEqual(sounds.count + files.filter { $0.hasSuffix(".mp4") }.count, 6, "\(files)")
        // The sound-only file holds the time it ran, not more (its timeline was wrong
        // while it ran beside a video recording).
        let first = try FFprobe.probe(daemon.folder.path + "/" + XCTUnwrap(sounds.first))
        XCTAssertEqual(first.format.durationSeconds, audioWall, accuracy: 1.0)
    }

    /// Under systemd (`Type=notify`, `WatchdogSec`): READY=1 once running, and watchdog
    /// pings while the encoder threads and the UI loop make progress (the gate itself is
    /// tested in WatchdogGateTests); STOPPING=1 on SIGTERM.
    func testTellsSystemdItIsReadyAndPingsTheWatchdog() throws {
        let folder = TemporaryDirectory()
        let notifyPath = folder.path + "/notify.sock"
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in notifyPath.utf8.enumerated() { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        XCTAssertEqual(bound, 0, String(cString: strerror(errno)))
        var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))

        // WatchdogSec=4 s: kioskcam pings when every watched thread has moved, at most once a second.
        let daemon = try startDaemon(in: folder, environment: ["NOTIFY_SOCKET": notifyPath, "WATCHDOG_USEC": "4000000"])
        defer { daemon.killAndReap() }
        var messages: [String] = []
        let deadline = Date(timeIntervalSinceNow: 5)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while Date() < deadline {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count > 0 { messages.append(String(decoding: buffer[0..<count], as: UTF8.self)) }
        }
        XCTAssertTrue(messages.contains { $0.hasPrefix("READY=1") }, "\(messages)")
        let pings = messages.filter { $0 == "WATCHDOG=1" }.count
        XCTAssertGreaterThanOrEqual(pings, 3, "about one ping a second while every thread moves: \(messages)")
        XCTAssertTrue(messages.contains { $0.hasPrefix("STATUS=idle") }, "\(messages)")
        daemon.signal(SIGTERM)
        XCTAssertEqual(daemon.wait(), 0)
        var tail: [String] = []
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            tail.append(String(decoding: buffer[0..<count], as: UTF8.self))
        }
        XCTAssertTrue(tail.contains("STOPPING=1"), "\(tail)")
        XCTAssertFalse(daemon.logText().contains("has made no progress"), daemon.logText())
    }

    func testMetricsScreenshotAndReload() throws {
        let daemon = try startDaemon()
        defer { daemon.killAndReap() }
        let metrics = daemon.folder.path + "/metrics/kioskcam.prom"
        XCTAssertTrue(waitUntil(5, interval: 0.05) { FileManager.default.fileExists(atPath: metrics) })
        let text = try String(contentsOfFile: metrics, encoding: .utf8)
        XCTAssertTrue(text.contains("# TYPE"), text)
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            XCTAssertNotNil(line.range(of: #"^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[^}]*\})? -?[0-9.eE+-]+$"#, options: .regularExpression),
                            "not exposition format: \(line)")
        }

        let png = daemon.folder.path + "/screen.png"
        let shot = try daemon.kioskcam(["screenshot", "-o", png])
        XCTAssertEqual(shot.status, 0, shot.stderr)
        XCTAssertEqual(try FFprobe.probe(png, countFrames: false).video?.codec_name, "png")

        // SIGHUP: a changed retention applies now; a changed camera needs a restart.
        var config = try String(contentsOfFile: daemon.config, encoding: .utf8)
        config = config.replacingOccurrences(of: "[storage]\n", with: "[storage]\nretention_days = 7\n")
            .replacingOccurrences(of: "size = \"320x240\"", with: "size = \"640x480\"")
        try config.write(toFile: daemon.config, atomically: true, encoding: .utf8)
        daemon.signal(SIGHUP)
        XCTAssertTrue(waitUntil(5, interval: 0.05) { daemon.logText().contains("configuration reloaded") }, daemon.logText())
        XCTAssertTrue(daemon.logText().contains("[storage] applied now"), daemon.logText())
        XCTAssertFalse(daemon.logText().contains("[lock]"), "only what changed is reported")
        XCTAssertTrue(daemon.logText().contains("[camera] changed but need a restart"), daemon.logText())

        // A broken file on reload keeps the running configuration.
        try "[storage]\nretention_days = -3\n".write(toFile: daemon.config, atomically: true, encoding: .utf8)
        daemon.signal(SIGHUP)
        XCTAssertTrue(waitUntil(5, interval: 0.05) { daemon.logText().contains("keeping the configuration in effect") }, daemon.logText())
        XCTAssertTrue(daemon.process.isRunning)
        daemon.signal(SIGTERM)
        XCTAssertEqual(daemon.wait(), 0, daemon.logText())
    }

    /// A power cut for the daemon: `kill -9` while recording, then a restart salvages the file.
    func testKillDuringRecordingThenRestartSalvages() throws {
        let folder = TemporaryDirectory()
        let first = try startDaemon(in: folder)
        XCTAssertEqual(try first.kioskcam(["start"]).status, 0)
        XCTAssertNil(waitUntilRecorded(config: first.config, seconds: 4), first.logText())
        first.signal(SIGKILL)
        _ = first.wait()
        XCTAssertTrue(folder.files().contains { $0.hasSuffix(".part") }, "a torn temp file is left: \(folder.files())")

        let second = try startDaemon(in: folder)
        defer { second.killAndReap() }
        XCTAssertTrue(second.logText().contains("recovered"), second.logText())
        // Up and answering before it is stopped (salvage may still be running otherwise,
        // under a sanitizer for seconds).
        XCTAssertTrue(waitUntil(30, interval: 0.05) { (try? second.kioskcam(["status"]).status) == 0 }, second.logText())
        second.signal(SIGTERM)
        XCTAssertEqual(second.wait(), 0)
        let videos = folder.files().filter { $0.hasSuffix(".mp4") && !$0.contains(".incoming") }
        XCTAssertEqual(videos.count, 1, "\(folder.files())")
        let probe = try FFprobe.probe(folder.path + "/" + (try XCTUnwrap(videos.first)))
        XCTAssertGreaterThan(probe.format.durationSeconds, 2.0, "at most the last couple of seconds are lost")
    }

    /// The screensaver on the built-in screen: idle → the PIN screen, then the panel goes dark,
    /// and what `screenshot` reads is then black.
    func testIdleShowsThePINScreenThenBlanks() throws {
        let daemon = try startDaemon(lock: "idle_seconds = 1\nblank_seconds = 2")
        defer { daemon.killAndReap() }
        XCTAssertTrue(waitUntil(10, interval: 0.05) { daemon.logText().contains("screen: pin") }, daemon.logText())
        XCTAssertTrue(waitUntil(10, interval: 0.05) { daemon.logText().contains("screen: blank") }, daemon.logText())
        let png = daemon.folder.path + "/blank.png", raw = daemon.folder.path + "/blank.rgb"
        XCTAssertEqual(try daemon.kioskcam(["screenshot", "-o", png]).status, 0)
        _ = try Tool.run("/usr/bin/ffmpeg", ["-v", "error", "-y", "-i", png, "-f", "rawvideo", "-pix_fmt", "rgb24", raw])
        let pixels = try Data(contentsOf: URL(fileURLWithPath: raw))
        XCTAssertEqual(pixels.count, 800 * 480 * 3)
        XCTAssertEqual(pixels.max(), 0, "the blanked screen is black")
        daemon.signal(SIGTERM)
        XCTAssertEqual(daemon.wait(), 0)
    }

    /// Retention runs at start-up, on the storage guard's thread, not only an hour later:
    /// a 40-day-old folder is gone within seconds of `kioskcam run`, today's stays.
    func testRetentionRunsAtStartUp() throws {
        let folder = TemporaryDirectory()
        let old = folder.path + "/media/video/" + CalendarDate(LocalTimestamp(Date(timeIntervalSinceNow: -40 * 86_400))).folderName
        let today = folder.path + "/media/video/" + CalendarDate(LocalTimestamp(Date())).folderName
        for day in [old, today] {
            try FileManager.default.createDirectory(atPath: day, withIntermediateDirectories: true)
            XCTAssertTrue(FileManager.default.createFile(atPath: day + "/101455.mp4", contents: Data(count: 100)))
        }
        let daemon = try startDaemon(in: folder)
        defer { daemon.killAndReap() }
        XCTAssertTrue(waitUntil(10, interval: 0.05) { !FileManager.default.fileExists(atPath: old) }, daemon.logText())
        XCTAssertTrue(FileManager.default.fileExists(atPath: today + "/101455.mp4"))
        XCTAssertEqual(try daemon.kioskcam(["status"]).status, 0)
    }

    func testClientSaysWhenTheDaemonIsNotRunning() throws {
        let folder = TemporaryDirectory()
        let config = folder.path + "/kioskcam.toml"
        try "[control]\nsocket = \"\(folder.path)/control.sock\"\n".write(toFile: config, atomically: true, encoding: .utf8)
        let result = try Tool.run(binary, ["status", "--config", config], allowFailure: true)
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.stderr.contains("not running"), result.stderr)
    }
}

/// Exit statuses collected from several threads.
private final class ResultsBox: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [Int32] = []
    func append(_ value: Int32) { lock.lock(); stored.append(value); lock.unlock() }
    var values: [Int32] { lock.lock(); defer { lock.unlock() }; return stored }
}
