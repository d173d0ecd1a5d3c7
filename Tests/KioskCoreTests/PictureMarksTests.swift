import Foundation
import XCTest
@testable import KioskCore

/// The overlay's text, the privacy masks' plans and the painter, on plain memory.
final class OverlayTextTests: XCTestCase {
    func testConversionsAndFields() throws {
        let text = try OverlayText("%Y-%m-%d %H:%M:%S %y %e %I%p %j %a %A %b %B %Z %z %F %T %% {device_name}/{device_id} #{frame} {event}")
        // 2026-11-29 01:40:43 UTC, shown one hour east.
        let rendered = text.render(unixSeconds: 1_795_916_443, utcOffsetSeconds: 3600, zoneName: "CET",
                                   values: .init(deviceName: "porch", deviceID: "ab12", frame: 31, event: "motion"))
        XCTAssertEqual(rendered, "2026-11-29 02:40:43 26 29 02AM 333 Sun Sunday Nov November CET +0100 2026-11-29 02:40:43 % porch/ab12 #31 motion")
        XCTAssertTrue(text.usesFrameNumber)
        XCTAssertFalse(try OverlayText("%T").usesFrameNumber)
        XCTAssertTrue(try OverlayText("").isEmpty)
        // A leap day, west of UTC, and before 1970.
        XCTAssertEqual(try OverlayText("%F %T %j %z").render(unixSeconds: 1_709_251_199, utcOffsetSeconds: -5 * 3600 - 1800,
                                                             zoneName: "", values: .init()), "2024-02-29 18:29:59 060 -0530")
        XCTAssertEqual(try OverlayText("%F %T %a").render(unixSeconds: -3600, utcOffsetSeconds: 0, zoneName: "UTC", values: .init()),
                       "1969-12-31 23:00:00 Wed")
    }

    /// The calendar arithmetic agrees with Foundation's Gregorian calendar over two centuries.
    func testCivilTimeAgreesWithFoundation() {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let seconds = Int64.random(in: -2_208_988_800...4_102_444_800, using: &generator)
            let civil = CivilTime(unixSeconds: seconds)
            let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .weekday, .dayOfYear],
                                                from: Date(timeIntervalSince1970: Double(seconds)))
            XCTAssertEqual(Int(civil.year), parts.year, "\(seconds)")
            XCTAssertEqual(civil.month, parts.month, "\(seconds)")
            XCTAssertEqual(civil.day, parts.day, "\(seconds)")
            XCTAssertEqual(civil.hour, parts.hour, "\(seconds)")
            XCTAssertEqual(civil.minute, parts.minute, "\(seconds)")
            XCTAssertEqual(civil.second, parts.second, "\(seconds)")
            XCTAssertEqual(civil.weekday + 1, parts.weekday, "\(seconds)")
            XCTAssertEqual(civil.dayOfYear, parts.dayOfYear, "\(seconds)")
        }
    }

    func testUnknownConversionsAndFieldsAreNamed() {
        for (template, expected) in [("%Q", "%Q is not a conversion"), ("50%", "a lone % at the end"), ("{name}", "{name} is not a field"),
                                     ("{frame", "a { without its }"), ("a\nb", "one line")] {
            XCTAssertThrowsError(try OverlayText(template), template) { error in
                XCTAssertTrue("\(error)".contains(expected), "\(template): \(error)")
            }
        }
    }

    func testConfigurationKeys() throws {
        let configuration = try Configuration(toml: """
            [overlay]
            text = "%F %T  {device_name}"
            position = "bottom-right"
            size_percent = 5
            [privacy]
            masks = ["60,0,40,30", [0.0, 0.5, 0.25, 0.5]]
            mask_png = "/etc/kioskcam/privacy.png"
            """, file: "test.toml")
        XCTAssertEqual(configuration.overlay.text, "%F %T  {device_name}")
        XCTAssertEqual(configuration.overlay.position, .bottomRight)
        XCTAssertEqual(configuration.overlay.sizePercent, 5)
        XCTAssertNotNil(configuration.overlay.template)
        XCTAssertEqual(configuration.privacy.masks, [MotionRegion(x: 0.6, y: 0, width: 0.4, height: 0.3),
                                                     MotionRegion(x: 0, y: 0.5, width: 0.25, height: 0.5)])
        XCTAssertEqual(configuration.privacy.maskPicture, "/etc/kioskcam/privacy.png")
        XCTAssertNil(Configuration().overlay.template, "no overlay unless one is configured")
        XCTAssertTrue(Configuration().privacy.isEmpty)
        for (text, key) in [("[overlay]\ntext = \"%Q\"", "overlay.text"), ("[overlay]\nposition = \"middle\"", "overlay.position"),
                            ("[overlay]\nsize_percent = 40", "overlay.size_percent"),
                            ("[privacy]\nmasks = [[0.5, 0.5, 0.6, 0.1]]", "privacy.masks"),
                            ("[privacy]\nmasks = [\"0,0,0,10\"]", "privacy.masks"), ("[privacy]\nmasks = [1]", "privacy.masks"),
                            ("[privacy]\nmask_png = \"relative.png\"", "privacy.mask_png")] {
            XCTAssertThrowsError(try Configuration(toml: text, file: "test.toml"), text) { error in
                XCTAssertEqual((error as? ConfigurationError)?.key, key, "\(text): \(error)")
            }
        }
    }
}

final class PrivacyMaskTests: XCTestCase {
    /// A 4:2:0 picture of mid grey, tightly packed.
    private func grey(_ size: FrameSize, format: PixelFormat = .yuv420) -> [UInt8] {
        [UInt8](repeating: 128, count: format.frameByteCount(size))
    }

    private func apply(_ plan: PrivacyMaskPlan, _ pixels: inout [UInt8], _ format: VideoFormat) {
        pixels.withUnsafeMutableBytes { bytes in
            guard let planes = PicturePlanes(packed: bytes.baseAddress!, byteCount: bytes.count, format: format) else {
                return XCTFail("no planes")
            }
            plan.apply(to: planes)
        }
    }

    /// The mask is given as the picture is shown; applied to the camera's pixels and then
    /// turned as a player turns them, it covers the same place at every mounting.
    func testAMaskGivenAsShownLandsThereAtEveryOrientation() {
        let sensor = FrameSize(width: 64, height: 48)
        let format = VideoFormat(size: sensor, pixelFormat: .yuv420, framesPerSecond: 30)
        let shownRegion = MotionRegion(x: 0.5, y: 0, width: 0.5, height: 0.25)   // the top-right quarter-strip
        for rotation in ScreenRotation.allCases {
            for mirror in [false, true] {
                let orientation = PictureOrientation(rotation: rotation, mirror: mirror)
                let plan = PrivacyMask(regions: [shownRegion]).plan(for: sensor, orientation: orientation)
                var pixels = grey(sensor)
                apply(plan, &pixels, format)
                let shown = orientation.turnedSize(sensor)
                var turned = [UInt8](repeating: 0, count: shown.width * shown.height)
                pixels.withUnsafeBytes { source in
                    turned.withUnsafeMutableBytes { destination in
                        _ = orientation.turn(plane: UnsafeRawBufferPointer(rebasing: source[0..<sensor.pixelCount]), width: sensor.width,
                                             height: sensor.height, sourceStride: sensor.width, into: destination,
                                             destinationStride: shown.width)
                    }
                }
                for y in 0..<shown.height {
                    for x in 0..<shown.width {
                        let inside = Double(x) >= 0.5 * Double(shown.width) && Double(y) < 0.25 * Double(shown.height)
                        XCTAssertEqual(turned[y * shown.width + x], inside ? 16 : 128, "\(orientation) at \(x),\(y)")
                    }
                }
                // Chroma under the mask is neutral; a block of the mask has no stray colour.
                XCTAssertEqual(plan.maskedPixels, shown.width / 2 * shown.height / 4)
            }
        }
    }

    func testEveryLayoutIsBlackedOutWithItsOwnBytes() {
        let size = FrameSize(width: 8, height: 4)
        let rect = PixelRect(x: 2, y: 0, width: 4, height: 2)
        for (format, expected) in [(PixelFormat.yuyv, [UInt8]([16, 128, 16, 128])), (.uyvy, [128, 16, 128, 16]),
                                   (.rgb24, [0, 0, 0]), (.nv12, [16])] {
            var pixels = [UInt8](repeating: 77, count: format.frameByteCount(size))
            pixels.withUnsafeMutableBytes { bytes in
                PicturePlanes(packed: bytes.baseAddress!, byteCount: bytes.count,
                              format: VideoFormat(size: size, pixelFormat: format, framesPerSecond: 30))?.fillBlack([rect])
            }
            let plane0 = format.geometry.planes[0]
            let rowBytes = plane0.rowBytes(forWidth: size.width)
            let start = 2 / plane0.groupWidth * plane0.bytesPerGroup
            XCTAssertEqual(Array(pixels[start..<(start + expected.count)]), expected, "\(format)")
            XCTAssertEqual(pixels[0], 77, "\(format): left of the rectangle untouched")
            XCTAssertEqual(pixels[2 * rowBytes + start], 77, "\(format): below the rectangle untouched")
            if format == .nv12 {
                let chroma = size.pixelCount
                XCTAssertEqual(Array(pixels[(chroma + 2)..<(chroma + 6)]), [128, 128, 128, 128], "NV12's interleaved chroma")
                XCTAssertEqual(pixels[chroma], 77)
            }
        }
    }

    func testAMaskPictureIsTurnedIntoTheCameraAndMaskedByBlocks() {
        // A 4x2 picture as shown whose left column is black; the camera is turned half round.
        let picture = (width: 4, height: 2, pixels: [UInt8]([0, 255, 255, 255, 0, 255, 255, 255]))
        let plan = PrivacyMask(picture: picture).plan(for: FrameSize(width: 16, height: 8), orientation: PictureOrientation(rotation: .half))
        XCTAssertEqual(plan.rects, [PixelRect(x: 12, y: 0, width: 4, height: 8)], "the shown left is the camera's right")
        XCTAssertTrue(PrivacyMask().plan(for: FrameSize(width: 16, height: 8), orientation: .upright).isEmpty)
        // An odd pixel widens the block to the chroma grid.
        let odd = PrivacyMask(regions: [MotionRegion(x: 3.0 / 16, y: 0, width: 1.0 / 16, height: 1.0 / 8)])
            .plan(for: FrameSize(width: 16, height: 8), orientation: .upright)
        XCTAssertEqual(odd.rects, [PixelRect(x: 2, y: 0, width: 2, height: 2)])
    }
}

final class OverlayPainterTests: XCTestCase {
    let sensor = FrameSize(width: 320, height: 240)

    private func painter(_ orientation: PictureOrientation = .upright, _ position: OverlayPosition = .topLeft) throws -> OverlayPainter {
        try XCTUnwrap(OverlayPainter(sensor: sensor, orientation: orientation, position: position, heightFraction: 0.1,
                                     atlasMaker: { GlyphAtlas.dots(cellHeight: $0) }))
    }

    private func draw(_ text: String, with painter: OverlayPainter, into pixels: inout [UInt8], format: PixelFormat = .yuv420) {
        pixels.withUnsafeMutableBytes { bytes in
            let planes = PicturePlanes(packed: bytes.baseAddress!, byteCount: bytes.count,
                                       format: VideoFormat(size: sensor, pixelFormat: format, framesPerSecond: 30))!
            XCTAssertTrue(painter.draw(text, into: planes))
        }
    }

    func testWhiteTextOnABlackBoxWithNeutralChroma() throws {
        let painter = try painter()
        var pixels = [UInt8](repeating: 90, count: PixelFormat.yuv420.frameByteCount(sensor))
        draw("12:34", with: painter, into: &pixels)
        let box = painter.shownRect
        XCTAssertEqual(box.x, box.y, "top-left, a margin from both edges")
        XCTAssertGreaterThan(box.x, 0)
        XCTAssertEqual(painter.sensorRect, box)
        let inBox = (box.y..<(box.y + box.height)).flatMap { y in (box.x..<(box.x + box.width)).map { pixels[y * sensor.width + $0] } }
        XCTAssertEqual(Set(inBox), [16, 235], "only box and ink (the dot font has no grey edges)")
        XCTAssertGreaterThan(inBox.filter { $0 == 235 }.count, 50)
        XCTAssertEqual(pixels[0], 90, "outside the box untouched")
        let u = sensor.pixelCount, chromaWidth = sensor.width / 2
        XCTAssertEqual(pixels[u + (box.y / 2) * chromaWidth + box.x / 2], 128)
        XCTAssertEqual(pixels[u], 90)
        // Box edges on the chroma grid.
        XCTAssertEqual([box.x, box.y, box.width, box.height].map { $0 % 2 }, [0, 0, 0, 0])
    }

    func testOnlyTheCellsThatChangeAreDrawnAgain() throws {
        let painter = try painter()
        var pixels = [UInt8](repeating: 90, count: PixelFormat.yuv420.frameByteCount(sensor))
        draw("12:34:56", with: painter, into: &pixels)
        XCTAssertEqual(painter.cellsDrawn, 8)
        draw("12:34:57", with: painter, into: &pixels)
        XCTAssertEqual(painter.cellsDrawn, 9, "one digit changed: one cell")
        draw("12:34:57", with: painter, into: &pixels)
        XCTAssertEqual(painter.cellsDrawn, 9, "the same text: nothing drawn, only copied")
        let fresh = try self.painter()
        var reference = [UInt8](repeating: 90, count: pixels.count)
        draw("12:34:57", with: fresh, into: &reference)
        XCTAssertEqual(pixels, reference, "drawing cell by cell gives the same picture as drawing it whole")
        draw("12:34:5", with: painter, into: &pixels)
        XCTAssertEqual(painter.cellsDrawn, 16, "a shorter text is laid out anew")
    }

    /// Drawn into the camera's pixels and turned as a player turns them, the box reads
    /// upright at the corner it was asked for, whatever the mounting.
    func testTheTextReadsUprightAfterTheDisplayMatrixTurnsIt() throws {
        for rotation in ScreenRotation.allCases {
            for mirror in [false, true] {
                let orientation = PictureOrientation(rotation: rotation, mirror: mirror)
                let shown = orientation.turnedSize(sensor)
                // What an upright camera of the shown size would carry.
                let upright = try XCTUnwrap(OverlayPainter(sensor: shown, orientation: .upright, position: .bottomRight, heightFraction: 0.1,
                                                           atlasMaker: { GlyphAtlas.dots(cellHeight: $0) }))
                var reference = [UInt8](repeating: 90, count: PixelFormat.yuv420.frameByteCount(shown))
                reference.withUnsafeMutableBytes { bytes in
                    let planes = PicturePlanes(packed: bytes.baseAddress!, byteCount: bytes.count,
                                               format: VideoFormat(size: shown, pixelFormat: .yuv420, framesPerSecond: 30))!
                    XCTAssertTrue(upright.draw("20:15", into: planes))
                }
                let turnedPainter = try painter(orientation, .bottomRight)
                var pixels = [UInt8](repeating: 90, count: PixelFormat.yuv420.frameByteCount(sensor))
                draw("20:15", with: turnedPainter, into: &pixels)
                var turned = [UInt8](repeating: 0, count: shown.pixelCount)
                pixels.withUnsafeBytes { source in
                    turned.withUnsafeMutableBytes { destination in
                        _ = orientation.turn(plane: UnsafeRawBufferPointer(rebasing: source[0..<sensor.pixelCount]), width: sensor.width,
                                             height: sensor.height, sourceStride: sensor.width, into: destination,
                                             destinationStride: shown.width)
                    }
                }
                XCTAssertEqual(turnedPainter.shownRect, upright.shownRect, "\(orientation)")
                XCTAssertEqual(turned, Array(reference[0..<shown.pixelCount]), "\(orientation): the turned picture is the upright one")
            }
        }
    }

    func testTextWiderThanThePictureIsCutAndAPictureOfAnotherLayoutIsLeftAlone() throws {
        let painter = try painter()
        var pixels = [UInt8](repeating: 90, count: PixelFormat.yuv420.frameByteCount(sensor))
        draw(String(repeating: "8", count: 200), with: painter, into: &pixels)
        XCTAssertLessThanOrEqual(painter.shownRect.x + painter.shownRect.width, sensor.width)
        var packed = [UInt8](repeating: 90, count: PixelFormat.yuyv.frameByteCount(sensor))
        packed.withUnsafeMutableBytes { bytes in
            let planes = PicturePlanes(packed: bytes.baseAddress!, byteCount: bytes.count,
                                       format: VideoFormat(size: sensor, pixelFormat: .yuyv, framesPerSecond: 30))!
            XCTAssertFalse(painter.draw("1", into: planes), "the overlay draws after the conversion to 4:2:0")
        }
        XCTAssertEqual(Set(packed), [90])
        XCTAssertNil(OverlayPainter(sensor: sensor, orientation: .upright, position: .topLeft, heightFraction: 0.1, atlasMaker: { _ in nil }))
    }
}
