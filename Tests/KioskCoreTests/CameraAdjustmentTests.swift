import KioskCore
import XCTest

/// Run-time camera settings: the words `kioskcam camera set` takes, the socket's
/// arguments, and zoom factors to and from a camera's zoom control.
final class CameraAdjustmentTests: XCTestCase {
    func testParsesTheCommandLineWords() throws {
        let adjustment = try CameraAdjustment(parsing: ["focus=auto", "zoom=2.5", "torch=on", "white-balance=4500"])
        XCTAssertEqual(adjustment.settings.map(\.name), [.zoom, .focus, .whiteBalance, .torch], "in a fixed order")
        XCTAssertEqual(adjustment.value(.zoom), .value(2.5))
        XCTAssertEqual(adjustment.value(.focus), .automatic)
        XCTAssertEqual(adjustment.value(.torch), .value(1))
        XCTAssertEqual(adjustment.description, "zoom=2.5 focus=auto white_balance=4500 torch=1")
    }

    func testBadWordsNameWhatIsAllowed() {
        for (words, expected) in [(["zoom"], "name=value"), (["warp=2"], "not a camera setting"), (["zoom=0.5"], "from 1"),
                                  (["zoom=20"], "from 1"), (["torch=auto"], "on or off"), (["torch=dim"], "on or off"),
                                  (["brightness=nan"], "auto or a number"), (["zoom=inf"], "from 1")] {
            XCTAssertThrowsError(try CameraAdjustment(parsing: words), "\(words)") { error in
                XCTAssertTrue("\(error)".contains(expected), "\(words): \(error)")
            }
        }
    }

    func testLaterSettingsWinWhenMerged() throws {
        let first = try CameraAdjustment(parsing: ["zoom=2", "focus=40"])
        let second = try CameraAdjustment(parsing: ["focus=auto"])
        XCTAssertEqual(first.merging(second).description, "zoom=2 focus=auto")
    }

    func testTheSocketCarriesTheSameSettings() throws {
        let adjustment = try CameraAdjustment(parsing: ["zoom=2", "torch=off", "exposure=auto"])
        let line = ControlCall(id: 3, request: .cameraSet(adjustment)).line()
        let parsed = try ControlCall.parse(line).get()
        XCTAssertEqual(parsed.request, .cameraSet(adjustment))
        for bad in [#"{"v":1,"cmd":"camera.set","args":{"zoom":"big"}}"#, #"{"v":1,"cmd":"camera.set","args":{"warp":1}}"#,
                    #"{"v":1,"cmd":"camera.set","args":{}}"#, #"{"v":1,"cmd":"camera.set","args":{"zoom":99}}"#] {
            guard case .failure(let failure) = ControlCall.parse(bad) else { return XCTFail(bad) }
            XCTAssertEqual(failure.error.code, .badArgument, bad)
        }
        XCTAssertEqual(try ControlCall.parse(#"{"v":1,"cmd":"camera.get"}"#).get().request, .cameraGet)
    }

    /// UVC webcams count zoom from 100 (1×); a range from 0 is spread over 1…4×.
    func testZoomFactorsMapToTheCamerasUnits() {
        XCTAssertEqual(ZoomMapping.deviceValue(factor: 2, minimum: 100, maximum: 500), 200)
        XCTAssertEqual(ZoomMapping.deviceValue(factor: 9, minimum: 100, maximum: 500), 500, "clamped")
        XCTAssertEqual(ZoomMapping.factor(deviceValue: 300, minimum: 100, maximum: 500), 3)
        XCTAssertEqual(ZoomMapping.maximumFactor(minimum: 100, maximum: 500), 5)
        XCTAssertEqual(ZoomMapping.deviceValue(factor: 1, minimum: 0, maximum: 60), 0)
        XCTAssertEqual(ZoomMapping.deviceValue(factor: 4, minimum: 0, maximum: 60), 60)
        XCTAssertEqual(ZoomMapping.deviceValue(factor: 2.5, minimum: 0, maximum: 60), 30)
        XCTAssertEqual(ZoomMapping.factor(deviceValue: 30, minimum: 0, maximum: 60), 2.5)
        XCTAssertEqual(ZoomMapping.deviceValue(factor: 3, minimum: 5, maximum: 5), 5, "a control with one value")
        XCTAssertEqual(ZoomMapping.deviceValue(factor: .nan, minimum: 100, maximum: 500), 100)
    }
}
