import KioskCore
@testable import KioskFramebuffer
@testable import KioskScreen
import XCTest

final class PanelCopyTests: XCTestCase {
    func testRotationMapsCornersAndIsInvertible() {
        let panel = ScreenSize(width: 8, height: 4)
        let expectations: [(ScreenRotation, ScreenSize, ScreenPoint)] = [
            // (rotation, logical size, where the picture's top-left pixel lands)
            (.none, ScreenSize(width: 8, height: 4), ScreenPoint(x: 0, y: 0)),
            (.quarter, ScreenSize(width: 4, height: 8), ScreenPoint(x: 7, y: 0)),
            (.half, ScreenSize(width: 8, height: 4), ScreenPoint(x: 7, y: 3)),
            (.threeQuarters, ScreenSize(width: 4, height: 8), ScreenPoint(x: 0, y: 3)),
        ]
        for (rotation, logicalSize, topLeft) in expectations {
            let mapping = PanelMapping(panelSize: panel, rotation: rotation)
            XCTAssertEqual(mapping.logicalSize, logicalSize, "\(rotation)")
            XCTAssertEqual(mapping.panelPoint(ScreenPoint(x: 0, y: 0)), topLeft, "\(rotation)")
            var seen = Set<ScreenPoint>()
            for y in 0..<logicalSize.height {
                for x in 0..<logicalSize.width {
                    let p = mapping.panelPoint(ScreenPoint(x: x, y: y))
                    XCTAssertTrue((0..<panel.width).contains(p.x) && (0..<panel.height).contains(p.y), "\(rotation) \(x),\(y) → \(p)")
                    XCTAssertEqual(mapping.logicalPoint(p), ScreenPoint(x: x, y: y))
                    seen.insert(p)
                }
            }
            XCTAssertEqual(seen.count, panel.width * panel.height, "\(rotation) covers every panel pixel once")
        }
        // A quarter turn: the picture's first row runs down the panel's right-hand column.
        let quarter = PanelMapping(panelSize: panel, rotation: .quarter)
        XCTAssertEqual(quarter.panelPoint(ScreenPoint(x: 3, y: 0)), ScreenPoint(x: 7, y: 3))
        XCTAssertEqual(quarter.panelRect(ScreenRect(x: 1, y: 2, width: 2, height: 3)), ScreenRect(x: 3, y: 1, width: 3, height: 2))
    }

    func testDamageCopyHonoursPaddedLineLengthAndTouchesOnlyTheRectangle() {
        let rgb555 = FramebufferPixelFormat(bitsPerPixel: 16, red: .init(offset: 10, length: 5), green: .init(offset: 5, length: 5),
                                            blue: .init(offset: 0, length: 5))!
        let argb = FramebufferPixelFormat(bitsPerPixel: 32, red: .init(offset: 16, length: 8), green: .init(offset: 8, length: 8),
                                          blue: .init(offset: 0, length: 8), transparency: .init(offset: 24, length: 8))!
        for format in [FramebufferPixelFormat.rgb565, .xrgb8888, .bgr565, .xbgr8888, rgb555, argb] {
            for rotation in ScreenRotation.allCases {
                let panelSize = ScreenSize(width: 10, height: 6)
                // line_length well beyond width × bytes per pixel, as many drivers report.
                let framebuffer = Framebuffer.memory(size: panelSize, format: format, stride: panelSize.width * format.bytesPerPixel + 24)
                XCTAssertEqual(framebuffer.stride, panelSize.width * format.bytesPerPixel + 24)
                let mapping = PanelMapping(panelSize: panelSize, rotation: rotation)
                let logical = mapping.logicalSize
                // Fill the whole framebuffer, padding included, with a marker byte.
                let total = framebuffer.stride * panelSize.height
                framebuffer.pixels.initializeMemory(as: UInt8.self, repeating: 0xA5, count: total)
                // A source picture whose every pixel is distinct.
                let sourceStride = logical.width * 4 + 16
                let source = UnsafeMutableRawPointer.allocate(byteCount: sourceStride * logical.height, alignment: 16)
                defer { source.deallocate() }
                for y in 0..<logical.height {
                    for x in 0..<logical.width {
                        let colour = UInt32(x * 20) << 16 | UInt32(y * 40) << 8 | UInt32(x * 7 + y * 3)
                        (source + y * sourceStride + x * 4).storeBytes(of: colour, as: UInt32.self)
                    }
                }
                let rect = ScreenRect(x: 1, y: 2, width: 2, height: 3)
                PanelCopy.copy(rect, from: PixelPlane(base: source, size: logical, stride: sourceStride), to: framebuffer.plane,
                               mapping: mapping, packer: PixelPacker(format), format: format)
                let packer = PixelPacker(format)
                let panelRect = mapping.panelRect(rect)
                for row in 0..<panelSize.height {
                    for byte in 0..<framebuffer.stride {
                        let value = framebuffer.pixels.load(fromByteOffset: row * framebuffer.stride + byte, as: UInt8.self)
                        let column = byte / format.bytesPerPixel
                        let inside = byte < panelSize.width * format.bytesPerPixel
                            && panelRect.contains(ScreenPoint(x: column, y: row))
                        if !inside {
                            XCTAssertEqual(value, 0xA5, "\(format) \(rotation): byte \(byte) of row \(row) outside the rectangle was written")
                        }
                    }
                }
                for y in rect.y..<rect.maxY {
                    for x in rect.x..<rect.maxX {
                        let p = mapping.panelPoint(ScreenPoint(x: x, y: y))
                        let address = framebuffer.pixels + p.y * framebuffer.stride + p.x * format.bytesPerPixel
                        let raw = format.bytesPerPixel == 2 ? UInt32(address.load(as: UInt16.self)) : address.load(as: UInt32.self)
                        let expected = (source + y * sourceStride + x * 4).load(as: UInt32.self)
                        XCTAssertEqual(raw, packer.pack(expected), "\(format) \(rotation) logical \(x),\(y)")
                    }
                }
            }
        }
    }

    func testDamageFindsOnlyTheChangedTiles() throws {
        let size = ScreenSize(width: 64, height: 64), whole = ScreenRect(x: 0, y: 0, width: 64, height: 64)
        let a = try CairoCanvas(size: size)
        a.fill(whole, Colour(0x102030))
        var tracker = DamageTracker(size: size)
        XCTAssertEqual(tracker.damage(a.plane), [whole], "the first picture is all new")
        XCTAssertEqual(tracker.damage(a.plane), [])
        a.fill(ScreenRect(x: 10, y: 20, width: 5, height: 3), Colour(0xFFFFFF))
        a.fill(ScreenRect(x: 40, y: 50, width: 2, height: 2), Colour(0xFFFFFF))
        XCTAssertEqual(tracker.damage(a.plane), [ScreenRect(x: 0, y: 16, width: 16, height: 16), ScreenRect(x: 32, y: 48, width: 16, height: 16)])
        XCTAssertEqual(tracker.damage(a.plane), [], "the picture damage was found for is remembered")
        // Changes in neighbouring bands that share columns are one rectangle.
        a.fill(ScreenRect(x: 3, y: 14, width: 20, height: 4), Colour(0x00FF00))
        XCTAssertEqual(tracker.damage(a.plane), [ScreenRect(x: 0, y: 0, width: 32, height: 32)])
        tracker.forget()
        XCTAssertEqual(tracker.damage(a.plane), [whole], "forgotten: everything is copied again")
    }

    /// One bit of one pixel changed anywhere — the edges, the part-tiles of a screen that
    /// is no multiple of 16 — is found in the tile that holds it, and so is the change back.
    func testEverySinglePixelChangeIsFound() throws {
        let size = ScreenSize(width: 37, height: 21)
        let a = try CairoCanvas(size: size)
        a.fill(ScreenRect(x: 0, y: 0, width: size.width, height: size.height), Colour(0x405060))
        var tracker = DamageTracker(size: size)
        _ = tracker.damage(a.plane)
        for y in 0..<size.height {
            for x in 0..<size.width {
                let pixel = (a.pixels + y * a.stride + x * 4).assumingMemoryBound(to: UInt32.self)
                let left = x / 16 * 16, top = y / 16 * 16
                let tile = ScreenRect(x: left, y: top, width: min(size.width, left + 16) - left, height: min(size.height, top + 16) - top)
                pixel.pointee ^= 1
                XCTAssertEqual(tracker.damage(a.plane), [tile], "a bit of pixel \(x),\(y)")
                pixel.pointee ^= 1
                XCTAssertEqual(tracker.damage(a.plane), [tile], "pixel \(x),\(y) back")
            }
        }
    }

    /// The player copies its picture's area on its own: that area is then shown, and only
    /// what changes after it is damage.
    func testARememberedAreaIsNoLongerDamage() throws {
        let size = ScreenSize(width: 64, height: 48)
        let a = try CairoCanvas(size: size)
        a.fill(ScreenRect(x: 0, y: 0, width: 64, height: 48), Colour(0x000000))
        var tracker = DamageTracker(size: size)
        _ = tracker.damage(a.plane)
        let picture = ScreenRect(x: 20, y: 10, width: 30, height: 20)
        a.fill(picture, Colour(0x808080))
        tracker.remember(picture, of: a.plane)
        XCTAssertEqual(tracker.damage(a.plane), [])
        a.fill(ScreenRect(x: 60, y: 40, width: 2, height: 2), Colour(0xFFFFFF))
        XCTAssertEqual(tracker.damage(a.plane), [ScreenRect(x: 48, y: 32, width: 16, height: 16)])
    }
}
