import Foundation
import KioskCore
import KioskMedia
@testable import KioskFramebuffer
@testable import KioskScreen
import KioskTestSupport
import XCTest

/// Screenshots of each screen compared with the PNGs in `Golden/`, tolerantly (fonts may
/// antialias a little differently between machines). `KIOSKCAM_UPDATE_GOLDEN=1` rewrites them.
final class ScreenGoldenTests: XCTestCase {
    static let goldenFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden").path

    /// 800x480 is the panel as it is; 480x800 is the same panel turned a quarter (rotation 90).
    static let orientations: [(name: String, rotation: ScreenRotation)] = [("800x480", .none), ("480x800", .quarter)]
    static let formats: [FramebufferPixelFormat] = [.rgb565, .xrgb8888]

    func testLiveScreen() throws {
        try compareAll("live") { renderer in
            try renderer.updatePreview(ScreenScenes.testPatternFrame())
            renderer.render(ScreenScenes.liveModel())
        }
    }

    /// The sound recorder: level, waveform, the red Stop pill; LIVE and torch lit.
    func testSoundRecorderScreen() throws {
        try compareAll("sound") { renderer in
            try renderer.updatePreview(ScreenScenes.testPatternFrame())
            renderer.render(ScreenScenes.soundModel())
        }
    }

    /// The waveform grows from the left: more level updates light more columns of the
    /// panel's waveform area, and none right of the last one.
    func testTheSoundWaveformGrowsFromTheLeft() throws {
        let framebuffer = Framebuffer.memory(size: ScreenSize(width: 800, height: 480), format: .xrgb8888)
        let renderer = try ScreenRenderer(framebuffer: framebuffer, rotation: .none)
        let area = renderer.layout.soundWaveform
        /// Columns of the waveform area holding the accent blue above or below the centre line.
        func litColumns(_ model: ScreenModel) -> [Int] {
            renderer.render(model)
            let rgba = framebuffer.logicalRGBA(rotation: .none)
            let centre = area.y + area.height / 2
            return (area.x..<area.maxX).filter { x in
                (area.y..<area.maxY).contains { y in
                    let i = (y * 800 + x) * 4
                    return abs(y - centre) > 2 && rgba[i] < 0x50 && rgba[i + 2] > 0xE0 && rgba[i + 1] > 0x70
                }
            }
        }
        var model = ScreenScenes.soundModel()
        model.soundWaveform = LiveWaveform()
        for _ in 0..<50 { model.soundWaveform.add(amplitude: 0.3) }
        let short = litColumns(model)
        for _ in 0..<100 { model.soundWaveform.add(amplitude: 0.3) }
        let long = litColumns(model)
        XCTAssertGreaterThan(short.count, 40)
        XCTAssertLessThan(short.max() ?? .max, area.x + 60, "50 updates: about 50 columns from the left")
        XCTAssertGreaterThan(long.count, 140)
        XCTAssertLessThan(long.max() ?? .max, area.x + 160)
        model.recordingKind = .video
        XCTAssertEqual(litColumns(model).count, 0, "a video recording shows no sound recorder")
    }

    func testPinScreen() throws {
        try compareAll("pin") { renderer in renderer.render(ScreenScenes.pinModel()) }
    }

    func testBlankScreen() throws {
        try compareAll("blank") { renderer in
            renderer.render(ScreenScenes.pinModel())
            renderer.render(ScreenScenes.blankModel())
        }
        // Every pixel black after blanking, whatever was there before.
        let framebuffer = Framebuffer.memory(size: ScreenSize(width: 800, height: 480), format: .rgb565)
        let renderer = try ScreenRenderer(framebuffer: framebuffer, rotation: .none)
        renderer.render(ScreenScenes.pinModel())
        renderer.render(ScreenScenes.blankModel())
        let rgba = framebuffer.logicalRGBA(rotation: .none)
        XCTAssertFalse(stride(from: 0, to: rgba.count, by: 4).contains { (index: Int) -> Bool in rgba[index] != 0 || rgba[index + 1] != 0 || rgba[index + 2] != 0 })
    }

    /// The idle live screen (no recording, no picture, no microphone) and a disabled
    /// record button while starting: drawn, and different from the recording screen.
    func testLiveScreenStates() throws {
        let (framebuffer, renderer, drawn) = try idleLiveScreen()
        var model = drawn
        let idle = framebuffer.logicalRGBA(rotation: .none)
        model.recordingState = .starting
        let damage = renderer.render(model)
        XCTAssertFalse(damage.isEmpty)
        XCTAssertTrue(damage.contains { $0.intersection(renderer.layout.recordButton).width > 0 }, "the record button dims")
        XCTAssertNotEqual(idle, framebuffer.logicalRGBA(rotation: .none))
        try writeIfUpdating(renderer, name: "live-idle-800x480-XRGB8888")
    }

    /// The motion indicator: amber "MOTION" at the preview's top right while motion is
    /// seen, red "EVENT" while a clip is written; nothing there otherwise.
    func testTheMotionIndicatorShowsAtTheTopRight() throws {
        let (framebuffer, renderer, drawn) = try idleLiveScreen()
        var model = drawn
        let quiet = framebuffer.logicalRGBA(rotation: .none)
        let badge = renderer.layout.recordingBadge, preview = renderer.layout.preview
        /// Pixels in the top-right badge area that are mostly red and green, little blue (amber) or red only.
        func count(_ rgba: [UInt8], _ test: (UInt8, UInt8, UInt8) -> Bool) -> Int {
            var found = 0
            for y in badge.y..<(badge.y + badge.height) {
                for x in (preview.maxX - 360)..<preview.maxX {
                    let i = (y * 800 + x) * 4
                    if test(rgba[i], rgba[i + 1], rgba[i + 2]) { found += 1 }
                }
            }
            return found
        }
        let amber = { (r: UInt8, g: UInt8, b: UInt8) in r > 180 && g > 100 && g < 220 && b < 90 }
        let red = { (r: UInt8, g: UInt8, b: UInt8) in r > 180 && g < 90 && b < 90 }
        XCTAssertEqual(count(quiet, amber) + count(quiet, red), 0)
        model.motion = true
        renderer.render(model)
        XCTAssertGreaterThan(count(framebuffer.logicalRGBA(rotation: .none), amber), 20, "an amber dot")
        model.eventClip = true
        renderer.render(model)
        XCTAssertGreaterThan(count(framebuffer.logicalRGBA(rotation: .none), red), 20, "a red dot while a clip is written")
        model.motion = false
        model.eventClip = false
        renderer.render(model)
        XCTAssertEqual(framebuffer.logicalRGBA(rotation: .none), quiet, "gone again")
    }

    /// The tap-to-focus square: yellow around the tapped point, kept inside the preview
    /// near an edge, gone with the mark.
    func testTheFocusSquareShowsWhereTheTapWas() throws {
        let (framebuffer, renderer, drawn) = try idleLiveScreen()
        var model = drawn
        let quiet = framebuffer.logicalRGBA(rotation: .none)
        let preview = renderer.layout.preview
        func yellow(_ rgba: [UInt8], in rect: ScreenRect) -> Int {
            var found = 0
            for y in max(0, rect.y)..<min(480, rect.maxY) {
                for x in max(0, rect.x)..<min(800, rect.maxX) {
                    let i = (y * 800 + x) * 4
                    if rgba[i] > 180 && rgba[i + 1] > 160 && rgba[i + 2] < 120 { found += 1 }
                }
            }
            return found
        }
        let point = ScreenPoint(x: preview.x + preview.width / 3, y: preview.y + preview.height / 3)
        model.focusMark = point
        renderer.render(model)
        let marked = framebuffer.logicalRGBA(rotation: .none)
        XCTAssertGreaterThan(yellow(marked, in: ScreenRect(x: point.x - 60, y: point.y - 60, width: 120, height: 120)), 100,
                             "a yellow outline around the point")
        XCTAssertEqual(yellow(marked, in: ScreenRect(x: point.x - 5, y: point.y - 5, width: 10, height: 10)), 0, "an outline, not a blob")
        // At the preview's corner the square stays on the preview.
        model.focusMark = ScreenPoint(x: preview.x, y: preview.y)
        renderer.render(model)
        let corner = framebuffer.logicalRGBA(rotation: .none)
        XCTAssertGreaterThan(yellow(corner, in: ScreenRect(x: preview.x, y: preview.y, width: 80, height: 80)), 50)
        model.focusMark = nil
        renderer.render(model)
        XCTAssertEqual(framebuffer.logicalRGBA(rotation: .none), quiet, "gone again")
    }

    func testMediaViewGrid() throws {
        try compareAll("media-day") { renderer in renderer.render(ScreenScenes.mediaModel(size: renderer.size, player: false)) }
    }

    /// The player: the picture handed on by the player's thread letter-boxed in the
    /// picture area, the scrubber, and the REC badge while a recording runs.
    func testMediaViewPlayerShowsThePictureAndTheRecordingBadge() throws {
        try compareAll("media-player") { renderer in
            let model = ScreenScenes.mediaModel(size: renderer.size, player: true)
            renderer.render(model)
            let area = try XCTUnwrap(model.media?.layout.picture)
            let size = FrameSize(width: area.width / 2 & ~1, height: area.height / 2 & ~1)
            // Green, as cairo keeps it in memory: B G R X.
            let green = [UInt8]((0..<(size.width * size.height)).flatMap { _ in [0, 200, 0, 0] as [UInt8] })
            XCTAssertTrue(green.withUnsafeBytes { renderer.presentMediaPicture($0, size: size, for: "/none/video/20261124/101500.mp4") })
            // Short pixels are refused, nothing drawn.
            XCTAssertFalse(renderer.presentMediaPicture(UnsafeRawBufferPointer(start: nil, count: 0), size: size, for: "x"))
            let rgba = renderer.framebuffer.logicalRGBA(rotation: renderer.mapping.rotation)
            let width = renderer.size.width
            func pixel(_ x: Int, _ y: Int) -> [UInt8] { let i = (y * width + x) * 4; return Array(rgba[i..<(i + 3)]) }
            let centre = pixel(area.x + area.width / 2, area.y + area.height / 2)
            XCTAssertLessThan(Int(centre[0]), 40, "\(centre)")
            XCTAssertGreaterThan(Int(centre[1]), 180, "the picture is in the middle of the area: \(centre)")
            XCTAssertEqual(pixel(area.x + 2, area.y + area.height / 2), [0, 0, 0], "letter-boxed in black")
            let badge = try XCTUnwrap(model.media?.layout.recordingBadge)
            var red = 0
            for y in badge.y..<badge.maxY {
                for x in badge.x..<min(width, badge.x + badge.height) where pixel(x, y)[0] > 180 && pixel(x, y)[1] < 90 { red += 1 }
            }
            XCTAssertGreaterThan(red, 20, "the REC dot")
            // Each next picture draws only the picture area (and the time and badge over
            // it): the panel must then hold exactly what a whole page drawn afresh holds.
            let blue = [UInt8]((0..<(size.width * size.height)).flatMap { _ in [220, 0, 0, 0] as [UInt8] })
            XCTAssertTrue(blue.withUnsafeBytes { renderer.presentMediaPicture($0, size: size, for: "/none/video/20261124/101500.mp4") })
            let quick = renderer.framebuffer.logicalRGBA(rotation: renderer.mapping.rotation)
            XCTAssertNotEqual(quick, rgba, "the new picture is on the panel")
            renderer.invalidate()
            renderer.render(model)
            XCTAssertTrue(quick == renderer.framebuffer.logicalRGBA(rotation: renderer.mapping.rotation),
                          "the picture alone drawn as the whole page draws it")
            // Back to green, drawn the quick way: the golden picture must match it too.
            XCTAssertTrue(green.withUnsafeBytes { renderer.presentMediaPicture($0, size: size, for: "/none/video/20261124/101500.mp4") })
            XCTAssertTrue(rgba == renderer.framebuffer.logicalRGBA(rotation: renderer.mapping.rotation))
        }
    }

    // MARK: Helpers

    /// An 800x480 XRGB8888 panel in memory with the live screen drawn idle (no camera, not
    /// recording): what each state test changes from.
    private func idleLiveScreen() throws -> (Framebuffer, ScreenRenderer, ScreenModel) {
        let framebuffer = Framebuffer.memory(size: ScreenSize(width: 800, height: 480), format: .xrgb8888)
        let renderer = try ScreenRenderer(framebuffer: framebuffer, rotation: .none)
        var model = ScreenModel()
        model.cameraState = "no camera"
        renderer.render(model)
        return (framebuffer, renderer, model)
    }

    private func compareAll(_ screen: String, draw: (ScreenRenderer) throws -> Void) throws {
        for (orientation, rotation) in Self.orientations {
            for format in Self.formats {
                let framebuffer = Framebuffer.memory(size: ScreenSize(width: 800, height: 480), format: format)
                let renderer = try ScreenRenderer(framebuffer: framebuffer, rotation: rotation)
                XCTAssertEqual(renderer.size.description, orientation)
                try draw(renderer)
                try compare(renderer, name: "\(screen)-\(orientation)-\(format)")
            }
        }
    }

    private var updating: Bool { ProcessInfo.processInfo.environment["KIOSKCAM_UPDATE_GOLDEN"] == "1" }

    private func writeIfUpdating(_ renderer: ScreenRenderer, name: String) throws {
        guard updating else { return }
        try Data(renderer.screenshotPNG()).write(to: URL(fileURLWithPath: "\(Self.goldenFolder)/\(name).png"))
    }

    private func compare(_ renderer: ScreenRenderer, name: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let png = try renderer.screenshotPNG()
        let goldenPath = "\(Self.goldenFolder)/\(name).png"
        if updating {
            try Data(png).write(to: URL(fileURLWithPath: goldenPath))
            return
        }
        guard FileManager.default.fileExists(atPath: goldenPath) else {
            return XCTFail("\(goldenPath) is missing; make it with KIOSKCAM_UPDATE_GOLDEN=1", file: file, line: line)
        }
        let actualPath = NSTemporaryDirectory() + "kioskcam-screen-\(name).png"
        try Data(png).write(to: URL(fileURLWithPath: actualPath))
        let actual = try RGBAImage(png: actualPath)
        let golden = try RGBAImage(png: goldenPath)
        guard let difference = actual.difference(from: golden) else {
            return XCTFail("\(name): \(actual.width)x\(actual.height), golden \(golden.width)x\(golden.height)", file: file, line: line)
        }
        let ok = difference.meanPerChannel.allSatisfy { $0 < 2 } && difference.farOffShare < 0.01
        XCTAssertTrue(ok, "\(name) differs from \(goldenPath): mean per channel \(difference.meanPerChannel), \(difference.farOffShare * 100) % of pixels off by > 32; this run's picture: \(actualPath)",
                      file: file, line: line)
        if ok { try? FileManager.default.removeItem(atPath: actualPath) }
    }
}
