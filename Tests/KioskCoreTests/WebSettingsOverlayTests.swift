import KioskCore
import XCTest

/// The settings the web app saves: only the page's keys, checked by the configuration's
/// own schema, kept as TOML that reads back the same, and refused whole when one is wrong.
final class WebSettingsOverlayTests: XCTestCase {
    func testChangesAreCheckedAppliedAndReadBack() throws {
        var overlay = WebSettingsOverlay()
        try overlay.take(["camera.rotation": .integer(90), "camera.mirror": .bool(true), "storage.retention_days": .number(14),
                          "motion.threshold_percent": .number(2.5), "events.mode": .string("both"),
                          "events.pre_seconds": .integer(4), "stream.url": .string(#"rtmp://nvr.local/live/a"b\c"#),
                          "motion.mask": .array([.array([.number(0), .number(0), .number(1), .number(0.2)]),
                                                 .array([.number(0.125), .number(0.5), .number(0.25), .number(0.33333)])])],
                         onTopOf: Configuration())
        let text = overlay.toml
        XCTAssertTrue(text.hasPrefix("# Saved by kioskcam's web app"), text)
        XCTAssertTrue(text.contains("[camera]\nmirror = true\nrotation = 90\n"), text)
        XCTAssertTrue(text.contains("retention_days = 14\n"), "a whole number from a number field stays whole: \(text)")
        XCTAssertTrue(text.contains(#"mask = ["0,0,100,20", "12.5,50,25,33.333"]"#), text)
        XCTAssertTrue(text.contains(#"url = "rtmp://nvr.local/live/a\"b\\c""#), "quotes and backslashes escaped: \(text)")

        let read = try WebSettingsOverlay(toml: text, file: "/state/web-settings.toml")
        XCTAssertEqual(read, overlay, "the file reads back as written")
        var configuration = Configuration()
        try read.apply(to: &configuration, file: "/state/web-settings.toml")
        XCTAssertEqual(configuration.camera.orientation.rotation.rawValue, 90)
        XCTAssertTrue(configuration.camera.orientation.mirror)
        XCTAssertEqual(configuration.storage.retentionDays, 14)
        XCTAssertEqual(configuration.motion.thresholdPercent, 2.5)
        XCTAssertEqual(configuration.events.timing.preSeconds, 4)
        XCTAssertEqual(configuration.stream.url, #"rtmp://nvr.local/live/a"b\c"#)
        XCTAssertEqual(configuration.motion.ignoredRegions.count, 2)
        XCTAssertEqual(configuration.motion.ignoredRegions.first?.height ?? 0, 0.2, accuracy: 1e-9)
        XCTAssertEqual(WebSettings.values(of: configuration)["camera.rotation"], .integer(90), "GET shows what was saved")
    }

    /// The overlay and the privacy masks from the settings page: saved, read back, and a
    /// template with an unknown conversion refused with the list of known ones.
    func testTheOverlayAndPrivacyMasksFromThePage() throws {
        var overlay = WebSettingsOverlay()
        try overlay.take(["overlay.text": .string("%F %T  {device_name}"), "overlay.position": .string("bottom-right"),
                          "privacy.masks": .array([.array([.number(0.6), .number(0), .number(0.4), .number(0.3)])])],
                         onTopOf: Configuration())
        XCTAssertTrue(overlay.toml.contains(#"masks = ["60,0,40,30"]"#), overlay.toml)
        var configuration = Configuration()
        try WebSettingsOverlay(toml: overlay.toml, file: "/state/web-settings.toml").apply(to: &configuration, file: "/state/web-settings.toml")
        XCTAssertEqual(configuration.overlay.text, "%F %T  {device_name}")
        XCTAssertEqual(configuration.overlay.position, .bottomRight)
        XCTAssertEqual(configuration.privacy.masks, [MotionRegion(x: 0.6, y: 0, width: 0.4, height: 0.3)])
        XCTAssertEqual(WebSettings.values(of: configuration)["privacy.masks"],
                       .array([.array([.number(0.6), .number(0), .number(0.4), .number(0.3)])]), "GET shows what was saved")
        for (key, value) in [("overlay.text", JSONValue.string("%Q")), ("overlay.position", .string("middle")),
                             ("privacy.masks", .array([.array([.number(0.6), .number(0), .number(0.5), .number(0.3)])])),
                             ("privacy.masks", .string("60,0,40,30"))] {
            XCTAssertThrowsError(try overlay.take([key: value], onTopOf: Configuration()), "\(key) = \(value)") { error in
                XCTAssertEqual((error as? WebSettingsOverlay.Refusal)?.key, key)
            }
        }
    }

    /// The timelapse's interval and rate from the settings page; out-of-range values refused by name.
    func testTheTimelapseFromThePage() throws {
        var overlay = WebSettingsOverlay()
        try overlay.take(["timelapse.interval_seconds": .integer(5), "timelapse.fps": .integer(24)], onTopOf: Configuration())
        var configuration = Configuration()
        try WebSettingsOverlay(toml: overlay.toml, file: "/state/web-settings.toml").apply(to: &configuration, file: "/state/web-settings.toml")
        XCTAssertEqual(configuration.timelapse.intervalSeconds, 5)
        XCTAssertEqual(configuration.timelapse.framesPerSecond, 24)
        XCTAssertEqual(WebSettings.values(of: configuration)["timelapse.interval_seconds"], .integer(5), "GET shows what was saved")
        for (key, value) in [("timelapse.interval_seconds", JSONValue.integer(-1)), ("timelapse.fps", .integer(0)),
                             ("timelapse.fps", .string("30"))] {
            XCTAssertThrowsError(try overlay.take([key: value], onTopOf: Configuration()), "\(key) = \(value)") { error in
                XCTAssertEqual((error as? WebSettingsOverlay.Refusal)?.key, key)
            }
        }
    }

    func testALaterChangeKeepsTheEarlierKeys() throws {
        var overlay = WebSettingsOverlay()
        try overlay.take(["camera.rotation": .integer(180)], onTopOf: Configuration())
        try overlay.take(["storage.retention_days": .integer(7)], onTopOf: Configuration())
        XCTAssertEqual(overlay.values, ["camera.rotation": .integer(180), "storage.retention_days": .integer(7)])
    }

    func testOneWrongValueRefusesTheWholeChangeNamingTheKey() {
        var overlay = WebSettingsOverlay()
        let cases: [(String, JSONValue, String)] = [
            ("camera.rotation", .integer(45), "0, 90, 180 or 270"),
            ("camera.rotation", .string("90"), "0, 90, 180 or 270"),
            ("storage.retention_days", .number(2.5), "whole number"),
            ("events.mode", .string("sometimes"), "one of"),
            ("motion.threshold_percent", .number(.infinity), "number from"),
            ("motion.mask", .array([.array([.number(0.5), .number(0), .number(0.6), .number(0.1)])]), "percent"),
            ("motion.mask", .array([.array([.number(-0.1), .number(0), .number(0.5), .number(0.1)])]), "fractions"),
            ("motion.mask", .string("0,0,10,10"), "fractions"),
            ("stream.url", .string("file:///var/lib/kioskcam/web-users"), "rtmp://"),
            ("stream.url", .string("/var/lib/kioskcam/x.m3u8"), "/etc/kioskcam/kioskcam.toml only"),
            ("stream.url", .string("rtmp://a\u{7}b"), "allowed"),
            ("web.enabled", .bool(false), "not a setting the web app changes"),
            ("control.state_directory", .string("/tmp"), "not a setting the web app changes"),
        ]
        for (key, value, words) in cases {
            XCTAssertThrowsError(try overlay.take(["camera.mirror": .bool(true), key: value], onTopOf: Configuration()), "\(key) = \(value)") { error in
                guard let refusal = error as? WebSettingsOverlay.Refusal else { return XCTFail("\(error)") }
                XCTAssertEqual(refusal.key, key)
                XCTAssertTrue(refusal.message.contains(words), "\(key) = \(value): \(refusal.message)")
            }
            XCTAssertTrue(overlay.values.isEmpty, "nothing taken when one change is wrong (\(key))")
        }
        XCTAssertThrowsError(try overlay.take([:], onTopOf: Configuration()))
    }

    func testAFileWithOtherKeysOrBadValuesIsRefusedWithItsLine() {
        for (text, line, words) in [("[web]\nenabled = false\n", 2, "not a key the web app saves"),
                                    ("[camera]\nrotation = 45\n", 2, "not allowed"),
                                    ("[camera\n", 1, "]")] {
            XCTAssertThrowsError(try WebSettingsOverlay(toml: text, file: "/s/web-settings.toml")) { error in
                guard let error = error as? ConfigurationError else { return XCTFail("\(error)") }
                XCTAssertEqual(error.line, line, text)
                XCTAssertEqual(error.file, "/s/web-settings.toml")
                XCTAssertTrue(error.message.contains(words), error.message)
            }
        }
    }

    func testRenderingEscapesControlCharactersTheTOMLReaderReadsBack() throws {
        XCTAssertEqual(WebSettingsOverlay.render(.string("a\tb\u{1}")), #""a\u0009b\u0001""#)
        let document = try TOMLDocument(parsing: "x = " + WebSettingsOverlay.render(.string("a\tb\u{1}\"\\")))
        XCTAssertEqual(document.entries.first?.value, .string("a\tb\u{1}\"\\"))
    }
}
