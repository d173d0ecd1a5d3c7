import KioskCore

/// The header of a kioskcam framebuffer file: what a separate process needs to read
/// the picture the daemon draws. Little-endian 32-bit fields, padded to one page so
/// the pixels start page-aligned:
///
/// ```
/// 0  "KIOSKFB1"         8 bytes, magic and version
/// 8  pixel offset       4096
/// 12 width, 16 height   visible pixels
/// 20 stride             bytes a row
/// 24 bits per pixel     16 or 32
/// 28 red offset, length   36 green offset, length
/// 44 blue offset, length  52 alpha offset, length
/// 60 (end)
/// ```
package struct FramebufferFileHeader: Equatable {
    package static let magic = Array("KIOSKFB1".utf8)
    package static let encodedLength = 60
    package static let pageSize = 4096

    package let size: ScreenSize
    package let stride: Int
    package let format: FramebufferPixelFormat
    package let pixelOffset: Int

    package init(size: ScreenSize, format: FramebufferPixelFormat) {
        self.size = size
        self.format = format
        // Rows padded to 16 bytes, as many display controllers do.
        stride = (size.width * format.bytesPerPixel + 15) / 16 * 16
        pixelOffset = Self.pageSize
    }

    package var fileLength: Int { pixelOffset + stride * size.height }

    package var encoded: [UInt8] {
        var bytes = Self.magic
        let fields = [pixelOffset, size.width, size.height, stride, format.bitsPerPixel,
                      format.red.offset, format.red.length, format.green.offset, format.green.length,
                      format.blue.offset, format.blue.length, format.transparency.offset, format.transparency.length]
        for field in fields {
            let value = UInt32(truncatingIfNeeded: field)
            bytes += [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 24)]
        }
        // 8 + 13 × 4 = 60
        return bytes
    }

    /// Parses and checks a header.
    /// - Returns: nil when the magic is wrong or the numbers do not make a picture.
    package init?(decoding bytes: [UInt8]) {
        guard bytes.count >= Self.encodedLength, Array(bytes[0..<8]) == Self.magic else { return nil }
        func field(_ index: Int) -> Int {
            let o = 8 + index * 4
            return Int(UInt32(bytes[o]) | UInt32(bytes[o + 1]) << 8 | UInt32(bytes[o + 2]) << 16 | UInt32(bytes[o + 3]) << 24)
        }
        let offset = field(0), width = field(1), height = field(2), stride = field(3)
        guard let format = FramebufferPixelFormat(
            bitsPerPixel: field(4), red: .init(offset: field(5), length: field(6)), green: .init(offset: field(7), length: field(8)),
            blue: .init(offset: field(9), length: field(10)), transparency: .init(offset: field(11), length: field(12))
        ) else { return nil }
        guard (1...16_384).contains(width), (1...16_384).contains(height), offset >= Self.encodedLength,
              stride >= width * format.bytesPerPixel, stride <= 1 << 20 else { return nil }
        self.size = ScreenSize(width: width, height: height)
        self.stride = stride
        self.format = format
        self.pixelOffset = offset
    }
}
