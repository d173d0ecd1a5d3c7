import KioskCore
import XCTest

/// A tap on the preview back to the sensor: letter-box, rotation and mirror, zoom crop,
/// the metering window kept on the sensor, and what a libcamera camera is asked.
final class PreviewTapMappingTests: XCTestCase {
    /// 640x480 frames in a 640x400 preview: 528x400 (width a multiple of 8), bars of 56 px.
    let area = ScreenRect(x: 0, y: 0, width: 640, height: 400)
    let frame = FrameSize(width: 640, height: 480)

    func assertPoint(_ point: PicturePoint?, _ x: Double, _ y: Double, _ message: String = "",
                     file: StaticString = #filePath, line: UInt = #line) {
        guard let point else { return XCTFail("no point \(message)", file: file, line: line) }
        XCTAssertEqual(point.x, x, accuracy: 0.01, message, file: file, line: line)
        XCTAssertEqual(point.y, y, accuracy: 0.01, message, file: file, line: line)
    }

    func testTheLetterBoxBarsAreNotThePicture() {
        let mapping = PreviewTapMapping(area: area, frame: frame)
        XCTAssertEqual(mapping.picture, ScreenRect(x: 56, y: 0, width: 528, height: 400))
        XCTAssertNil(mapping.framePoint(ScreenPoint(x: 20, y: 200)), "left bar")
        XCTAssertNil(mapping.framePoint(ScreenPoint(x: 600, y: 200)), "right bar")
        XCTAssertNil(mapping.framePoint(ScreenPoint(x: 320, y: 400)), "below the preview")
        assertPoint(mapping.framePoint(ScreenPoint(x: 320, y: 200)), 0.5, 0.5)
        assertPoint(mapping.framePoint(ScreenPoint(x: 56, y: 0)), 0, 0, "the picture's top-left pixel")
        assertPoint(mapping.framePoint(ScreenPoint(x: 583, y: 399)), 1, 1, "its bottom-right pixel")
        // No frame yet: nothing to map.
        XCTAssertNil(PreviewTapMapping(area: area, frame: FrameSize(width: 0, height: 0)).framePoint(ScreenPoint(x: 320, y: 200)))
    }

    func testTurnedAndMirroredCamerasMapBackToTheSensor() {
        // A quarter turn: the upright picture is 480x640, fitted 296x400 (width & ~7).
        let quarter = PreviewTapMapping(area: area, frame: frame, orientation: PictureOrientation(rotation: .quarter))
        XCTAssertEqual(quarter.picture.width, 296)
        XCTAssertEqual(quarter.picture.height, 400)
        let shown = quarter.picture
        // Turned clockwise, the sensor's bottom-left is the picture's top-left.
        assertPoint(quarter.framePoint(ScreenPoint(x: shown.x, y: shown.y)), 0, 1)
        assertPoint(quarter.framePoint(ScreenPoint(x: shown.maxX - 1, y: shown.y)), 0, 0)
        assertPoint(quarter.framePoint(ScreenPoint(x: shown.maxX - 1, y: shown.maxY - 1)), 1, 0)
        let half = PreviewTapMapping(area: area, frame: frame, orientation: PictureOrientation(rotation: .half))
        assertPoint(half.framePoint(ScreenPoint(x: 56, y: 0)), 1, 1, "upside down")
        let mirrored = PreviewTapMapping(area: area, frame: frame, orientation: PictureOrientation(mirror: true))
        assertPoint(mirrored.framePoint(ScreenPoint(x: 56, y: 100)), 1, 0.25, "mirrored: left is the sensor's right")
        let three = PreviewTapMapping(area: area, frame: frame, orientation: PictureOrientation(rotation: .threeQuarters, mirror: true))
        let s = three.picture
        // Mirrored first undone (left ↔ right), then the three-quarter turn.
        assertPoint(three.framePoint(ScreenPoint(x: s.x, y: s.y)), 1, 1)
    }

    func testTheUnturnedPointIsWhereTurnPutsThePixel() throws {
        // Check the inverse against the pixel turner itself: mark one sensor pixel, turn,
        // find it, and map its place back.
        let width = 8, height = 6
        for rotation in [ScreenRotation.none, .quarter, .half, .threeQuarters] {
            for mirror in [false, true] {
                let orientation = PictureOrientation(rotation: rotation, mirror: mirror)
                var source = [UInt8](repeating: 0, count: width * height)
                source[1 * width + 6] = 255   // the sensor pixel (6, 1)
                let turned = orientation.turnedSize(FrameSize(width: width, height: height))
                var destination = [UInt8](repeating: 0, count: turned.width * turned.height)
                source.withUnsafeBytes { s in
                    destination.withUnsafeMutableBytes { d in
                        _ = orientation.turn(plane: s, width: width, height: height, sourceStride: width, into: d,
                                             destinationStride: turned.width)
                    }
                }
                let index = try XCTUnwrap(destination.firstIndex(of: 255))
                let upright = PicturePoint(x: (Double(index % turned.width) + 0.5) / Double(turned.width),
                                           y: (Double(index / turned.width) + 0.5) / Double(turned.height))
                let back = orientation.unturned(upright)
                XCTAssertEqual(back.x, 6.5 / Double(width), accuracy: 1e-9, "\(orientation)")
                XCTAssertEqual(back.y, 1.5 / Double(height), accuracy: 1e-9, "\(orientation)")
            }
        }
    }

    func testTheDigitalZoomShowsTheCentre() {
        let zoomed = PreviewTapMapping(area: area, frame: frame, digitalZoom: 2)
        assertPoint(zoomed.framePoint(ScreenPoint(x: 320, y: 200)), 0.5, 0.5)
        assertPoint(zoomed.framePoint(ScreenPoint(x: 56, y: 0)), 0.25, 0.25)
        assertPoint(zoomed.framePoint(ScreenPoint(x: 583, y: 399)), 0.75, 0.75)
        // A broken zoom is no zoom.
        XCTAssertEqual(PreviewTapMapping(area: area, frame: frame, digitalZoom: .nan).digitalZoom, 1)
        XCTAssertEqual(PreviewTapMapping(area: area, frame: frame, digitalZoom: 0.5).digitalZoom, 1)
    }

    func testTheWindowStaysOnTheSensor() {
        let sensor = CropRectangle(x: 0, y: 0, width: 2592, height: 1944)
        XCTAssertEqual(FocusWindow.window(at: PicturePoint(x: 0.5, y: 0.5), field: sensor, bounds: sensor),
                       CropRectangle(x: 1036, y: 778, width: 518, height: 388))
        XCTAssertEqual(FocusWindow.window(at: PicturePoint(x: 0, y: 0), field: sensor, bounds: sensor),
                       CropRectangle(x: 0, y: 0, width: 518, height: 388), "moved in, not shrunk")
        XCTAssertEqual(FocusWindow.window(at: PicturePoint(x: 1, y: 1), field: sensor, bounds: sensor),
                       CropRectangle(x: 2074, y: 1556, width: 518, height: 388))
        XCTAssertEqual(FocusWindow.window(at: PicturePoint(x: 7, y: -3), field: sensor, bounds: sensor),
                       CropRectangle(x: 2074, y: 0, width: 518, height: 388), "outside 0…1 is clamped")
        XCTAssertEqual(FocusWindow.window(at: PicturePoint(x: .nan, y: .infinity), field: sensor, bounds: sensor),
                       CropRectangle(x: 1036, y: 778, width: 518, height: 388), "not a number: the centre")
        // Zoomed by the camera (ScalerCrop): the window is a share of what is seen, at its place.
        let bounds = CropRectangle(x: 16, y: 8, width: 2560, height: 1920)
        let crop = LibcameraControlPlan.crop(zoomPercent: 200, within: bounds, aspect: FrameSize(width: 4, height: 3))
        XCTAssertEqual(crop, CropRectangle(x: 656, y: 488, width: 1280, height: 960))
        XCTAssertEqual(FocusWindow.window(at: PicturePoint(x: 0, y: 0), field: crop, bounds: bounds),
                       CropRectangle(x: 528, y: 392, width: 256, height: 192))
        // A sensor smaller than the window asked for: the window is the sensor.
        let tiny = CropRectangle(x: 0, y: 0, width: 4, height: 2)
        XCTAssertEqual(FocusWindow.window(at: PicturePoint(x: 0.9, y: 0.9), field: tiny, bounds: tiny, fraction: 1),
                       CropRectangle(x: 0, y: 0, width: 4, height: 2))
    }

    func testLibcameraIsAskedOnlyForWhatItLists() {
        let sensor = CropRectangle(x: 0, y: 0, width: 2592, height: 1944)
        let all: Set<String> = ["AfMode", "AfMetering", "AfWindows", "AfTrigger", "LensPosition"]
        let once = LibcameraFocusPlan(point: PicturePoint(x: 0.5, y: 0.5), offered: all, cropMaximum: sensor, crop: nil, continuous: false)
        XCTAssertEqual(once.settings, [.init("AfMode", 1), .init("AfMetering", 1), .init("AfTrigger", 0)])
        XCTAssertEqual(once.window, CropRectangle(x: 1036, y: 778, width: 518, height: 388))
        XCTAssertEqual(once.missing, [])
        let continuous = LibcameraFocusPlan(point: PicturePoint(x: 0.5, y: 0.5), offered: all.subtracting(["AfTrigger"]),
                                            cropMaximum: sensor, crop: nil, continuous: true)
        XCTAssertEqual(continuous.settings, [.init("AfMode", 2), .init("AfMetering", 1)], "continuous AF keeps going, on the window")
        // vimc (and any fixed-focus camera) lists none of them: nothing is asked.
        let vimc = LibcameraFocusPlan(point: PicturePoint(x: 0.5, y: 0.5), offered: ["Brightness", "Contrast"],
                                      cropMaximum: nil, crop: nil, continuous: false)
        XCTAssertEqual(vimc.settings, [])
        XCTAssertNil(vimc.window)
        XCTAssertEqual(vimc.missing.prefix(4), ["AfMode", "AfMetering", "AfWindows", "AfTrigger"])
        XCTAssertTrue(vimc.missing.last?.hasPrefix("ScalerCropMaximum") ?? false)
    }
}

/// The single tap on the preview: only once the double tap's window has passed, never
/// the first tap of a double tap, never the end of a pinch, never on a button; the
/// focus square for a second.
final class TapToFocusInteractionTests: XCTestCase {
    let layout = ScreenLayout(size: ScreenSize(width: 800, height: 480))
    var milliseconds: Int64 = 1_000
    var now: MonotonicInstant { MonotonicInstant(nanoseconds: milliseconds * 1_000_000) }

    func controller() -> InteractionController {
        let screen = ScreenController(settings: Configuration.Lock(), layout: layout, now: now, startLocked: false)
        return InteractionController(screen: screen, previewFramesPerSecond: 10, now: now,
                                     pinch: PinchZoomRecognizer(maximum: 4, area: layout.preview))
    }

    @discardableResult
    func touch(_ c: inout InteractionController, _ phase: TouchPhase, _ x: Int, _ y: Int, slot: Int = 0, after: Int64 = 40) -> [InteractionEffect] {
        milliseconds += after
        let event = TouchEvent(phase: phase, point: ScreenPoint(x: x, y: y), slot: slot, time: now, device: "/dev/input/event2")
        return c.handle(.touch(event, recorder: .idle), now: now)
    }

    func tick(_ c: inout InteractionController, after: Int64) -> [InteractionEffect] {
        milliseconds += after
        return c.handle(.tick, now: now)
    }

    func focusPoints(_ effects: [InteractionEffect]) -> [ScreenPoint] {
        effects.compactMap { if case .focus(let point) = $0 { point } else { nil } }
    }

    func testASingleTapFocusesOnceTheDoubleTapWindowHasPassed() {
        var c = controller()
        let x = layout.preview.x + layout.preview.width / 3, y = layout.preview.y + layout.preview.height / 3
        touch(&c, .press, x, y)
        XCTAssertEqual(focusPoints(touch(&c, .release, x, y)), [], "not at once: it may be a double tap")
        let due = c.nextDeadline(now: now)
        XCTAssertLessThanOrEqual(due.nanoseconds(since: now), PinchZoomRecognizer.doubleTapNanoseconds + 1_000_000,
                                 "the loop wakes for it")
        XCTAssertEqual(focusPoints(tick(&c, after: 100)), [])
        let effects = tick(&c, after: 300)
        XCTAssertEqual(focusPoints(effects), [ScreenPoint(x: x, y: y)])
        XCTAssertEqual(c.screen?.model.focusMark, ScreenPoint(x: x, y: y))
        XCTAssertTrue(effects.contains { if case .draw(let model) = $0 { model.focusMark != nil } else { false } }, "the square is drawn")
        XCTAssertEqual(focusPoints(tick(&c, after: 100)), [], "once")
        // The square goes after a second, with a redraw.
        let later = tick(&c, after: 1_000)
        XCTAssertNil(c.screen?.model.focusMark)
        XCTAssertTrue(later.contains { if case .draw(let model) = $0 { model.focusMark == nil } else { false } })
    }

    func testADoubleTapZoomsBackAndDoesNotFocus() {
        var c = controller()
        let x = layout.preview.x + layout.preview.width / 2, y = layout.preview.y + layout.preview.height / 2
        // Zoom in with a pinch first, so the double tap has something to undo.
        touch(&c, .press, x - 50, y, slot: 0)
        touch(&c, .press, x + 50, y, slot: 1)
        touch(&c, .move, x + 150, y, slot: 1)
        touch(&c, .release, x + 150, y, slot: 1)
        touch(&c, .release, x - 50, y, slot: 0)
        XCTAssertEqual(focusPoints(tick(&c, after: 1_000)), [], "the end of a pinch is no tap")
        touch(&c, .press, x, y, after: 100)
        touch(&c, .release, x, y)
        touch(&c, .press, x + 5, y, after: 100)
        let second = touch(&c, .release, x + 5, y)
        XCTAssertTrue(second.contains(.setZoom(1)))
        XCTAssertEqual(focusPoints(tick(&c, after: 1_000)), [])
        XCTAssertNil(c.screen?.model.focusMark)
    }

    func testATapOnAButtonOverThePreviewDoesNotFocus() {
        var c = controller()
        let button = layout.libraryButton
        XCTAssertFalse(button.intersection(layout.preview).isEmpty, "the Library pill lies over the preview")
        let x = button.x + button.width / 2, y = button.y + button.height / 2
        touch(&c, .press, x, y)
        touch(&c, .release, x, y)
        XCTAssertEqual(focusPoints(tick(&c, after: 600)), [])
        XCTAssertEqual(c.page, .media, "the pill did its own job")
        XCTAssertNil(c.screen?.model.focusMark)
    }
}
