/// How a framebuffer packs one pixel, as the kernel describes it in `fb_var_screeninfo`:
/// bits per pixel and where red, green and blue sit. Packed true-colour layouts of 16
/// or 32 bits are drawable: RGB565, BGR565, XRGB8888, XBGR8888 and the other byte orders.
public struct FramebufferPixelFormat: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// One colour channel: its lowest bit and its width, like `fb_bitfield`.
    public struct Channel: Sendable, Equatable, Hashable {
        public var offset: Int
        public var length: Int

        public init(offset: Int, length: Int) {
            self.offset = offset
            self.length = length
        }

        var mask: UInt32 { length == 0 ? 0 : ((UInt32(1) << UInt32(length)) - 1) << UInt32(offset) }
    }

    public let bitsPerPixel: Int
    public let red: Channel
    public let green: Channel
    public let blue: Channel
    /// Alpha bits (`transp`); written as fully opaque so a display controller that honours
    /// them shows the picture.
    public let transparency: Channel

    /// Checks the layout is one kioskcam can draw: 16 or 32 bits, each colour 1 to 8
    /// bits wide, inside the pixel and not overlapping.
    /// - Returns: nil for anything else (palette modes, 24 bpp, 10-bit colour, nonsense).
    public init?(bitsPerPixel: Int, red: Channel, green: Channel, blue: Channel,
                 transparency: Channel = Channel(offset: 0, length: 0)) {
        guard bitsPerPixel == 16 || bitsPerPixel == 32 else { return nil }
        var used: UInt32 = 0
        for channel in [red, green, blue, transparency] {
            let isColour = channel != transparency
            guard channel.length >= (isColour ? 1 : 0), channel.length <= 8, channel.offset >= 0,
                  channel.offset + channel.length <= bitsPerPixel else { return nil }
            guard used & channel.mask == 0 else { return nil }
            used |= channel.mask
        }
        self.bitsPerPixel = bitsPerPixel
        self.red = red
        self.green = green
        self.blue = blue
        self.transparency = transparency
    }

    public var bytesPerPixel: Int { bitsPerPixel / 8 }

    public static let rgb565 = FramebufferPixelFormat(bitsPerPixel: 16, red: .init(offset: 11, length: 5),
                                                      green: .init(offset: 5, length: 6), blue: .init(offset: 0, length: 5))!
    public static let bgr565 = FramebufferPixelFormat(bitsPerPixel: 16, red: .init(offset: 0, length: 5),
                                                      green: .init(offset: 5, length: 6), blue: .init(offset: 11, length: 5))!
    public static let xrgb8888 = FramebufferPixelFormat(bitsPerPixel: 32, red: .init(offset: 16, length: 8),
                                                        green: .init(offset: 8, length: 8), blue: .init(offset: 0, length: 8))!
    public static let xbgr8888 = FramebufferPixelFormat(bitsPerPixel: 32, red: .init(offset: 0, length: 8),
                                                        green: .init(offset: 8, length: 8), blue: .init(offset: 16, length: 8))!

    /// The well-known layouts by name, for file headers, tests and the benchmark.
    public static let named: [String: FramebufferPixelFormat] = [
        "RGB565": .rgb565, "BGR565": .bgr565, "XRGB8888": .xrgb8888, "XBGR8888": .xbgr8888,
    ]

    /// "RGB565", "XRGB8888", …, or the bitfields spelled out for anything else.
    public var description: String {
        let colours = FramebufferPixelFormat(bitsPerPixel: bitsPerPixel, red: red, green: green, blue: blue)
        if let name = Self.named.first(where: { $0.value == colours })?.key { return name }
        func field(_ letter: String, _ c: Channel) -> String { "\(letter)\(c.length)@\(c.offset)" }
        var text = "\(bitsPerPixel) bpp \(field("R", red)) \(field("G", green)) \(field("B", blue))"
        if transparency.length > 0 { text += " " + field("A", transparency) }
        return text
    }

    /// Whether pixels are the same 32-bit words cairo's RGB24 surface holds
    /// (0x00RRGGBB), so rows copy with `memcpy`.
    package var matchesCairo: Bool {
        bitsPerPixel == 32 && red == Channel(offset: 16, length: 8) && green == Channel(offset: 8, length: 8)
            && blue == Channel(offset: 0, length: 8)
    }
}

/// Packs cairo's 0x00RRGGBB pixels into a framebuffer's layout and back. Built once
/// per framebuffer; the shifts are plain integers so the copy loop stays tight.
package struct PixelPacker: Sendable {
    package let bytesPerPixel: Int
    private let redShift: UInt32, greenShift: UInt32, blueShift: UInt32
    private let redDrop: UInt32, greenDrop: UInt32, blueDrop: UInt32
    private let redLength: UInt32, greenLength: UInt32, blueLength: UInt32
    private let opaque: UInt32

    package init(_ format: FramebufferPixelFormat) {
        bytesPerPixel = format.bytesPerPixel
        redShift = UInt32(format.red.offset); greenShift = UInt32(format.green.offset); blueShift = UInt32(format.blue.offset)
        redLength = UInt32(format.red.length); greenLength = UInt32(format.green.length); blueLength = UInt32(format.blue.length)
        redDrop = 8 - redLength; greenDrop = 8 - greenLength; blueDrop = 8 - blueLength
        opaque = format.transparency.mask
    }

    /// One cairo pixel (0x??RRGGBB) in the framebuffer's layout.
    @inline(__always)
    package func pack(_ xrgb: UInt32) -> UInt32 {
        let r = (xrgb >> 16) & 0xFF, g = (xrgb >> 8) & 0xFF, b = xrgb & 0xFF
        return (r >> redDrop) << redShift | (g >> greenDrop) << greenShift | (b >> blueDrop) << blueShift | opaque
    }

    /// One framebuffer pixel as 0xFFRRGGBB, each channel widened back to 8 bits by
    /// repeating its top bits (so 5-bit 31 becomes 255, not 248).
    @inline(__always)
    package func unpack(_ pixel: UInt32) -> UInt32 {
        func widen(_ value: UInt32, _ length: UInt32) -> UInt32 {
            var result = value << (8 - length)
            var filled = length
            while filled < 8 {
                result |= result >> filled
                filled *= 2
            }
            return result & 0xFF
        }
        let r = widen((pixel >> redShift) & ((1 << redLength) - 1), redLength)
        let g = widen((pixel >> greenShift) & ((1 << greenLength) - 1), greenLength)
        let b = widen((pixel >> blueShift) & ((1 << blueLength) - 1), blueLength)
        return 0xFF00_0000 | r << 16 | g << 8 | b
    }
}
