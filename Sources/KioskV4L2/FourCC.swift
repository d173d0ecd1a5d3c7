/// A V4L2 pixel format code: four ASCII characters packed little-endian into 32 bits
/// ("YUYV" = 'Y' | 'U' << 8 | 'Y' << 16 | 'V' << 24); bit 31 marks a big-endian variant.
public struct FourCC: Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt32

    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// From text such as "MJPG"; shorter codes are padded with spaces as V4L2 does ("Y10 ").
    /// nil for more than four characters or non-ASCII text.
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count <= 4, bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
        let padded = bytes + [UInt8](repeating: 0x20, count: 4 - bytes.count)
        rawValue = padded.enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (8 * UInt32($1.offset)) }
    }

    static let bigEndianFlag: UInt32 = 1 << 31

    /// "YUYV", "Y10" (trailing spaces dropped), "AR15-BE" for a big-endian variant.
    public var description: String {
        let characters = (0..<4).map { index -> Character in
            let byte = UInt8(truncatingIfNeeded: rawValue >> (8 * UInt32(index))) & (index == 3 ? 0x7F : 0xFF)
            if byte == 0 { return " " }  // short codes padded with NULs read like space-padded ones
            return (0x20..<0x7F).contains(byte) ? Character(Unicode.Scalar(byte)) : "?"
        }
        var text = String(characters)
        while text.hasSuffix(" ") { text.removeLast() }
        return rawValue & Self.bigEndianFlag != 0 ? text + "-BE" : text
    }
}
