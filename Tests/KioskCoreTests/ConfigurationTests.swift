import Foundation
import XCTest
@testable import KioskCore

final class ConfigurationTests: XCTestCase {

    // MARK: Helpers

    private func parse(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> Configuration? {
        do {
            return try Configuration(toml: text, file: "test.toml")
        } catch {
            XCTFail("unexpected error: \(error)", file: file, line: line)
            return nil
        }
    }

    /// Asserts that `text` is rejected at `expectedLine`, naming `key` (if given), with every fragment in the message.
    @discardableResult
    private func assertError(
        _ text: String, line expectedLine: Int?, key: String?, _ fragments: String...,
        file: StaticString = #filePath, line: UInt = #line
    ) -> ConfigurationError? {
        do throws(ConfigurationError) {
            let configuration = try Configuration(toml: text, file: "test.toml")
            XCTFail("expected an error, got \(configuration)", file: file, line: line)
            return nil
        } catch {
            XCTAssertEqual(error.file, "test.toml", file: file, line: line)
            XCTAssertEqual(error.line, expectedLine, "wrong line in: \(error)", file: file, line: line)
            XCTAssertEqual(error.key, key, "wrong key in: \(error)", file: file, line: line)
            for fragment in fragments {
                XCTAssertTrue(error.message.contains(fragment), "'\(error.message)' lacks '\(fragment)'", file: file, line: line)
            }
            return error
        }
    }

    /// The package root, found from this file's location (Tests/KioskCoreTests/<file>).
    private var packageRoot: URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()  // KioskCoreTests
            .deletingLastPathComponent()  // Tests
            .deletingLastPathComponent()  // package root
    }

    // MARK: Defaults

    func testDefaults() {
        let c = Configuration()
        XCTAssertEqual(c.storage.mediaRoot, "/var/lib/kioskcam/media")
        XCTAssertEqual(c.storage.segmentSeconds, 300)
        XCTAssertNil(c.storage.segmentMaxBytes)
        XCTAssertEqual(c.camera.source, .automatic, "a real camera when there is one, else the test pattern")
        XCTAssertNil(c.camera.zoom, "controls are left alone unless configured")
        XCTAssertEqual(c.camera.lostAfterSeconds, 5)
        XCTAssertEqual(c.camera.size, FrameSize(width: 1280, height: 720))
        XCTAssertEqual(c.camera.framesPerSecond, 30)
        XCTAssertEqual(c.microphone.source, .automatic)
        XCTAssertEqual(c.encoder.videoCodec, "auto", "the hardware encoder where it works, else libx264")
        XCTAssertEqual(c.encoder.preset, "veryfast")
        XCTAssertEqual(c.encoder.tune, "zerolatency")
        XCTAssertEqual(c.stream.url, "", "no stream unless configured")
        XCTAssertNil(c.encoder.videoBitrate)
        XCTAssertEqual(c.encoder.keyframeInterval, 30)
        XCTAssertEqual(c.logging.level, .info)
        XCTAssertEqual(c.segmentPolicy, SegmentPolicy(maximumSeconds: 300, maximumBytes: nil))
        XCTAssertEqual(Configuration.defaultPath, "/etc/kioskcam/kioskcam.toml")
    }

    func testEmptyAndCommentOnlyFilesGiveDefaults() {
        XCTAssertEqual(parse(""), Configuration())
        XCTAssertEqual(parse("# nothing set\n\n[camera]\n# fps = 60\n"), Configuration())
    }

    // MARK: A full file

    /// A value for every key, none of them the default. Keyed by dotted name.
    private static let fullFile: [(section: String, key: String, value: String)] = [
        ("storage", "media_root", "\"/srv/kiosk media\""),
        ("storage", "segment_seconds", "600.5"),
        ("storage", "segment_max_megabytes", "2048"),
        ("storage", "sync_interval_seconds", "0.5"),
        ("storage", "retention_days", "14"),
        ("storage", "event_retention_days", "60"),
        ("storage", "min_free_megabytes", "2048"),
        ("storage", "min_free_percent", "5"),
        ("camera", "source", "\"file:/tmp/frames.raw\""),
        ("camera", "size", "\"640x480\""),
        ("camera", "fps", "25"),
        ("camera", "test_clock", "true"),
        ("camera", "pixel_format", "\"NV12\""),
        ("camera", "lost_after_seconds", "3"),
        ("camera", "zoom", "150"),
        ("camera", "focus", "\"auto\""),
        ("camera", "exposure", "250"),
        ("camera", "white_balance", "4500"),
        ("camera", "brightness", "-10"),
        ("camera", "contrast", "40"),
        ("camera", "rotation", "270"),
        ("camera", "mirror", "true"),
        ("microphone", "source", "\"file:/tmp/a.wav\""),
        ("microphone", "sample_rate", "44_100"),
        ("microphone", "channels", "2"),
        ("microphone", "tone_hz", "1000"),
        ("encoder", "video_codec", "\"h264_v4l2m2m\""),
        ("encoder", "preset", "\"fast\""),
        ("encoder", "video_bitrate_kbps", "2500"),
        ("encoder", "keyframe_interval", "15"),
        ("encoder", "audio_bitrate_kbps", "96"),
        ("encoder", "threads", "4"),
        ("encoder", "tune", "\"none\""),
        ("stream", "url", "\"rtsp://127.0.0.1:8554/cam\""),
        ("stream", "audio", "false"),
        ("broadcast", "to", "[\"library\", \"rtmp://10.0.0.2/live/kiosk\"]"),
        ("broadcast", "size", "\"960x540\""),
        ("events", "mode", "\"both\""),
        ("events", "pre_seconds", "3.5"),
        ("events", "post_seconds", "20"),
        ("events", "gap_seconds", "5"),
        ("events", "max_seconds", "600"),
        ("events", "motion", "false"),
        ("events", "sound", "true"),
        ("events", "sound_dbfs", "-30.5"),
        ("events", "sound_ms", "250"),
        ("motion", "threshold_percent", "2.5"),
        ("motion", "min_frames", "3"),
        ("motion", "lightswitch_percent", "40"),
        ("motion", "fps", "5"),
        ("motion", "mask", "[\"0,0,100,20\", \"50, 50, 25, 50\"]"),
        ("motion", "mask_png", "\"/etc/kioskcam/mask.png\""),
        ("snapshot", "jpeg_quality", "75"),
        ("logging", "level", "\"debug\""),
        ("buttons", "chip", "\"gpiochip4\""),
        ("buttons", "record_line", "\"GPIO5\""),
        ("buttons", "record_short", "\"snapshot\""),
        ("buttons", "record_long", "\"audio\""),
        ("buttons", "snapshot_line", "6"),
        ("buttons", "snapshot_short", "\"record\""),
        ("buttons", "snapshot_long", "\"record\""),
        ("buttons", "extra_line", "23"),
        ("buttons", "extra_short", "\"snapshot\""),
        ("buttons", "extra_long", "\"record\""),
        ("buttons", "active_low", "false"),
        ("buttons", "bias", "\"pull-down\""),
        ("buttons", "debounce_ms", "50"),
        ("buttons", "long_press_ms", "2000"),
        ("buttons", "led_line", "\"none\""),
        ("buttons", "led_active_low", "true"),
        ("touch", "device", "\"/dev/input/event2\""),
        ("touch", "rotation", "90"),
        ("touch", "swap_axes", "true"),
        ("touch", "flip_x", "true"),
        ("touch", "flip_y", "true"),
        ("touch", "calibration", "[200, 3900, 150, 3950]"),
        ("touch", "release_after_seconds", "5"),
        ("screen", "framebuffer", "\"/dev/fb1\""),
        ("screen", "rotation", "270"),
        ("screen", "virtual_size", "\"480x800\""),
        ("screen", "preview_fps", "5"),
        ("screen", "playback_device", "\"plughw:0,0\""),
        ("lock", "idle_seconds", "3"),
        ("lock", "blank_seconds", "0"),
        ("lock", "failures_before_lockout", "3"),
        ("lock", "lockout_seconds", "10"),
        ("lock", "max_lockout_seconds", "40"),
        ("lock", "start_locked", "false"),
        ("control", "state_directory", "\"/srv/kioskcam-state\""),
        ("control", "socket", "\"/srv/kioskcam.sock\""),
        ("control", "socket_group", "\"\""),
        ("control", "max_clients", "4"),
        ("control", "idle_timeout_seconds", "10"),
        ("control", "metrics_file", "\"\""),
        ("control", "metrics_interval_seconds", "30"),
        ("mqtt", "url", "\"mqtts://broker.lan:8884\""),
        ("mqtt", "username", "\"camera\""),
        ("mqtt", "password_file", "\"/etc/kioskcam/mqtt-password\""),
        ("mqtt", "ca_file", "\"/etc/kioskcam/broker-ca.pem\""),
        ("mqtt", "topic_prefix", "\"home/cameras\""),
        ("mqtt", "discovery_prefix", "\"ha\""),
        ("mqtt", "commands", "false"),
        ("mqtt", "state_interval_seconds", "60"),
        ("mqtt", "queue_messages", "1000"),
        ("mqtt", "still_interval_seconds", "300"),
        ("mqtt", "device_name", "\"Front door\""),
        ("upload", "url", "\"s3://kiosk-footage/site-a\""),
        ("upload", "endpoint", "\"http://127.0.0.1:9000/\""),
        ("upload", "region", "\"eu-central-1\""),
        ("upload", "access_key_id", "\"AKIAEXAMPLE\""),
        ("upload", "secret_access_key_file", "\"/etc/kioskcam/s3-secret\""),
        ("upload", "kinds", "[\"events\", \"photo\"]"),
        ("upload", "max_kbps", "400"),
        ("upload", "delete_after_upload", "true"),
        ("web", "enabled", "false"),
        ("web", "listen", "\"127.0.0.1:9443\""),
        ("web", "tls", "\"files\""),
        ("web", "cert_file", "\"/etc/kioskcam/web.pem\""),
        ("web", "key_file", "\"/etc/kioskcam/web.key\""),
        ("web", "max_connections", "32"),
        ("web", "idle_timeout_seconds", "20"),
        ("web", "max_viewers", "4"),
        ("rtsp", "enabled", "true"),
        ("rtsp", "listen", "\"127.0.0.1:9554\""),
        ("rtsp", "udp_port", "9000"),
        ("rtsp", "max_clients", "3"),
        ("rtsp", "allow_anonymous", "true"),
        ("rtsp", "basic_auth", "true"),
        ("rtsp", "substream", "\"640x360\""),
        ("rtsp", "substream_fps", "10"),
        ("rtsp", "substream_bitrate_kbps", "400"),
        ("onvif", "enabled", "true"),
        ("onvif", "discovery", "false"),
        ("overlay", "text", "\"%Y-%m-%d %H:%M:%S  {device_name}\""),
        ("overlay", "position", "\"top-right\""),
        ("overlay", "size_percent", "6.5"),
        ("overlay", "preview", "true"),
        ("privacy", "masks", "[\"60,0,40,30\", [0, 0.75, 0.25, 0.25]]"),
        ("privacy", "mask_png", "\"/etc/kioskcam/privacy.png\""),
        ("timelapse", "interval_seconds", "15"),
        ("timelapse", "fps", "25"),
    ]

    /// Sections whose expected values come from parsing the section alone (their own
    /// tests check each value); the full file must agree with that.
    private static let sectionsCheckedAlone = ["buttons", "touch", "screen", "lock", "control", "mqtt"]

    func testFullFileSetsEveryKey() throws {
        XCTAssertEqual(Set(Self.fullFile.map { $0.section + "." + $0.key }), Set(Configuration.knownKeys),
                       "this test must set every known key")
        var text = "# kioskcam test configuration\n"
        var section = ""
        for entry in Self.fullFile {
            if entry.section != section {
                text += "\n[\(entry.section)]\n"
                section = entry.section
            }
            text += "\(entry.key) = \(entry.value)  # comment\n"
        }
        let c = try XCTUnwrap(parse(text))

        var expected = Configuration()
        expected.storage.mediaRoot = "/srv/kiosk media"
        expected.storage.segmentSeconds = 600.5
        expected.storage.segmentMaxBytes = 2048 * 1_048_576
        expected.storage.syncIntervalSeconds = 0.5
        expected.storage.retentionDays = 14
        expected.storage.eventRetentionDays = 60
        expected.storage.minFreeBytes = 2048 * 1_048_576
        expected.storage.minFreePercent = 5
        expected.camera.source = .rawFile(path: "/tmp/frames.raw")
        expected.camera.size = FrameSize(width: 640, height: 480)
        expected.camera.framesPerSecond = 25
        expected.camera.testClock = true
        expected.camera.pixelFormat = .nv12
        expected.camera.lostAfterSeconds = 3
        expected.camera.zoom = 150
        expected.camera.focus = .automatic
        expected.camera.exposure = .value(250)
        expected.camera.whiteBalance = .value(4500)
        expected.camera.brightness = -10
        expected.camera.contrast = 40
        expected.camera.orientation = PictureOrientation(rotation: .threeQuarters, mirror: true)
        expected.microphone.source = .wavFile(path: "/tmp/a.wav")
        expected.microphone.sampleRate = 44_100
        expected.microphone.channels = 2
        expected.microphone.toneFrequency = 1000
        expected.encoder.videoCodec = "h264_v4l2m2m"
        expected.encoder.preset = "fast"
        expected.encoder.videoBitrate = 2_500_000
        expected.encoder.keyframeInterval = 15
        expected.encoder.audioBitrate = 96_000
        expected.encoder.threads = 4
        expected.encoder.tune = "none"
        expected.stream.url = "rtsp://127.0.0.1:8554/cam"
        expected.stream.audio = false
        expected.broadcast.destinations = ["library", "rtmp://10.0.0.2/live/kiosk"]
        expected.broadcast.size = FrameSize(width: 960, height: 540)
        expected.events.mode = .both
        expected.events.timing = EventTiming(preSeconds: 3.5, postSeconds: 20, gapSeconds: 5, maxSeconds: 600)
        expected.events.motion = false
        expected.events.sound = true
        expected.events.soundDBFS = -30.5
        expected.events.soundMilliseconds = 250
        expected.motion.thresholdPercent = 2.5
        expected.motion.minimumFrames = 3
        expected.motion.lightSwitchPercent = 40
        expected.motion.framesPerSecond = 5
        expected.motion.ignoredRegions = [MotionRegion(x: 0, y: 0, width: 1, height: 0.2),
                                          MotionRegion(x: 0.5, y: 0.5, width: 0.25, height: 0.5)]
        expected.motion.maskPicture = "/etc/kioskcam/mask.png"
        expected.snapshot.jpegQuality = 75
        expected.logging.level = .debug
        expected.upload.url = "s3://kiosk-footage/site-a"
        expected.upload.endpoint = "http://127.0.0.1:9000"
        expected.upload.region = "eu-central-1"
        expected.upload.accessKeyID = "AKIAEXAMPLE"
        expected.upload.secretAccessKeyFile = "/etc/kioskcam/s3-secret"
        expected.upload.kinds = [.events, .photo]
        expected.upload.maxKbps = 400
        expected.upload.deleteAfterUpload = true
        expected.web.enabled = false
        expected.web.listen = WebListenAddress(host: "127.0.0.1", port: 9443)
        expected.web.tls = .files
        expected.web.certFile = "/etc/kioskcam/web.pem"
        expected.web.keyFile = "/etc/kioskcam/web.key"
        expected.web.maxConnections = 32
        expected.web.idleTimeoutSeconds = 20
        expected.web.maxViewers = 4
        expected.rtsp.enabled = true
        expected.rtsp.listen = WebListenAddress(host: "127.0.0.1", port: 9554)
        expected.rtsp.udpPort = 9000
        expected.rtsp.maxClients = 3
        expected.rtsp.allowAnonymous = true
        expected.rtsp.basicAuth = true
        expected.rtsp.substreamSize = FrameSize(width: 640, height: 360)
        expected.rtsp.substreamFramesPerSecond = 10
        expected.rtsp.substreamBitrate = 400_000
        expected.onvif.enabled = true
        expected.onvif.discovery = false
        expected.overlay.text = "%Y-%m-%d %H:%M:%S  {device_name}"
        expected.overlay.position = .topRight
        expected.overlay.sizePercent = 6.5
        expected.privacy.masks = [MotionRegion(x: 0.6, y: 0, width: 0.4, height: 0.3), MotionRegion(x: 0, y: 0.75, width: 0.25, height: 0.25)]
        expected.privacy.maskPicture = "/etc/kioskcam/privacy.png"
        expected.overlay.onPreview = true
        expected.timelapse.intervalSeconds = 15
        expected.timelapse.framesPerSecond = 25
        for section in Self.sectionsCheckedAlone {
            let alone = Self.fullFile.filter { $0.section == section }.map { "\($0.key) = \($0.value)" }
            let parsed = try XCTUnwrap(parse("[\(section)]\n" + alone.joined(separator: "\n") + "\n"))
            switch section {
            case "buttons": expected.buttons = parsed.buttons
            case "touch": expected.touch = parsed.touch
            case "screen": expected.screen = parsed.screen
            case "lock": expected.lock = parsed.lock
            case "mqtt": expected.mqtt = parsed.mqtt
            default: expected.control = parsed.control
            }
        }
        XCTAssertEqual(c, expected)
        XCTAssertEqual(c.lock.idleSeconds, 3)
        XCTAssertNil(c.lock.blankSeconds)
        XCTAssertFalse(c.lock.startLocked)
        XCTAssertEqual(c.control.maxClients, 4)
        XCTAssertNil(c.control.metricsFile)
        XCTAssertEqual(c.touch.rotation, .quarter)
        XCTAssertEqual(c.screen.rotation, .threeQuarters)
        XCTAssertEqual(c.screen.previewFramesPerSecond, 5)
        // Each value on its own differs from the default, so each key is proven to apply.
        for entry in Self.fullFile {
            let single = parse("[\(entry.section)]\n\(entry.key) = \(entry.value)\n")
            XCTAssertNotNil(single)
            XCTAssertNotEqual(single, Configuration(), "\(entry.section).\(entry.key) = \(entry.value) changed nothing")
        }
        XCTAssertEqual(c.segmentPolicy, SegmentPolicy(maximumSeconds: 600.5, maximumBytes: 2048 * 1_048_576))
        XCTAssertEqual(c.effectiveVideoBitrate, 2_500_000)
    }

    func testDottedKeysWithoutSectionHeadersWorkToo() {
        let c = parse("camera.fps = 60\nlogging.level = \"error\"\n")
        XCTAssertEqual(c?.camera.framesPerSecond, 60)
        XCTAssertEqual(c?.logging.level, .error)
    }

    func testSourcesAndSpecialValues() {
        XCTAssertEqual(parse("[camera]\nsource = \"test\"")?.camera.source, .testPattern)
        XCTAssertEqual(parse("[microphone]\nsource = \"none\"")?.microphone.source, MicrophoneSource.none)
        XCTAssertEqual(parse("[microphone]\nsource = \"silence\"")?.microphone.source, .silence)
        XCTAssertEqual(parse("[microphone]\nsource = \"tone\"")?.microphone.source, .tone)
        XCTAssertEqual(parse("[microphone]\nsource = \"alsa:plughw:1,0\"")?.microphone.source, .alsa(device: "plughw:1,0"))
        XCTAssertEqual(parse("[microphone]\nsource = \"auto\"")?.microphone.source, .automatic)
        XCTAssertEqual(parse("[camera]\nsource = \"/dev/video2\"")?.camera.source, .device(path: "/dev/video2"))
        XCTAssertEqual(parse("[camera]\nsource = \"auto\"")?.camera.source, .automatic)
        XCTAssertThrowsError(try Configuration(toml: "[camera]\nfocus = \"manual\""), "a control is auto or a number")
        XCTAssertEqual(parse("[camera]\nexposure = 300")?.camera.exposure, .value(300))
        XCTAssertNil(parse("[storage]\nsegment_max_megabytes = 0")?.storage.segmentMaxBytes)
        XCTAssertNil(parse("[encoder]\nvideo_bitrate_kbps = 0")?.encoder.videoBitrate)
        // Integers are fine where a number is expected.
        XCTAssertEqual(parse("[storage]\nsegment_seconds = 60")?.storage.segmentSeconds, 60)
        for level in Configuration.LogLevel.allCases {
            XCTAssertEqual(parse("[logging]\nlevel = \"\(level.rawValue)\"")?.logging.level, level)
        }
        for format in PixelFormat.allCases {
            XCTAssertEqual(parse("[camera]\npixel_format = \"\(format.rawValue)\"")?.camera.pixelFormat, format)
        }
    }

    func testRangeBoundariesAreInclusive() {
        XCTAssertEqual(parse("[camera]\nfps = 1")?.camera.framesPerSecond, 1)
        XCTAssertEqual(parse("[camera]\nfps = 120")?.camera.framesPerSecond, 120)
        assertError("[camera]\nfps = 0", line: 2, key: "camera.fps", "from 1 to 120")
        assertError("[camera]\nfps = 121", line: 2, key: "camera.fps", "from 1 to 120")
        assertError("[camera]\nrotation = 45", line: 2, key: "camera.rotation", "0, 90, 180 or 270")
        assertError("[camera]\nmirror = 1", line: 2, key: "camera.mirror", "true or false")
        XCTAssertEqual(parse("[camera]\nsize = \"64x64\"")?.camera.size, FrameSize(width: 64, height: 64))
        XCTAssertEqual(parse("[camera]\nsize = \"4096x2160\"")?.camera.size, FrameSize(width: 4096, height: 2160))
        assertError("[camera]\nsize = \"62x64\"", line: 2, key: "camera.size", "64x64 to 4096x2160")
        assertError("[camera]\nsize = \"4098x2160\"", line: 2, key: "camera.size", "64x64 to 4096x2160")
        assertError("[camera]\nsize = \"640x2162\"", line: 2, key: "camera.size", "64x64 to 4096x2160")
        assertError("[storage]\nsync_interval_seconds = 0.1", line: 2, key: "storage.sync_interval_seconds", "from 0.2 to 60 seconds")
    }

    // MARK: Unknown keys and sections

    func testUnknownKeyNamesKeyLineAndSiblings() throws {
        let text = """
        [camera]
        fps = 30
        # a comment
        frame_rate = 2
        """
        let error = try XCTUnwrap(assertError(text, line: 4, key: "camera.frame_rate", "unknown key", "[camera]"))
        for sibling in ["source", "size", "fps", "pixel_format"] {
            XCTAssertTrue(error.message.contains(sibling), "'\(error.message)' lacks '\(sibling)'")
        }
        for stranger in ["sample_rate", "preset", "media_root", "camera.fps"] {
            XCTAssertFalse(error.message.contains(stranger), "'\(error.message)' names '\(stranger)'")
        }
        XCTAssertEqual(error.description, "test.toml line 4 (camera.frame_rate): \(error.message)")
    }

    func testUnknownSectionListsTheSections() throws {
        let error = try XCTUnwrap(assertError("[camera]\nfps = 30\n\n[network]\nssid = \"x\"\n", line: 5, key: "network.ssid", "unknown key"))
        for section in ["[storage]", "[camera]", "[microphone]", "[encoder]", "[snapshot]", "[logging]"] {
            XCTAssertTrue(error.message.contains(section), "'\(error.message)' lacks '\(section)'")
        }
        XCTAssertFalse(error.message.contains("fps"), error.message)
    }

    func testKeyOutsideAnySectionListsTheSections() {
        assertError("fps = 30", line: 1, key: "fps", "unknown key", "[camera]", "[encoder]")
    }

    // MARK: Bad values

    func testBadValuesNameLineKeyAndWhatIsAllowed() {
        let cases: [(key: String, value: String, fragments: [String])] = [
            ("camera.fps", "500", ["500", "a whole number from 1 to 120"]),
            ("camera.size", "\"641x480\"", ["\"641x480\"", "even numbers", "64x64 to 4096x2160"]),
            ("camera.size", "\"abc\"", ["\"abc\"", "WIDTHxHEIGHT"]),
            ("camera.size", "\"1280x\"", ["WIDTHxHEIGHT"]),
            ("camera.pixel_format", "\"RGB\"", ["\"RGB\"", "\"YUYV\"", "\"UYVY\"", "\"YU12\"", "\"NV12\""]),
            ("encoder.preset", "\"turbo\"", ["\"turbo\"", "ultrafast", "veryfast", "medium"]),
            ("microphone.channels", "3", ["3 is not allowed", "from 1 to 2"]),
            ("storage.media_root", "\"relative\"", ["\"relative\"", "absolute path"]),
            ("storage.media_root", "\"/\"", ["absolute path"]),
            ("camera.fps", "\"30\"", ["\"30\"", "a whole number from 1 to 120"]),
            ("camera.fps", "30.0", ["30.0", "a whole number"]),
            ("storage.segment_seconds", "\"10s\"", ["\"10s\"", "a number from", "to 86400 seconds"]),
            ("camera.source", "\"webcam\"", ["\"test\"", "file:"]),
            ("camera.source", "\"file:\"", ["file:"]),
            ("microphone.source", "\"mic\"", ["\"tone\"", "\"silence\"", "\"none\""]),
            ("microphone.sample_rate", "1000", ["8000 to 96000 Hz"]),
            ("encoder.video_codec", "\"lib x264\"", ["libx264"]),
            ("encoder.keyframe_interval", "60", ["from 1 to 30 frames"]),
            ("snapshot.jpeg_quality", "true", ["true", "from 1 to 100"]),
            ("encoder.tune", "\"fastest\"", ["fastest", "zerolatency"]),
            ("stream.url", "\"http://example.com/live\"", ["rtmp://", ".m3u8"]),
            ("stream.audio", "1", ["true or false"]),
            ("broadcast.to", "[\"http://example.com/live\"]", ["rtmp://", "library"]),
            ("broadcast.size", "\"961x540\"", ["each even", "960x540"]),
            ("broadcast.size", "\"-2x4\"", ["each even from 16 to 8192"]),
            ("logging.level", "\"verbose\"", ["\"trace\"", "\"critical\""]),
        ]
        for (key, value, fragments) in cases {
            let parts = key.split(separator: ".")
            // Comments and blank lines first, so line 1 cannot be right by accident.
            let text = "# header\n\n[\(parts[0])]\n# before\n\(parts[1]) = \(value)\n"
            do throws(ConfigurationError) {
                _ = try Configuration(toml: text, file: "k.toml")
                XCTFail("\(key) = \(value) was accepted")
            } catch {
                XCTAssertEqual(error.line, 5, "\(key) = \(value): \(error)")
                XCTAssertEqual(error.key, key, "\(key) = \(value): \(error)")
                XCTAssertEqual(error.file, "k.toml")
                XCTAssertTrue(error.message.contains("is not allowed here"), error.message)
                for fragment in fragments {
                    XCTAssertTrue(error.message.contains(fragment), "\(key) = \(value): '\(error.message)' lacks '\(fragment)'")
                }
            }
        }
    }

    func testFirstProblemWins() {
        assertError("[camera]\nfps = 30\nsize = \"1x1\"\nfps2 = 3\n", line: 3, key: "camera.size")
    }

    func testPresetErrorListsExactlyTheAcceptedPresets() throws {
        // Every preset the reader accepts should be named in its error, and nothing it rejects.
        let error = try XCTUnwrap(assertError("[encoder]\npreset = \"turbo\"", line: 2, key: "encoder.preset"))
        let all = ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow"]
        for preset in all {
            var c = Configuration()
            let accepted = (try? c.set("encoder.preset", .string(preset), origin: "test")) != nil
            let named = error.message.range(of: "\\b\(preset)\\b", options: .regularExpression) != nil
            XCTAssertEqual(accepted, named, "preset '\(preset)': accepted \(accepted), named in the error \(named): \(error.message)")
        }
    }

    func testSyntaxErrorKeepsItsLine() throws {
        let error = try XCTUnwrap(assertError("[camera]\nfps = 30\nsize = \"1280x720\n", line: 3, key: nil, "unterminated string"))
        XCTAssertTrue(error.description.hasPrefix("test.toml line 3: "), error.description)
        assertError("[camera]\n\n\nfps = 30\nfps = 25\n", line: 5, key: nil, "duplicate key", "line 4")
    }

    func testErrorDescriptionWithoutFile() {
        let error = ConfigurationError(line: 2, key: "camera.fps", message: "bad")
        XCTAssertEqual(error.description, "configuration line 2 (camera.fps): bad")
        XCTAssertEqual(ConfigurationError(message: "bad").description, "configuration: bad")
    }

    // MARK: Setting single keys

    func testSetAppliesValues() throws {
        var c = Configuration()
        try c.set("camera.size", .string("320x240"), origin: "--size")
        try c.set("camera.fps", .integer(15), origin: "--fps")
        try c.set("storage.segment_seconds", .float(12.5), origin: "--segment")
        XCTAssertEqual(c.camera.size, FrameSize(width: 320, height: 240))
        XCTAssertEqual(c.camera.framesPerSecond, 15)
        XCTAssertEqual(c.storage.segmentSeconds, 12.5)
    }

    func testSetErrorsNameTheOrigin() {
        var c = Configuration()
        do throws(ConfigurationError) {
            try c.set("camera.fps", .integer(500), origin: "--fps")
            XCTFail("fps 500 accepted")
        } catch {
            XCTAssertEqual(error.file, "--fps")
            XCTAssertEqual(error.key, "camera.fps")
            XCTAssertNil(error.line)
            XCTAssertTrue(error.message.contains("from 1 to 120"), error.message)
            XCTAssertTrue(error.description.hasPrefix("--fps (camera.fps): "), error.description)
        }
        do throws(ConfigurationError) {
            try c.set("camera.frame_rate", .integer(2), origin: "--frame-rate")
            XCTFail("unknown key accepted")
        } catch {
            XCTAssertEqual(error.file, "--frame-rate")
            XCTAssertEqual(error.key, "camera.frame_rate")
            XCTAssertTrue(error.description.contains("--frame-rate"), error.description)
            XCTAssertTrue(error.message.contains("unknown key"), error.message)
        }
        // A failed set leaves the configuration alone.
        XCTAssertEqual(c, Configuration())
    }

    // MARK: Bitrate

    func testEffectiveVideoBitrateFollowsSpecBitsPerPixel() {
        var c = Configuration()
        XCTAssertEqual(c.effectiveVideoBitrate, 9_308_160)  // 1280 × 720 × 10.1
        XCTAssertEqual(c.effectiveVideoBitrate, Int((1280.0 * 720 * 10.1).rounded()))
        c.camera.size = FrameSize(width: 320, height: 240)
        XCTAssertEqual(c.effectiveVideoBitrate, 311_040)    // 320 × 240 × 4.05
        XCTAssertEqual(c.effectiveVideoBitrate, Int((320.0 * 240 * 4.05).rounded()))
        c.camera.size = FrameSize(width: 640, height: 480)
        XCTAssertEqual(c.effectiveVideoBitrate, 3_102_720)  // exactly 640 × 480 uses 10.1
        c.camera.size = FrameSize(width: 638, height: 480)
        XCTAssertEqual(c.effectiveVideoBitrate, Int((638.0 * 480 * 4.05).rounded()))
        c.encoder.videoBitrate = 1_000_000
        XCTAssertEqual(c.effectiveVideoBitrate, 1_000_000)
    }

    func testEventAndMotionValuesOutsideTheirRangesNameTheFix() {
        let cases: [(String, String)] = [
            ("[events]\nmode = \"sometimes\"", "one of \"continuous\", \"events\", \"both\""),
            ("[events]\npre_seconds = 61", "from 0 to 60"),
            ("[events]\nmax_seconds = 5", "from 10 to 3600"),
            ("[motion]\nmask = [\"0,0,120,20\"]", "in percent of the frame"),
            ("[motion]\nmask = [\"10,10,20\"]", "left,top,width,height"),
            ("[motion]\nmask = [\"60,0,50,10\"]", "in percent of the frame"),
            ("[motion]\nmask_png = \"mask.png\"", "absolute path of a PNG"),
            ("[motion]\nthreshold_percent = 0", "from 0.01 to 100"),
        ]
        for (text, expected) in cases {
            do throws(ConfigurationError) {
                _ = try Configuration(toml: text + "\n")
                XCTFail("\(text) should be refused")
            } catch {
                XCTAssertTrue("\(error)".contains(expected), "\(text): \(error)")
            }
        }
    }

    // MARK: The example file in rootfs

    func testExampleFileNamesEveryKeyInItsSectionAndParses() throws {
        let url = packageRoot.appendingPathComponent("rootfs/etc/kioskcam/kioskcam.toml")
        guard FileManager.default.fileExists(atPath: url.path) else {
            return XCTFail("\(url.path) does not exist; it must document every key in Configuration.knownKeys")
        }
        let text = try String(contentsOf: url, encoding: .utf8)

        // Textually: `key = ` on a line of its own under its `[section]` header.
        var section = ""
        var found: Set<String> = []
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("[") {
                section = String(line.dropFirst().prefix { $0 != "]" }).trimmingCharacters(in: .whitespaces)
                continue
            }
            guard let equals = line.firstIndex(of: "="), !line.hasPrefix("#") else { continue }
            let name = line[..<equals].trimmingCharacters(in: .whitespaces)
            found.insert(section + "." + name)
        }
        for key in Configuration.knownKeys {
            let parts = key.split(separator: ".")
            XCTAssertTrue(found.contains(key), "\(url.lastPathComponent) lacks '\(parts[1]) = ' under [\(parts[0])]")
            XCTAssertTrue(text.contains("\(parts[1]) = "), "\(url.lastPathComponent) lacks the text '\(parts[1]) = '")
        }

        // And it is a valid configuration.
        do throws(ConfigurationError) {
            _ = try Configuration(toml: text, file: url.path)
        } catch {
            XCTFail("the example file does not parse: \(error)")
        }
    }
}

private typealias MicrophoneSource = Configuration.MicrophoneSource
