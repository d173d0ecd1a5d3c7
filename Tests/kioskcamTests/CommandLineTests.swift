import Foundation
import KioskCore
import KioskRecording
import KioskTestSupport
import XCTest

/// The `kioskcam` binary as a user runs it: exit codes, messages, files.
final class CommandLineTests: XCTestCase {
    var binary: String { Package.kioskcamBinary }

    func kioskcam(_ arguments: [String]) throws -> Tool.Output {
        try Tool.run(binary, arguments, allowFailure: true)
    }

    /// Every file under `root`'s library folders (the temp area excluded).
    func libraryFiles(_ folder: TemporaryDirectory) -> [String] {
        folder.files().filter { !$0.contains(".incoming") }
    }

    func testRecordWritesVideoIntoADateFolderAndPrintsItsPath() throws {
        let folder = TemporaryDirectory()
        let result = try kioskcam(["record", "--duration", "1.5s", "--root", folder.path, "--size", "320x240", "--quiet"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let path = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertTrue(path.range(of: #"/video/\d{8}/\d{6}\.mp4$"#, options: .regularExpression) != nil, path)
        XCTAssertTrue(result.stderr.contains("built-in test pattern"), "says it uses the built-in camera: \(result.stderr)")
        let probe = try FFprobe.probe(path)
        XCTAssertEqual(probe.video?.codec_name, "h264")
        XCTAssertEqual(probe.audio?.codec_name, "aac")
        XCTAssertEqual(probe.format.durationSeconds, 1.5, accuracy: 0.2)
    }

    func testAudioOnlyAndSnapshot() throws {
        let folder = TemporaryDirectory()
        let audio = try kioskcam(["record", "--audio-only", "--duration", "1s", "--root", folder.path, "--quiet"])
        XCTAssertEqual(audio.status, 0, audio.stderr)
        XCTAssertTrue(audio.stdout.contains("/audio/") && audio.stdout.contains(".m4a"), audio.stdout)
        // Every audio recording gets its waveform picture beside it.
        let picture = audio.stdout.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: ".m4a", with: ".png")
        let probe = try FFprobe.probe(picture, countFrames: false)
        XCTAssertEqual(probe.video?.codec_name, "png")
        XCTAssertEqual(probe.video?.width, 800)
        let still = try kioskcam(["snapshot", "--root", folder.path, "--size", "320x240"])
        XCTAssertEqual(still.status, 0, still.stderr)
        let photo = still.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertTrue(photo.contains("/photo/") && photo.hasSuffix(".jpg"), photo)
        XCTAssertEqual(try FFprobe.probe(photo, countFrames: false).video?.width, 320)
    }

    /// A power cut loses at most the last couple of seconds. SIGKILL gives no
    /// chance to clean up; the next start-up salvages the file.
    func testPowerCutLosesAtMostTwoSeconds() throws {
        let folder = TemporaryDirectory()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["record", "--root", folder.path, "--size", "320x240", "--quiet"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Wait for the temp file, then record for 4 s more.
        let deadline = Date(timeIntervalSinceNow: 10)
        while folder.files().filter({ $0.hasSuffix(".part") }).isEmpty && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        XCTAssertFalse(folder.files().filter { $0.hasSuffix(".part") }.isEmpty, "recording started")
        let recordingStarted = Date()
        Thread.sleep(forTimeInterval: 4)
        let recordedBeforeKill = Date().timeIntervalSince(recordingStarted)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        XCTAssertTrue(libraryFiles(folder).isEmpty, "nothing was finished before the kill")

        // The next start-up (here: another recording) salvages it first.
        let next = try kioskcam(["record", "--root", folder.path, "--duration", "1s", "--size", "320x240", "--quiet"])
        XCTAssertEqual(next.status, 0, next.stderr)
        XCTAssertTrue(next.stderr.contains("recovered"), next.stderr)
        let videos = libraryFiles(folder).filter { $0.hasSuffix(".mp4") }
        XCTAssertEqual(videos.count, 2, "\(folder.files())")
        XCTAssertFalse(folder.files().contains { $0.hasSuffix(".part") })
        let salvaged = try XCTUnwrap(videos.first)  // names sort by start time
        let probe = try FFprobe.probe(folder.path + "/" + salvaged)
        let seconds = try XCTUnwrap(probe.video).durationSeconds
        XCTAssertGreaterThanOrEqual(seconds, recordedBeforeKill - 2.0, "lost more than 2 s")
        XCTAssertLessThanOrEqual(seconds, recordedBeforeKill + 0.5)
    }

    /// The field crash, through the binary: a torn `.part` whose last box claims a 64-bit
    /// size near Int64.max made `kioskcam salvage` die with "arithmetic overflow" (and
    /// the daemon, which salvages at start, crash on every boot).
    func testSalvageOfATornBoxSizeIsNotACrash() throws {
        let folder = TemporaryDirectory()
        let incoming = folder.path + "/.incoming"
        try FileManager.default.createDirectory(atPath: incoming, withIntermediateDirectories: true)
        func box(_ type: String, _ payload: Int) -> [UInt8] {
            let size = UInt32(8 + payload)
            return [UInt8(size >> 24), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)]
                + Array(type.utf8) + [UInt8](repeating: 0, count: payload)
        }
        let torn = box("ftyp", 16) + box("moov", 64) + [0, 0, 0, 1] + Array("moof".utf8)
            + [0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xF0] + [UInt8](repeating: 1, count: 200)
        let temp = incoming + "/video-20261122-101010.mp4.part"
        try Data(torn).write(to: URL(fileURLWithPath: temp))
        let result = try kioskcam(["salvage", "--root", folder.path])
        XCTAssertEqual(result.status, 0, "stdout: \(result.stdout)\nstderr: \(result.stderr)")
        XCTAssertTrue(result.stdout.contains("removed \(temp): no complete fragment was written"), result.stdout)
        XCTAssertFalse(FileManager.default.fileExists(atPath: temp))
    }

    func testBadInputIsAClearErrorAndWritesNothing() throws {
        let folder = TemporaryDirectory()
        let root = folder.path + "/media"
        let badConfig = folder.path + "/bad.toml"
        try "[camera]\nfps = 500\n".write(toFile: badConfig, atomically: true, encoding: .utf8)
        let unknownKey = folder.path + "/unknown.toml"
        try "# comment\n[encoder]\nvideo_codek = \"libx264\"\n".write(toFile: unknownKey, atomically: true, encoding: .utf8)
        let cases: [(arguments: [String], status: Int32, mentions: [String])] = [
            (["record", "--encoder", "h264_nope"], 64, ["h264_nope", "libx264"]),
            (["record", "--size", "100000x5"], 64, ["--size", "WIDTHxHEIGHT"]),
            (["record", "--size", "banana"], 64, ["--size"]),
            (["record", "--fps", "0"], 64, ["--fps", "1 to 120"]),
            (["record", "--duration", "soon"], 64, ["--duration"]),
            (["record", "--mic", "bluetooth"], 64, ["--mic"]),
            (["record", "--camera", "file:/nonexistent/frames.yuv"], 1, ["/nonexistent/frames.yuv"]),
            (["record", "--mic", "file:/nonexistent.wav"], 1, ["/nonexistent.wav"]),
            (["record", "--config", badConfig], 78, ["line 2", "camera.fps", "1 to 120"]),
            (["record", "--config", unknownKey], 78, ["line 3", "video_codek", "video_codec"]),
            (["record", "--config", folder.path + "/missing.toml"], 78, ["does not exist"]),
            (["record", "--camera", "/dev/video97"], 1, ["/dev/video97", "kioskcam probe"]),
            (["record", "--camera", "/dev/null"], 1, ["/dev/null", "not a V4L2"]),
            (["record", "--mic", "alsa:hw:7,0"], 1, ["hw:7,0", "arecord -l"]),
            (["record", "--control", "zoom=far"], 64, ["zoom", "whole number"]),
            (["record", "--control", "warp=9"], 64, ["warp", "zoom"]),
        ]
        for (arguments, status, mentions) in cases {
            let duration = arguments.contains("--duration") ? [] : ["--duration", "1s"]
            let result = try kioskcam(arguments + ["--root", root, "--quiet"] + duration)
            XCTAssertEqual(result.status, status, "\(arguments): \(result.stderr)")
            for word in mentions {
                XCTAssertTrue(result.stderr.contains(word), "\(arguments) should mention \(word): \(result.stderr)")
            }
            XCTAssertFalse(result.stderr.contains("Fatal error"), "\(arguments) crashed: \(result.stderr)")
        }
        XCTAssertTrue(libraryFiles(folder).filter { $0.hasPrefix("media/") }.isEmpty, "\(folder.files())")
    }

    func testUnwritableRootNamesTheFix() throws {
        let result = try kioskcam(["record", "--root", "/proc/kioskcam-test", "--duration", "1s", "--quiet"])
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stderr.contains("/proc/kioskcam-test"), result.stderr)
        XCTAssertTrue(result.stderr.contains("--root"), "names the fix: \(result.stderr)")
    }

    func testHelpAndVersion() throws {
        let help = try kioskcam(["--help"])
        XCTAssertEqual(help.status, 0)
        for command in ["record", "snapshot", "salvage", "config"] {
            XCTAssertTrue(help.stdout.contains(command), command)
            let sub = try kioskcam([command, "--help"])
            XCTAssertEqual(sub.status, 0, command)
            XCTAssertTrue(sub.stdout.contains("USAGE: kioskcam \(command)"), sub.stdout)
        }
        let version = try kioskcam(["--version"])
        XCTAssertTrue(version.stdout.hasPrefix("kioskcam "), version.stdout)
        XCTAssertTrue(version.stdout.contains("libavcodec"), version.stdout)
    }

    /// The commands are named by what they do (issue 30): `broadcast start|stop` beside
    /// `event start|stop`, `input-monitor` for the wiring check. The old names stay for one
    /// release, hidden from the help, and say the new one on stderr.
    func testCommandNamesAndTheOldSpellings() throws {
        let help = try kioskcam(["--help"]).stdout
        XCTAssertTrue(help.contains("input-monitor"), help)
        for old in ["broadcast-start", "broadcast-stop", "\n  events "] {
            XCTAssertFalse(help.contains(old), "\(old) is hidden: \(help)")
        }
        let broadcast = try kioskcam(["broadcast", "--help"])
        XCTAssertEqual(broadcast.status, 0, broadcast.stderr)
        for sub in ["send", "start", "stop"] {
            XCTAssertTrue(broadcast.stdout.contains("\n  \(sub) "), "\(sub) in \(broadcast.stdout)")
        }
        // No daemon: the control socket of this configuration is not there.
        let folder = TemporaryDirectory()
        let config = folder.path + "/kioskcam.toml"
        try "[control]\nsocket = \"\(folder.path)/none.sock\"\n".write(toFile: config, atomically: true, encoding: .utf8)
        for (old, new) in [(["broadcast-start", "--to", "library", "--config", config], ["broadcast", "start", "--to", "library", "--config", config]),
                           (["broadcast-stop", "--config", config], ["broadcast", "stop", "--config", config]),
                           (["events", "--device", "/dev/null"], ["input-monitor", "--device", "/dev/null"])] {
            let viaOld = try kioskcam(old)
            let viaNew = try kioskcam(new)
            XCTAssertNotEqual(viaNew.status, 0, "no daemon, no such device: \(new)")
            XCTAssertEqual(viaOld.status, viaNew.status, "\(old) runs \(new): \(viaOld.stderr)")
            XCTAssertEqual(viaOld.stdout, viaNew.stdout)
            let name = new.prefix(new[0] == "broadcast" ? 2 : 1).joined(separator: " ")
            XCTAssertTrue(viaOld.stderr.contains("`\(old[0])` is now `kioskcam \(name)`"), viaOld.stderr)
            XCTAssertTrue(viaOld.stderr.contains(viaNew.stderr.trimmingCharacters(in: .whitespacesAndNewlines)), "the same error: \(viaOld.stderr)")
            XCTAssertFalse(viaNew.stderr.contains("is now"), viaNew.stderr)
        }
        // The daemon's own spelling for a broadcast of its own goes to `send` (the default).
        let send = try kioskcam(["broadcast", "--to", "library", "--source", "nowhere"])
        XCTAssertEqual(send.status, 64, send.stderr)
    }

    func testShippedConfigurationPasses() throws {
        let result = try kioskcam(["config", "check", "--config", Package.root() + "/rootfs/etc/kioskcam/kioskcam.toml"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.contains("configuration OK"))
    }

    /// `config overlay --until` draws a file for each second, as `--time` does for one
    /// (the HIL's overlay checks draw their candidates so); a range it cannot draw is refused.
    func testConfigOverlayDrawsEachSecondOfARange() throws {
        let folder = TemporaryDirectory()
        let config = folder.path + "/k.toml"
        try "[camera]\nsize = \"160x120\"\n[overlay]\ntext = \"%H:%M:%S\"\n".write(toFile: config, atomically: true, encoding: .utf8)
        let first = 1_795_916_443
        let range = try kioskcam(["config", "overlay", "--config", config, "--time", "\(first)", "--until", "\(first + 2)",
                                  "--out", folder.path + "/ref-{time}.yuv"])
        XCTAssertEqual(range.status, 0, range.stderr)
        let paths = (first...first + 2).map { folder.path + "/ref-\($0).yuv" }
        XCTAssertEqual(range.stdout.split(separator: "\n").map(String.init), paths)
        let pictures = try paths.map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
        XCTAssertEqual(pictures.map(\.count), [160 * 120 * 3 / 2, 160 * 120 * 3 / 2, 160 * 120 * 3 / 2])
        XCTAssertEqual(Set(pictures).count, 3, "each second shows its own time")
        let single = try kioskcam(["config", "overlay", "--config", config, "--time", "\(first + 1)", "--out", folder.path + "/one.yuv"])
        XCTAssertEqual(single.status, 0, single.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: folder.path + "/one.yuv")), pictures[1], "the same picture as --time alone")
        let refused: [([String], String)] = [
            (["--until", "\(first)"], "--until needs --time"),
            (["--time", "\(first)", "--until", "\(first - 1)"], "must be from --time"),
            (["--time", "\(first)", "--until", "\(first + 3_600)"], "must be from --time"),
            (["--time", "\(first)", "--until", "nan"], "must be from --time"),
        ]
        for (arguments, message) in refused {
            let result = try kioskcam(["config", "overlay", "--config", config, "--out", folder.path + "/x-{time}.yuv"] + arguments)
            XCTAssertEqual(result.status, 64, "\(arguments): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
        let unnamed = try kioskcam(["config", "overlay", "--config", config, "--time", "\(first)", "--until", "\(first + 1)",
                                    "--out", folder.path + "/same.yuv"])
        XCTAssertEqual(unnamed.status, 64, unnamed.stderr)
        XCTAssertTrue(unnamed.stderr.contains("needs {time}"), unnamed.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.path + "/same.yuv"), "nothing written when refused")
    }

    /// `config check` finds a missing MQTT password file or CA before the daemon would.
    func testConfigCheckFindsMissingMQTTFiles() throws {
        let folder = TemporaryDirectory()
        let config = folder.path + "/k.toml"
        try "[mqtt]\nurl = \"mqtt://broker.lan\"\npassword_file = \"\(folder.path)/absent\"\n".write(toFile: config, atomically: true, encoding: .utf8)
        let missing = try kioskcam(["config", "check", "--config", config])
        XCTAssertEqual(missing.status, 78)
        XCTAssertTrue(missing.stderr.contains("mqtt.password_file \(folder.path)/absent cannot be read"), missing.stderr)
        try "secret\n".write(toFile: folder.path + "/absent", atomically: true, encoding: .utf8)
        try "[mqtt]\nurl = \"mqtts://broker.lan\"\npassword_file = \"\(folder.path)/absent\"\nca_file = \"\(folder.path)/no-ca.pem\"\n"
            .write(toFile: config, atomically: true, encoding: .utf8)
        let noCA = try kioskcam(["config", "check", "--config", config])
        XCTAssertEqual(noCA.status, 78)
        XCTAssertTrue(noCA.stderr.contains("mqtt.ca_file"), noCA.stderr)
        try "[mqtt]\nurl = \"mqtts://broker.lan\"\npassword_file = \"\(folder.path)/absent\"\n".write(toFile: config, atomically: true, encoding: .utf8)
        let good = try kioskcam(["config", "check", "--config", config])
        XCTAssertEqual(good.status, 0, good.stderr)
        XCTAssertTrue(good.stdout.contains("mqtt.url = mqtts://broker.lan:8883"), good.stdout)
    }

    func testListShowsKindStartDurationAndSize() throws {
        let folder = TemporaryDirectory()
        XCTAssertEqual(try kioskcam(["record", "--duration", "1s", "--root", folder.path, "--size", "320x240", "--quiet"]).status, 0)
        XCTAssertEqual(try kioskcam(["record", "--audio-only", "--duration", "1s", "--root", folder.path, "--quiet"]).status, 0)
        let listed = try kioskcam(["list", "--json", "--root", folder.path])
        XCTAssertEqual(listed.status, 0, listed.stderr)
        struct Entry: Decodable { var kind: String; var start: String; var seconds: Double?; var bytes: Int; var path: String }
        let entries = try JSONDecoder().decode([Entry].self, from: Data(listed.stdout.utf8))
        XCTAssertEqual(entries.map(\.kind).sorted(), ["audio", "video"])
        for entry in entries {
            XCTAssertEqual(entry.seconds ?? 0, 1.0, accuracy: 0.05, entry.path)
            XCTAssertGreaterThan(entry.bytes, 1000)
            XCTAssertTrue(entry.start.range(of: #"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$"#, options: .regularExpression) != nil, entry.start)
        }
        let bad = try kioskcam(["list", "--date", "2026-11-22", "--root", folder.path])
        XCTAssertEqual(bad.status, 64)
        XCTAssertTrue(bad.stderr.contains("YYYYMMDD"), bad.stderr)
    }

    func testListEventsShowsTheLastMessageOfEachEventAndSkipsTornLines() throws {
        let folder = TemporaryDirectory()
        let log = EventLogFile(root: folder.path)
        let start = 1_795_602_900.0
        var event = EventMessage(type: .new, id: "20261124-101500-1", start: start, clipStart: start - 5,
                                 triggers: [.motion], clip: "video/20261124/101455-motion.mp4")
        try log.append(event, day: "20261124")
        event.type = .end
        event.triggers = [.motion, .sound]
        event.peakScore = 4.25
        event.end = start + 15
        try log.append(event, day: "20261124")
        let torn = String(event.line.prefix(30))
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: log.path(forDay: "20261124")))
        handle.seekToEndOfFile()
        handle.write(Data(torn.utf8))
        try handle.close()

        let text = try kioskcam(["list", "--events", "--root", folder.path])
        XCTAssertEqual(text.status, 0, text.stderr)
        XCTAssertTrue(text.stdout.contains("motion,sound"), text.stdout)
        XCTAssertTrue(text.stdout.contains("20.0 s"), "from the clip's start (pre-event) to its end: \(text.stdout)")
        XCTAssertTrue(text.stdout.contains("video/20261124/101455-motion.mp4"), text.stdout)
        XCTAssertTrue(text.stdout.contains("1 events"), text.stdout)
        XCTAssertTrue(text.stderr.contains("skipped 1 unreadable line"), text.stderr)

        let json = try kioskcam(["list", "--events", "--json", "--date", "20261124", "--root", folder.path])
        XCTAssertEqual(json.status, 0, json.stderr)
        let events = try JSONDecoder().decode([EventMessage].self, from: Data(json.stdout.utf8))
        XCTAssertEqual(events, [event])

        let none = try kioskcam(["list", "--events", "--date", "20261125", "--root", folder.path])
        XCTAssertEqual(none.status, 0, none.stderr)
        XCTAssertTrue(none.stdout.contains("no events"), none.stdout)
    }

    func testPurgeDeletesExpiredDaysOnlyAndNeverFollowsSymlinks() throws {
        let folder = TemporaryDirectory()
        let root = folder.path + "/media", outside = folder.path + "/outside"
        let fm = FileManager.default
        // Record first: start-up upkeep would already purge what is set up below.
        XCTAssertEqual(try kioskcam(["record", "--duration", "1s", "--root", root, "--size", "320x240", "--quiet"]).status, 0)
        for path in [root + "/video/20200101", root + "/video/notes", outside, root + "/audio"] {
            try fm.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
        try Data("old".utf8).write(to: URL(fileURLWithPath: root + "/video/20200101/000000.mp4"))
        try Data("precious".utf8).write(to: URL(fileURLWithPath: outside + "/keep.mp4"))
        try fm.createSymbolicLink(atPath: root + "/audio/20200102", withDestinationPath: outside)

        let dry = try kioskcam(["purge", "--dry-run", "--root", root])
        XCTAssertEqual(dry.status, 0, dry.stderr)
        XCTAssertTrue(dry.stdout.contains("would delete video/20200101"), dry.stdout)
        XCTAssertTrue(fm.fileExists(atPath: root + "/video/20200101/000000.mp4"), "a dry run deletes nothing")

        let purge = try kioskcam(["purge", "--root", root])
        XCTAssertEqual(purge.status, 0, purge.stderr)
        XCTAssertFalse(fm.fileExists(atPath: root + "/video/20200101"))
        XCTAssertTrue(fm.fileExists(atPath: root + "/video/notes"), "names that are not dates are never deleted")
        XCTAssertTrue(purge.stdout.contains("notes"), "and they are reported: \(purge.stdout)")
        XCTAssertEqual(try String(contentsOfFile: outside + "/keep.mp4", encoding: .utf8), "precious", "a symlink is never followed")
        XCTAssertEqual(try kioskcam(["list", "--root", root]).stdout.components(separatedBy: "/video/").count - 1, 1,
                       "today's recording stays")
    }

    /// `storage.event_retention_days` longer than `retention_days`: an old day loses its
    /// continuous footage and keeps its event clip, snapshot and log until their own time.
    func testPurgeKeepsEventClipsForEventRetentionDays() throws {
        let folder = TemporaryDirectory()
        let root = folder.path + "/media", config = folder.path + "/kioskcam.toml"
        let fm = FileManager.default
        let day = CalendarDate(LocalTimestamp(Date())).adding(days: -10).folderName
        let older = CalendarDate(LocalTimestamp(Date())).adding(days: -40).folderName
        try "[storage]\nmedia_root = \"\(root)\"\nretention_days = 7\nevent_retention_days = 30\n"
            .write(toFile: config, atomically: true, encoding: .utf8)
        for path in ["video/\(day)/120000.mp4", "video/\(day)/120030-motion.mp4", "photo/\(day)/120031-motion.jpg",
                     "audio/\(day)/120000.m4a", "events/\(day).jsonl", "video/\(older)/090000-sound.mp4", "events/\(older).jsonl"] {
            try fm.createDirectory(atPath: (root + "/" + path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data("x".utf8).write(to: URL(fileURLWithPath: root + "/" + path))
        }
        let dry = try kioskcam(["purge", "--dry-run", "--config", config])
        XCTAssertEqual(dry.status, 0, dry.stderr)
        XCTAssertTrue(dry.stdout.contains("would delete video/\(day) continuous footage (1 file)"), dry.stdout)
        XCTAssertTrue(dry.stdout.contains("would delete video/\(older) "), dry.stdout)
        XCTAssertTrue(dry.stdout.contains("40 days old (retention 7 days, event_retention_days 30)"), dry.stdout)

        let purge = try kioskcam(["purge", "--config", config])
        XCTAssertEqual(purge.status, 0, purge.stderr)
        XCTAssertFalse(fm.fileExists(atPath: root + "/video/\(day)/120000.mp4"), "footage goes after 7 days")
        XCTAssertFalse(fm.fileExists(atPath: root + "/audio/\(day)"))
        for kept in ["video/\(day)/120030-motion.mp4", "photo/\(day)/120031-motion.jpg", "events/\(day).jsonl"] {
            XCTAssertTrue(fm.fileExists(atPath: root + "/" + kept), "\(kept) is kept for 30 days")
        }
        XCTAssertFalse(fm.fileExists(atPath: root + "/video/\(older)"), "a clip past 30 days goes")
        XCTAssertFalse(fm.fileExists(atPath: root + "/events/\(older).jsonl"), "and its day's event log with it")
    }

    /// The disk guard refuses to start rather than fill the disk, and says why.
    func testRecordingIsRefusedWhenTheDiskIsBelowTheFloor() throws {
        let folder = TemporaryDirectory()
        let config = folder.path + "/floor.toml"
        try "[storage]\nmin_free_megabytes = 16777216\n".write(toFile: config, atomically: true, encoding: .utf8)
        let result = try kioskcam(["record", "--config", config, "--duration", "1s", "--root", folder.path + "/media", "--quiet"])
        XCTAssertEqual(result.status, 1, result.stderr)
        XCTAssertTrue(result.stderr.contains("below the floor"), result.stderr)
        XCTAssertTrue(result.stderr.contains("min_free"), "names the setting: \(result.stderr)")
        XCTAssertTrue(libraryFiles(folder).filter { $0.contains("/video/") }.isEmpty)
    }

    /// The disk guard on a real small file system: below the floor the oldest whole
    /// days go first, the recording then proceeds, and every file left plays.
    func testDiskGuardDeletesOldestDaysFirstOnASmallDisk() throws {
        let folder = TemporaryDirectory()
        let disk = folder.path + "/disk"
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
        let mounted = try Tool.run("mount", ["-t", "tmpfs", "-o", "size=16m", "tmpfs", disk], allowFailure: true)
        guard mounted.status == 0 else { throw XCTSkip("cannot mount a tmpfs here (\(mounted.stderr)); mounting needs root: run the tests as root to cover this") }
        defer { _ = try? Tool.run("umount", [disk], allowFailure: true) }
        let root = disk + "/media"

        // A real clip to stand in for each older day's recordings, plus 2 MiB of bulk.
        let clipRoot = folder.path + "/clip"
        let clip = try kioskcam(["record", "--duration", "1s", "--size", "320x240", "--mic", "none", "--root", clipRoot, "--quiet"])
        let clipPath = clip.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let calendar = Calendar(identifier: .gregorian)
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyyMMdd"
        let days = (1...5).map { formatter.string(from: calendar.date(byAdding: .day, value: -$0, to: Date()) ?? Date()) }
        for day in days {
            let directory = root + "/video/" + day
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: clipPath, toPath: directory + "/120000.mp4")
            try Data(count: 2 * 1_048_576).write(to: URL(fileURLWithPath: directory + "/120100.mp4.bulk"))
        }
        let config = folder.path + "/guard.toml"
        try "[storage]\nmin_free_megabytes = 9\n".write(toFile: config, atomically: true, encoding: .utf8)

        let result = try kioskcam(["record", "--config", config, "--duration", "1s", "--size", "320x240", "--root", root, "--quiet"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let remaining = days.filter { FileManager.default.fileExists(atPath: root + "/video/" + $0) }
        // ~6 MiB free of 16 with a 9 MiB floor: the two oldest days (5 and 4 days ago) go.
        XCTAssertEqual(remaining, Array(days.prefix(3)), "oldest first: \(result.stderr)")
        let videos = try FileManager.default.subpathsOfDirectory(atPath: root + "/video").filter { $0.hasSuffix(".mp4") }
        XCTAssertEqual(videos.count, 4, "three older days and the new recording: \(videos)")
        for video in videos {
            XCTAssertGreaterThan(try XCTUnwrap(FFprobe.probe(root + "/video/" + video).video).frameCount, 0, video)
        }
    }
}
