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

    /// `kioskcam run` with everything under `root`, in a mode and with sections of its own.
    struct Daemon {
        let process: Process
        let config: String
        let log: String
        let media: String

        func logText() -> String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

        func kioskcam(_ arguments: [String]) throws -> Tool.Output {
            try Tool.run(Package.kioskcamBinary, arguments + ["--config", config], allowFailure: true)
        }

        /// Waits until the log says `text` (or the daemon has exited), up to `seconds`.
        func waitForLog(_ text: String, seconds: Double) {
            _ = waitUntil(seconds, interval: 0.05) { logText().contains(text) || !process.isRunning }
        }

        /// The seconds of video the clip being written holds on disk (the last video
        /// packet's time in the `.part` under `.incoming`, read by ffprobe), or nil.
        func incomingClipSeconds() -> Double? {
            let incoming = media + "/.incoming"
            guard let part = (try? FileManager.default.contentsOfDirectory(atPath: incoming))?.first(where: { $0.hasSuffix(".part") }) else { return nil }
            return (try? FFprobe.packets(incoming + "/" + part, stream: "v:0", allowFailure: true))?.last?.time
        }

        func signal(_ number: Int32) { kill(process.processIdentifier, number) }

        /// Ends a daemon the test left running and reaps it.
        func reap() {
            if process.isRunning { signal(SIGKILL) }
            process.waitUntilExit()
        }
    }

    func startDaemon(root: String, name: String, camera: String, sections: String) throws -> Daemon {
        let config = root + "/\(name).toml"
        let media = root + "/media-\(name)"
        try """
        [storage]
        media_root = "\(media)"
        sync_interval_seconds = 0.5
        [camera]
        \(camera)
        [encoder]
        preset = "ultrafast"
        keyframe_interval = 15
        [screen]
        framebuffer = "file:\(root)/screen-\(name).fb"
        [lock]
        start_locked = false
        [control]
        state_directory = "\(root)/state-\(name)"
        socket = "\(root)/\(name).sock"
        socket_group = ""
        metrics_file = ""
        \(sections)
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let log = root + "/\(name).log"
        FileManager.default.createFile(atPath: log, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Package.kioskcamBinary)
        process.arguments = ["run", "--config", config]
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        let daemon = Daemon(process: process, config: config, log: log, media: media)
        daemon.waitForLog("kioskcam is running", seconds: 20)
        XCTAssertTrue(daemon.logText().contains("kioskcam is running"), daemon.logText())
        return daemon
    }

    /// Events mode on motion alone, as the scene tests run it: a 1 % threshold over two
    /// frames, and `masks` (left,top,width,height in percent) not watched.
    func motionSections(pre: Int, post: Int, gap: Int, masks: [String]) -> String {
        """
        [events]
        mode = "events"
        pre_seconds = \(pre)
        post_seconds = \(post)
        gap_seconds = \(gap)
        [motion]
        threshold_percent = 1
        min_frames = 2
        mask = [\(masks.map { "\"\($0)\"" }.joined(separator: ", "))]
        """
    }

    /// The file camera replaying a synthetic scene in real time, and no microphone.
    func sceneCamera(_ frames: String, scene: SyntheticScene? = nil) -> String {
        let scene = scene ?? self.scene
        return """
        source = "file:\(frames)"
        size = "\(scene.width)x\(scene.height)"
        pixel_format = "YU12"
        fps = \(scene.framesPerSecond)
        [microphone]
        source = "none"
        """
    }

    func testABoxCrossingMakesOneClipFromPreToPost() throws {
        let folder = TemporaryDirectory()
        let root = folder.path
        let frames = root + "/scene.yuv"
        // 4 s still, 2 s of a box crossing (frames 120…179), 6 s still.
        try scene.write(to: frames, count: 360) { number in
            (120..<180).contains(number) ? .init(box: (x: 10 + (number - 120) * 4, y: 100)) : .init()
        }
        let daemon = try startDaemon(root: root, name: "scene", camera: sceneCamera(frames),
                                       sections: motionSections(pre: 2, post: 2, gap: 0, masks: ["0,0,100,10"]))
        defer { daemon.reap() }
        // The scene lasts 12 s; the clip ends ~2.3 s after the box leaves (at 6 s).
        daemon.waitForLog("ended: video/", seconds: 30)
        daemon.signal(SIGTERM)
        daemon.process.waitUntilExit()
        XCTAssertEqual(daemon.process.terminationStatus, 0, daemon.logText())

        let listed = try daemon.kioskcam(["list", "--events", "--json"])
        XCTAssertEqual(listed.status, 0, listed.stderr)
        let events = try JSONDecoder().decode([EventMessage].self, from: Data(listed.stdout.utf8))
        XCTAssertEqual(events.count, 1, "one crossing, one event: \(events)\n\(daemon.logText())")
        let event = try XCTUnwrap(events.first)
        XCTAssertEqual(event.type, .end)
        XCTAssertEqual(event.triggers, [.motion])
        XCTAssertGreaterThan(event.peakScore, 1)
        let clip = try XCTUnwrap(event.clip)
        XCTAssertTrue(clip.hasSuffix("-motion.mp4"), clip)
        let videos = folder.files().filter { $0.hasPrefix("media-scene/video/") && $0.hasSuffix(".mp4") }
        XCTAssertEqual(videos, ["media-scene/" + clip], "events mode writes the clip and nothing else")

        let numbers = try scene.frameNumbers(of: daemon.media + "/" + clip, scratch: root)
        let first = try XCTUnwrap(numbers.first), last = try XCTUnwrap(numbers.last)
        // Motion is seen ~2 luma frames after the box appears (frame 120, ~frame 128);
        // the clip begins 2 s (60 frames) before that, at the keyframe at or before it
        // (every 15 frames), and ends 2 s after the motion ends (~frame 188).
        let motionLines = daemon.logText().split(separator: "\n").filter { $0.contains("event") || $0.contains("motion") }
        XCTAssertTrue((45...75).contains(first), "the clip begins pre_seconds before the motion: frame \(first)")
        XCTAssertTrue((225...285).contains(last), "the clip ends post_seconds after it: frame \(last)\n\(motionLines.joined(separator: "\n"))")
        XCTAssertEqual(numbers, Array(first...last), "every frame between, once, in order")
        let snapshot = try XCTUnwrap(event.snapshot, "the event has a still of its peak")
        XCTAssertTrue(FileManager.default.fileExists(atPath: daemon.media + "/" + snapshot), snapshot)
        XCTAssertTrue(snapshot.hasPrefix("photo/") && snapshot.hasSuffix("-motion.jpg"),
                      "the still is named with its trigger, so retention keeps it with the clip: \(snapshot)")
    }

    /// 60 s of a still scene with heavy sensor noise (every pixel off by up to ±30, new in
    /// every frame: a camera in the dark) and the exposure drifting 10 levels, replayed in
    /// real time: no event. Then a box crosses (the detector was watching all along): one
    /// clip, after the 60 s. (Before the detector measured the noise while warming up,
    /// this scene was a "light switch" in every frame and the box was never seen.)
    func testAStillNoisySceneFiresNothingForAMinute() throws {
        let folder = TemporaryDirectory()
        let root = folder.path
        let frames = root + "/still.yuv"
        // Small and 15 fps: 64 s of frames in 54 MB. The frame numbers need 192 px.
        let still = SyntheticScene(width: 224, height: 128, framesPerSecond: 15)
        try still.write(to: frames, count: 64 * 15) { number in
            let drift = number * 10 / 900
            return (900..<930).contains(number) ? .init(box: (x: 4 + (number - 900) * 8, y: 50), brightness: drift, noise: 30)
                : .init(brightness: min(drift, 10), noise: 30)
        }
        let daemon = try startDaemon(root: root, name: "still", camera: sceneCamera(frames, scene: still),
                                       sections: motionSections(pre: 1, post: 1, gap: 0, masks: ["0,0,100,14"]))
        defer { daemon.reap() }
        daemon.waitForLog("ended: video/", seconds: 100)
        daemon.signal(SIGTERM)
        daemon.process.waitUntilExit()
        let events = try JSONDecoder().decode([EventMessage].self, from: Data(daemon.kioskcam(["list", "--events", "--json"]).stdout.utf8))
        XCTAssertEqual(events.count, 1, "a minute of noise fires nothing, the crossing fires once: \(events)\n\(daemon.logText())")
        let clip = try XCTUnwrap(events.first?.clip)
        let numbers = try still.frameNumbers(of: daemon.media + "/" + clip, scratch: root)
        let first = try XCTUnwrap(numbers.first)
        XCTAssertTrue((870...900).contains(first), "the one clip begins a second before the crossing (frame 900): \(first)")
    }

    /// Waits until the daemon's pre-event ring holds the 1 s `pre_seconds` asks for (status'
    /// `pre_event_seconds`), so that a clip started now can begin a second earlier.
    private func assertRingHoldsASecond(_ daemon: Daemon, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertTrue(waitUntil(30) { (kioskcamStatus(config: daemon.config)["pre_event_seconds"] as? NSNumber)?.doubleValue ?? 0 >= 1 },
                      "waited for the pre-event ring to hold pre_seconds (pre_event_seconds >= 1): \(kioskcamStatus(config: daemon.config))",
                      file: file, line: line)
    }

    /// The manual trigger through the socket and the CLI: `kioskcam event start|stop` on
    /// the built-in camera (motion off: the test pattern moves), and the message a daemon
    /// in continuous mode gives instead.
    func testEventStartAndStopMakeAManualClip() throws {
        let folder = TemporaryDirectory()
        let builtIn = """
            source = "test"
            size = "320x240"
            """
        func sections(_ mode: String) -> String {
            """
            [microphone]
            source = "tone"
            [events]
            mode = "\(mode)"
            pre_seconds = 1
            post_seconds = 1
            gap_seconds = 0
            motion = false
            """
        }
        let continuous = try startDaemon(root: folder.path, name: "continuous", camera: builtIn, sections: sections("continuous"))
        defer { continuous.reap() }
        let refused = try continuous.kioskcam(["event", "start"])
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stderr.contains("events.mode"), "names the setting to change: \(refused.stderr)")
        continuous.signal(SIGTERM)

        let daemon = try startDaemon(root: folder.path, name: "both", camera: builtIn, sections: sections("both"))
        defer { daemon.reap() }
        assertRingHoldsASecond(daemon)
        let started = try daemon.kioskcam(["event", "start"])
        let startAnswered = Date()
        XCTAssertEqual(started.status, 0, started.stderr)
        XCTAssertTrue(started.stdout.range(of: #"event trigger on: event \d{8}-\d{6}-1"#, options: .regularExpression) != nil, started.stdout)
        Thread.sleep(forTimeInterval: 2)   // the scenario: the trigger lasts ~2 s (the clip's length is checked below)
        let stopped = try daemon.kioskcam(["event", "stop"])
        // The trigger lasted from the daemon's answer to `start` to its answer to `stop`: on a
        // loaded machine the second command's start-up makes that longer than the 2 s slept.
        let triggerSeconds = Date().timeIntervalSince(startAnswered)
        XCTAssertEqual(stopped.status, 0, stopped.stderr)
        daemon.waitForLog("ended: video/", seconds: 15)
        let status = try daemon.kioskcam(["status", "--json"])
        let report = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        XCTAssertEqual(report?["events_mode"] as? String, "both")
        XCTAssertEqual(report?["events_today"] as? Int, 1)
        let ringBytes = try XCTUnwrap(report?["pre_event_bytes"] as? Int), ringLimit = try XCTUnwrap(report?["pre_event_limit_bytes"] as? Int)
        XCTAssertGreaterThan(ringBytes, 0, "the ring holds the last seconds")
        XCTAssertLessThanOrEqual(ringBytes, ringLimit, "within its byte budget")
        XCTAssertEqual(report?["last_event"] as? String, started.stdout.split(separator: " ").last.map { String($0).trimmingCharacters(in: .whitespacesAndNewlines) })
        let text = try daemon.kioskcam(["status"])
        XCTAssertTrue(text.stdout.contains("events:       both mode, 1 today"), text.stdout)
        daemon.signal(SIGTERM)
        daemon.process.waitUntilExit()
        XCTAssertEqual(daemon.process.terminationStatus, 0, daemon.logText())

        let listed = try daemon.kioskcam(["list", "--events", "--json"])
        let events = try JSONDecoder().decode([EventMessage].self, from: Data(listed.stdout.utf8))
        XCTAssertEqual(events.map(\.triggers), [[.manual]], daemon.logText())
        let clip = try XCTUnwrap(events.first?.clip)
        XCTAssertTrue(clip.hasSuffix("-manual.mp4"), clip)
        let probe = try FFprobe.probe(daemon.media + "/" + clip)
        // 1 s before, the trigger, 1 s after; the start is the keyframe at or before.
        XCTAssertEqual(probe.format.durationSeconds, 2 + triggerSeconds, accuracy: 0.8,
                       "1 s before + \(triggerSeconds) s of trigger + 1 s after")
        XCTAssertEqual(probe.audio?.codec_name, "aac", "the clip has the sound too")
    }

    /// A power cut in the middle of a clip: `kill -9`, then `kioskcam salvage` makes the
    /// clip playable and files it under its trigger's name.
    func testAClipCutByKillNineIsSalvagedUnderItsLabel() throws {
        let folder = TemporaryDirectory()
        let daemon = try startDaemon(root: folder.path, name: "cut", camera: """
            source = "test"
            size = "320x240"
            """, sections: """
            [microphone]
            source = "tone"
            [events]
            mode = "events"
            pre_seconds = 1
            motion = false
            """)
        defer { daemon.reap() }
        assertRingHoldsASecond(daemon)
        let started = try daemon.kioskcam(["event", "start"])
        XCTAssertEqual(started.status, 0, started.stderr)
        // Cut once the clip holds 3.5 s on disk (1 s before the trigger), as a loaded
        // machine writes it, not after 3 s of wall time.
        XCTAssertTrue(waitUntil(60, interval: 0.2) { (daemon.incomingClipSeconds() ?? 0) >= 3.5 },
                      "the clip being written reached 3.5 s on disk: \(daemon.incomingClipSeconds() ?? -1) s; \(daemon.logText())")
        daemon.signal(SIGKILL)
        daemon.process.waitUntilExit()
        let parts = folder.files().filter { $0.contains(".incoming/") && $0.hasSuffix("+manual.mp4.part") }
        XCTAssertEqual(parts.count, 1, "the clip was being written under its label: \(folder.files())")

        let salvaged = try daemon.kioskcam(["salvage"])
        XCTAssertEqual(salvaged.status, 0, salvaged.stderr)
        let clips = folder.files().filter { $0.hasPrefix("media-cut/video/") && $0.hasSuffix("-manual.mp4") }
        XCTAssertEqual(clips.count, 1, "salvaged under its label: \(folder.files())")
        let probe = try FFprobe.probe(folder.path + "/" + (clips.first ?? ""))
        // It held 3.5 s on disk when it was cut: all of it comes back (a frame's rounding aside).
        XCTAssertGreaterThan(probe.format.durationSeconds, 3.4)
    }

    /// What must not fire, and what must join, in one 24 s scene: the lights going up
    /// (a brightness step of the whole frame, 3 s), a box moving only inside a masked band
    /// (6–8 s), then two crossings 3 s apart (11–12 s and 15–16 s) with `gap_seconds = 5`.
    /// Exactly one clip, holding both crossings.
    func testALightSwitchAndMaskedMotionFireNothingAndTwoCrossingsInTheGapAreOneClip() throws {
        let folder = TemporaryDirectory()
        let root = folder.path
        let frames = root + "/scene.yuv"
        try scene.write(to: frames, count: 720) { number in
            let brightness = number >= 90 ? 40 : 0
            switch number {
            case 180..<240: return .init(box: (x: 10 + (number - 180) * 4, y: 190), boxSize: 30, brightness: brightness)
            case 330..<360: return .init(box: (x: 10 + (number - 330) * 8, y: 100), brightness: brightness)
            case 450..<480: return .init(box: (x: 250 - (number - 450) * 8, y: 100), brightness: brightness)
            default: return .init(brightness: brightness)
            }
        }
        let daemon = try startDaemon(root: root, name: "rules", camera: sceneCamera(frames),
                                       sections: motionSections(pre: 1, post: 2, gap: 5, masks: ["0,0,100,10", "0,75,100,25"]))
        defer { daemon.reap() }
        daemon.waitForLog("ended: video/", seconds: 40)
        daemon.signal(SIGTERM)
        daemon.process.waitUntilExit()
        let events = try JSONDecoder().decode([EventMessage].self, from: Data(daemon.kioskcam(["list", "--events", "--json"]).stdout.utf8))
        XCTAssertEqual(events.count, 1, "no event for the light or the masked box, one for both crossings: \(events)\n\(daemon.logText())")
        XCTAssertTrue(daemon.logText().contains("a light switch"), "the brightness step was seen as one")
        let clip = try XCTUnwrap(events.first?.clip)
        let numbers = try scene.frameNumbers(of: daemon.media + "/" + clip, scratch: root)
        let first = try XCTUnwrap(numbers.first), last = try XCTUnwrap(numbers.last)
        XCTAssertTrue((285...345).contains(first), "begins pre_seconds before the first crossing (frame 330): \(first)")
        XCTAssertTrue(last >= 480 + 4 * 30, "holds the second crossing and the gap after it: last frame \(last)")
    }

    /// The sound trigger through the WAV microphone: 4 s of quiet, 2 s of a loud tone,
    /// quiet again; motion off. One clip, named for the sound.
    func testALoudSoundMakesASoundClip() throws {
        let folder = TemporaryDirectory()
        let root = folder.path
        let wav = root + "/sound.wav"
        let rate = 48_000
        var samples = [Int16](repeating: 0, count: rate * 10)
        for index in (rate * 4)..<(rate * 6) { samples[index] = Int16(16_000 * sin(Double(index) * 2 * .pi * 440 / Double(rate))) }
        var data = Data("RIFF".utf8)
        func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) } }
        append(UInt32(36 + samples.count * 2)); data.append(contentsOf: Array("WAVEfmt ".utf8))
        append(UInt32(16)); append(UInt16(1)); append(UInt16(1)); append(UInt32(rate)); append(UInt32(rate * 2)); append(UInt16(2)); append(UInt16(16))
        data.append(contentsOf: Array("data".utf8)); append(UInt32(samples.count * 2))
        for sample in samples { append(sample) }
        try data.write(to: URL(fileURLWithPath: wav))
        let daemon = try startDaemon(root: root, name: "sound", camera: """
            source = "test"
            size = "320x240"
            """, sections: """
            [microphone]
            source = "file:\(wav)"
            [events]
            mode = "events"
            pre_seconds = 1
            post_seconds = 1
            motion = false
            sound = true
            sound_dbfs = -20
            sound_ms = 300
            """)
        defer { daemon.reap() }
        daemon.waitForLog("ended: video/", seconds: 20)
        daemon.signal(SIGTERM)
        daemon.process.waitUntilExit()
        let events = try JSONDecoder().decode([EventMessage].self, from: Data(daemon.kioskcam(["list", "--events", "--json"]).stdout.utf8))
        XCTAssertEqual(events.map(\.triggers), [[.sound]], daemon.logText())
        XCTAssertTrue(events.first?.clip?.hasSuffix("-sound.mp4") ?? false, "\(events)")
    }
}
