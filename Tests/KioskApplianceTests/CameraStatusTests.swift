import Foundation
@testable import KioskAppliance
import KioskCore
import KioskSources
import KioskTestSupport
import Logging
import XCTest

/// A camera that counts its frames, standing in for a V4L2 or libcamera one.
private final class CountingCamera: VideoSource, FrameCounting, @unchecked Sendable {
    let name = "counting"
    let format = VideoFormat(size: FrameSize(width: 64, height: 64), pixelFormat: .yuyv, framesPerSecond: 30)
    let frameCounters = CameraFrameCounters(delivered: 40, leased: 30, copied: 10, paced: 5, dropped: 1, corrupt: 2)
    func start(into sink: CaptureSink) throws {}
    func stop() {}
}

final class CameraStatusTests: XCTestCase {
    /// The open camera's counters reach the appliance's status, through the supervisor too.
    func testFrameCountersOfTheOpenCameraAreInTheStatus() throws {
        let folder = TemporaryDirectory()
        var configuration = Configuration()
        configuration.storage.mediaRoot = folder.path + "/media"
        let camera = CountingCamera()
        let supervisor = CameraSupervisor(camera: camera, retryInterval: 0.1, open: { CountingCamera() }, onHealthChange: { _ in })
        let microphone = ToneMicrophone(format: AudioFormat(sampleRate: 48_000, channels: 1), frequency: 440)
        let appliance = try Appliance(configuration: configuration, camera: supervisor, microphone: microphone,
                                      version: "test", deviceID: nil, logger: Logger(label: "test"))
        XCTAssertEqual(appliance.status.cameraFrames, camera.frameCounters)

        let plain = try Appliance(configuration: configuration, camera: TestPatternCamera(format: camera.format), microphone: nil,
                                  version: "test", deviceID: nil, logger: Logger(label: "test"))
        XCTAssertNil(plain.status.cameraFrames, "the test pattern counts nothing")
    }

    /// The config's controls are what `camera get` shows as asked on a libcamera camera.
    func testConfiguredControlsBecomeTheAskedSettings() {
        var camera = Configuration().camera
        camera.focus = .automatic
        camera.exposure = .value(150)
        camera.brightness = -20
        camera.zoom = 300
        let asked = CameraAdjuster.adjustment(from: camera)
        XCTAssertEqual(asked.value(.focus), .automatic)
        XCTAssertEqual(asked.value(.exposure), .value(150))
        XCTAssertEqual(asked.value(.brightness), .value(-20))
        XCTAssertNil(asked.value(.zoom), "the config's zoom is in the camera's units, not a factor")
        XCTAssertNil(asked.value(.whiteBalance))
    }
}

/// The zoom a pinch starts from after `camera.set`: where the digital zoom is heading
/// (it glides), else the camera's own zoom.
final class PinchZoomSourceTests: XCTestCase {
    func testTheTargetOfAGlidingDigitalZoomElseTheCamerasValue() {
        let digital: [String: JSONValue] = ["zoom": .object(["value": .number(1.4), "target": .number(3), "how": .string("digital")])]
        XCTAssertEqual(InteractionLoop.zoomFactor(digital), 3)
        let camera: [String: JSONValue] = ["zoom": .object(["value": .number(2.5), "how": .string("camera")])]
        XCTAssertEqual(InteractionLoop.zoomFactor(camera), 2.5)
        XCTAssertNil(InteractionLoop.zoomFactor([:]))
        XCTAssertNil(InteractionLoop.zoomFactor(["zoom": .string("?")]))
    }
}
