import KioskCore
@testable import KioskFramebuffer
@testable import KioskScreen
import XCTest

final class FramebufferPixelFormatTests: XCTestCase {
    typealias Channel = FramebufferPixelFormat.Channel

    func testDetectsTheCommonLayoutsFromBitfields() {
        XCTAssertEqual(FramebufferPixelFormat(bitsPerPixel: 16, red: Channel(offset: 11, length: 5),
                                              green: Channel(offset: 5, length: 6), blue: Channel(offset: 0, length: 5))?.description,
                       "RGB565")
        XCTAssertEqual(FramebufferPixelFormat(bitsPerPixel: 16, red: Channel(offset: 0, length: 5),
                                              green: Channel(offset: 5, length: 6), blue: Channel(offset: 11, length: 5))?.description,
                       "BGR565")
        XCTAssertEqual(FramebufferPixelFormat(bitsPerPixel: 32, red: Channel(offset: 16, length: 8),
                                              green: Channel(offset: 8, length: 8), blue: Channel(offset: 0, length: 8))?.description,
                       "XRGB8888")
        // vfb and many drivers report alpha at 32 bpp: still XRGB8888 to us, written opaque.
        let argb = FramebufferPixelFormat(bitsPerPixel: 32, red: Channel(offset: 16, length: 8), green: Channel(offset: 8, length: 8),
                                          blue: Channel(offset: 0, length: 8), transparency: Channel(offset: 24, length: 8))
        XCTAssertEqual(argb?.description, "XRGB8888")
        XCTAssertEqual(PixelPacker(argb!).pack(0x0012_3456), 0xFF12_3456)
        XCTAssertEqual(FramebufferPixelFormat(bitsPerPixel: 32, red: Channel(offset: 0, length: 8),
                                              green: Channel(offset: 8, length: 8), blue: Channel(offset: 16, length: 8))?.description,
                       "XBGR8888")
        // RGB555 is drawable too; its name spells the bitfields out.
        XCTAssertEqual(FramebufferPixelFormat(bitsPerPixel: 16, red: Channel(offset: 10, length: 5),
                                              green: Channel(offset: 5, length: 5), blue: Channel(offset: 0, length: 5))?.description,
                       "16 bpp R5@10 G5@5 B5@0")
    }

    func testRejectsWhatCannotBeDrawn() {
        // vfb's default: 8 bpp palette.
        XCTAssertNil(FramebufferPixelFormat(bitsPerPixel: 8, red: Channel(offset: 0, length: 8),
                                            green: Channel(offset: 0, length: 8), blue: Channel(offset: 0, length: 8)))
        XCTAssertNil(FramebufferPixelFormat(bitsPerPixel: 24, red: Channel(offset: 16, length: 8),
                                            green: Channel(offset: 8, length: 8), blue: Channel(offset: 0, length: 8)))
        // Overlapping, too wide, outside the pixel, missing.
        XCTAssertNil(FramebufferPixelFormat(bitsPerPixel: 16, red: Channel(offset: 10, length: 6),
                                            green: Channel(offset: 5, length: 6), blue: Channel(offset: 0, length: 5)))
        XCTAssertNil(FramebufferPixelFormat(bitsPerPixel: 32, red: Channel(offset: 20, length: 10),
                                            green: Channel(offset: 10, length: 10), blue: Channel(offset: 0, length: 10)))
        XCTAssertNil(FramebufferPixelFormat(bitsPerPixel: 16, red: Channel(offset: 12, length: 5),
                                            green: Channel(offset: 5, length: 6), blue: Channel(offset: 0, length: 5)))
        XCTAssertNil(FramebufferPixelFormat(bitsPerPixel: 16, red: Channel(offset: 11, length: 0),
                                            green: Channel(offset: 5, length: 6), blue: Channel(offset: 0, length: 5)))
    }

    func testPackAndUnpack() {
        let rgb565 = PixelPacker(.rgb565), bgr565 = PixelPacker(.bgr565), xbgr = PixelPacker(.xbgr8888)
        XCTAssertEqual(rgb565.pack(0x00FF_0000), 0xF800)
        XCTAssertEqual(rgb565.pack(0x0000_FF00), 0x07E0)
        XCTAssertEqual(rgb565.pack(0x0000_00FF), 0x001F)
        XCTAssertEqual(bgr565.pack(0x00FF_0000), 0x001F)
        XCTAssertEqual(xbgr.pack(0x0011_2233), 0x0033_2211)
        // Widening repeats the top bits: full scale stays full scale, black stays black.
        XCTAssertEqual(rgb565.unpack(0xFFFF), 0xFFFF_FFFF)
        XCTAssertEqual(rgb565.unpack(0x0000), 0xFF00_0000)
        XCTAssertEqual(rgb565.unpack(rgb565.pack(0x0084_8284)), 0xFF84_8284)
        for colour: UInt32 in [0x0012_3456, 0x00FE_DCBA, 0x0080_8080] {
            XCTAssertEqual(xbgr.unpack(xbgr.pack(colour)), 0xFF00_0000 | colour)
            // RGB565 keeps the top 5/6/5 bits: within 8 per channel.
            let back = rgb565.unpack(rgb565.pack(colour))
            for shift: UInt32 in [0, 8, 16] {
                XCTAssertLessThanOrEqual(abs(Int(back >> shift & 0xFF) - Int(colour >> shift & 0xFF)), 8)
            }
        }
    }
}
