import KioskAppliance
import KioskCore
import XCTest

final class ConfigurationReloadTests: XCTestCase {
    func testNothingChanged() {
        let change = ConfigurationReload(from: Configuration(), to: Configuration())
        XCTAssertTrue(change.isEmpty)
        XCTAssertEqual(change.summary, "configuration reloaded: nothing changed")
    }

    func testStorageAppliesNowDevicesAndTheScreenNeedARestart() {
        var new = Configuration()
        new.storage.retentionDays = 7
        new.lock.idleSeconds = 30
        new.camera.framesPerSecond = 15
        new.buttons.debounceMilliseconds = 50
        let change = ConfigurationReload(from: Configuration(), to: new)
        XCTAssertEqual(change.appliedNow, ["storage"])
        XCTAssertEqual(change.needRestart, ["lock", "camera", "buttons"])
        XCTAssertTrue(change.summary.contains("[storage] applied now"), change.summary)
        XCTAssertTrue(change.summary.contains("[lock], [camera], [buttons] changed but need a restart"), change.summary)
        XCTAssertTrue(change.summary.contains("systemctl restart kioskcam"), change.summary)
    }

    func testEverySectionIsCompared() {
        var new = Configuration()
        new.microphone.channels = 2
        new.encoder.preset = "fast"
        new.snapshot.jpegQuality = 50
        new.logging.level = .debug
        new.touch.flipX = true
        new.screen.previewFramesPerSecond = 5
        new.control.maxClients = 3
        new.mqtt.topicPrefix = "cameras"
        new.upload.maxKbps = 100
        new.web.maxViewers = 2
        new.rtsp.enabled = true
        new.onvif.enabled = true
        new.overlay.text = "%T"
        new.privacy.masks = [MotionRegion(x: 0, y: 0, width: 0.5, height: 0.5)]
        new.timelapse.intervalSeconds = 10
        let change = ConfigurationReload(from: Configuration(), to: new)
        XCTAssertEqual(change.appliedNow, [])
        XCTAssertEqual(Set(change.needRestart), ["microphone", "encoder", "snapshot", "logging", "touch", "screen", "control",
                                                 "mqtt", "upload", "web", "rtsp", "onvif", "overlay", "privacy", "timelapse"])
    }
}
