import Foundation
import KioskCore
import KioskRecording
import KioskTestSupport
import XCTest

/// Event clips end to end: `kioskcam run` in `events` mode on a synthetic scene replayed
/// in real time through the file camera — a still scene, a box crossing it for two
/// seconds, still again. Exactly one clip, named for its trigger, that begins
/// `pre_seconds` before the motion (its decoded frame numbers say so) and ends
/// `post_seconds` after it; the event log and `list --events` tell the same.
final class EventClipTests: XCTestCase {
    let scene = SyntheticScene(width: 320, height: 240, framesPerSecond: 30)

    func testABoxCrossingMakesOneClipFromPreToPost() throws {
        let folder = TemporaryDirectory()
        let root = folder.path
        let frames = root + "/scene.yuv"
        // 4 s still, 2 s of a box crossing (frames 120…179), 6 s still.
        try scene.write(to: frames, count: 360) { number in
            (120..<180).contains(number) ? .init(box: (x: 10 + (number - 120) * 4, y: 100)) : .init()
        }
        let config = root + "/kioskcam.toml"
        try """
        [storage]
        media_root = "\(root)/media"
        [camera]
        source = "file:\(frames)"
        size = "320x240"
        pixel_format = "YU12"
        fps = 30
        [microphone]
        source = "none"
        [encoder]
        preset = "ultrafast"
        keyframe_interval = 15
        [events]
        mode = "events"
        pre_seconds = 2
        post_seconds = 2
        gap_seconds = 0
        [motion]
        threshold_percent = 1
        min_frames = 2
        mask = ["0,0,100,10"]
        [screen]
        framebuffer = "file:\(root)/screen.fb"
        [lock]
        start_locked = false
        [control]
        state_directory = "\(root)/state"
        socket = "\(root)/control.sock"
        socket_group = ""
        metrics_file = ""
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let log = root + "/daemon.log"
        FileManager.default.createFile(atPath: log, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Package.kioskcamBinary)
        process.arguments = ["run", "--config", config]
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        defer {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        func logText() -> String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
        // The scene lasts 12 s; the clip ends ~2.3 s after the box leaves (at 6 s).
        let deadline = Date(timeIntervalSinceNow: 30)
        while !logText().contains("ended: video/") && Date() < deadline && process.isRunning {
            Thread.sleep(forTimeInterval: 0.1)
        }
        Thread.sleep(forTimeInterval: 1)
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, logText())

        let listed = try Tool.run(Package.kioskcamBinary, ["list", "--events", "--json", "--config", config], allowFailure: true)
        XCTAssertEqual(listed.status, 0, listed.stderr)
        let events = try JSONDecoder().decode([EventMessage].self, from: Data(listed.stdout.utf8))
        XCTAssertEqual(events.count, 1, "one crossing, one event: \(events)\n\(logText())")
        let event = try XCTUnwrap(events.first)
        XCTAssertEqual(event.type, .end)
        XCTAssertEqual(event.triggers, [.motion])
        XCTAssertGreaterThan(event.peakScore, 1)
        let clip = try XCTUnwrap(event.clip)
        XCTAssertTrue(clip.hasSuffix("-motion.mp4"), clip)
        let videos = folder.files().filter { $0.hasPrefix("media/video/") && $0.hasSuffix(".mp4") }
        XCTAssertEqual(videos, ["media/" + clip], "events mode writes the clip and nothing else")

        let numbers = try scene.frameNumbers(of: root + "/media/" + clip, scratch: root)
        let first = try XCTUnwrap(numbers.first), last = try XCTUnwrap(numbers.last)
        // Motion is seen ~2 luma frames after the box appears (frame 120, ~frame 128);
        // the clip begins 2 s (60 frames) before that, at the keyframe at or before it
        // (every 15 frames), and ends 2 s after the motion ends (~frame 188).
        XCTAssertTrue((45...75).contains(first), "the clip begins pre_seconds before the motion: frame \(first)")
        XCTAssertTrue((225...285).contains(last), "the clip ends post_seconds after it: frame \(last)\n\(logText().split(separator: "\n").filter { $0.contains("event") || $0.contains("motion") || $0.contains("camera") }.joined(separator: "\n"))")
        XCTAssertEqual(numbers, Array(first...last), "every frame between, once, in order")
        if let snapshot = event.snapshot {
            XCTAssertTrue(FileManager.default.fileExists(atPath: root + "/media/" + snapshot), snapshot)
        } else {
            XCTFail("the event has a still of its peak")
        }
    }

    /// The manual trigger through the socket and the CLI: `kioskcam event start|stop` on
    /// the built-in camera (motion off: the test pattern moves), and the message a daemon
    /// in continuous mode gives instead.
    func testEventStartAndStopMakeAManualClip() throws {
        let folder = TemporaryDirectory()
        let root = folder.path
        func daemon(mode: String) throws -> (Process, String, () -> String) {
            let config = root + "/\(mode).toml"
            try """
            [storage]
            media_root = "\(root)/media-\(mode)"
            [camera]
            source = "test"
            size = "320x240"
            [microphone]
            source = "tone"
            [encoder]
            preset = "ultrafast"
            keyframe_interval = 15
            [events]
            mode = "\(mode)"
            pre_seconds = 1
            post_seconds = 1
            gap_seconds = 0
            motion = false
            [screen]
            framebuffer = "file:\(root)/screen-\(mode).fb"
            [lock]
            start_locked = false
            [control]
            state_directory = "\(root)/state-\(mode)"
            socket = "\(root)/\(mode).sock"
            socket_group = ""
            metrics_file = ""
            """.write(toFile: config, atomically: true, encoding: .utf8)
            let log = root + "/\(mode).log"
            FileManager.default.createFile(atPath: log, contents: nil)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Package.kioskcamBinary)
            process.arguments = ["run", "--config", config]
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
            process.standardOutput = handle
            process.standardError = handle
            try process.run()
            let logText = { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
            let deadline = Date(timeIntervalSinceNow: 20)
            while !logText().contains("kioskcam is running") && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
            return (process, config, logText)
        }

        let (continuous, continuousConfig, _) = try daemon(mode: "continuous")
        defer { if continuous.isRunning { kill(continuous.processIdentifier, SIGKILL) }; continuous.waitUntilExit() }
        let refused = try Tool.run(Package.kioskcamBinary, ["event", "start", "--config", continuousConfig], allowFailure: true)
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stderr.contains("events.mode"), "names the setting to change: \(refused.stderr)")
        kill(continuous.processIdentifier, SIGTERM)

        let (process, config, logText) = try daemon(mode: "both")
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) }; process.waitUntilExit() }
        Thread.sleep(forTimeInterval: 1.5) // the ring fills
        let started = try Tool.run(Package.kioskcamBinary, ["event", "start", "--config", config], allowFailure: true)
        XCTAssertEqual(started.status, 0, started.stderr)
        XCTAssertTrue(started.stdout.range(of: #"event trigger on: event \d{8}-\d{6}-1"#, options: .regularExpression) != nil, started.stdout)
        Thread.sleep(forTimeInterval: 2)
        let stopped = try Tool.run(Package.kioskcamBinary, ["event", "stop", "--config", config], allowFailure: true)
        XCTAssertEqual(stopped.status, 0, stopped.stderr)
        let deadline = Date(timeIntervalSinceNow: 15)
        while !logText().contains("ended: video/") && Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        let status = try Tool.run(Package.kioskcamBinary, ["status", "--json", "--config", config], allowFailure: true)
        let report = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        XCTAssertEqual(report?["events_mode"] as? String, "both")
        XCTAssertEqual(report?["events_today"] as? Int, 1)
        XCTAssertEqual(report?["last_event"] as? String, started.stdout.split(separator: " ").last.map { String($0).trimmingCharacters(in: .whitespacesAndNewlines) })
        let text = try Tool.run(Package.kioskcamBinary, ["status", "--config", config], allowFailure: true)
        XCTAssertTrue(text.stdout.contains("events:       both mode, 1 today"), text.stdout)
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, logText())

        let listed = try Tool.run(Package.kioskcamBinary, ["list", "--events", "--json", "--config", config], allowFailure: true)
        let events = try JSONDecoder().decode([EventMessage].self, from: Data(listed.stdout.utf8))
        XCTAssertEqual(events.map(\.triggers), [[.manual]], logText())
        let clip = try XCTUnwrap(events.first?.clip)
        XCTAssertTrue(clip.hasSuffix("-manual.mp4"), clip)
        let probe = try FFprobe.probe(root + "/media-both/" + clip)
        // 1 s before, ~2 s of trigger, 1 s after; the start is the keyframe at or before.
        XCTAssertEqual(probe.format.durationSeconds, 4, accuracy: 0.8)
        XCTAssertEqual(probe.audio?.codec_name, "aac", "the clip has the sound too")
    }

    /// A power cut in the middle of a clip: `kill -9`, then `kioskcam salvage` makes the
    /// clip playable and files it under its trigger's name.
    func testAClipCutByKillNineIsSalvagedUnderItsLabel() throws {
        let folder = TemporaryDirectory()
        let root = folder.path
        let config = root + "/kioskcam.toml"
        try """
        [storage]
        media_root = "\(root)/media"
        sync_interval_seconds = 0.5
        [camera]
        source = "test"
        size = "320x240"
        [microphone]
        source = "tone"
        [encoder]
        preset = "ultrafast"
        keyframe_interval = 15
        [events]
        mode = "events"
        pre_seconds = 1
        motion = false
        [screen]
        framebuffer = "file:\(root)/screen.fb"
        [lock]
        start_locked = false
        [control]
        state_directory = "\(root)/state"
        socket = "\(root)/control.sock"
        socket_group = ""
        metrics_file = ""
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let log = root + "/daemon.log"
        FileManager.default.createFile(atPath: log, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Package.kioskcamBinary)
        process.arguments = ["run", "--config", config]
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) }; process.waitUntilExit() }
        let logText = { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
        let ready = Date(timeIntervalSinceNow: 20)
        while !logText().contains("kioskcam is running") && Date() < ready { Thread.sleep(forTimeInterval: 0.05) }
        Thread.sleep(forTimeInterval: 1.5)
        let started = try Tool.run(Package.kioskcamBinary, ["event", "start", "--config", config], allowFailure: true)
        XCTAssertEqual(started.status, 0, started.stderr)
        Thread.sleep(forTimeInterval: 3)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        let parts = folder.files().filter { $0.contains(".incoming/") && $0.hasSuffix("+manual.mp4.part") }
        XCTAssertEqual(parts.count, 1, "the clip was being written under its label: \(folder.files())")

        let salvaged = try Tool.run(Package.kioskcamBinary, ["salvage", "--config", config], allowFailure: true)
        XCTAssertEqual(salvaged.status, 0, salvaged.stderr)
        let clips = folder.files().filter { $0.hasPrefix("media/video/") && $0.hasSuffix("-manual.mp4") }
        XCTAssertEqual(clips.count, 1, "salvaged under its label: \(folder.files())")
        let probe = try FFprobe.probe(root + "/" + (clips.first ?? ""))
        // 1 s before the trigger and ~3 s after it, less what the last sync had not written.
        XCTAssertGreaterThan(probe.format.durationSeconds, 2.5)
    }
}
