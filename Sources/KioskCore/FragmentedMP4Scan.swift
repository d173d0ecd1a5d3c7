/// Finds how much of an interrupted fragmented MP4 is whole.
///
/// A fragmented file is `ftyp moov (moof mdat)* …`; a crash or a full disk tears at
/// most the last box. Cutting the file after the last complete `mdat` (or after
/// `moov`, if no fragment survived) leaves a valid, playable file — without needing
/// any free space, which matters when the disk is what failed.
///
/// Every number comes from a file a crash (or anyone) may have torn, so no box size is
/// added to an offset before it is known to fit: a corrupt size ends the scan, it never
/// traps.
public enum FragmentedMP4Scan {
    public struct Result: Sendable, Equatable {
        /// Bytes to keep.
        public var playableLength: Int64
        /// Complete `moof`+`mdat` pairs inside `playableLength`.
        public var fragments: Int
        /// Whether the header (`moov`) is there at all.
        public var hasHeader: Bool
    }

    /// Walks the top-level boxes.
    /// - Parameters:
    ///   - fileSize: The file's length in bytes.
    ///   - read: Returns up to `count` bytes at `offset` (fewer at end of file).
    public static func scan(fileSize: Int64, read: (_ offset: Int64, _ count: Int) -> [UInt8]) -> Result {
        var offset: Int64 = 0
        var keep: Int64 = 0
        var fragments = 0
        var hasHeader = false
        var openFragment = false
        guard fileSize > 0 else { return Result(playableLength: 0, fragments: 0, hasHeader: false) }
        while fileSize - offset >= 8 {
            let header = read(offset, 16)
            guard header.count >= 8 else { break }
            let remaining = fileSize - offset
            var size = Int64(bigEndian32(header, 0))
            var headerLength: Int64 = 8
            let type = String(decoding: header[4..<8], as: UTF8.self)
            if size == 1 {
                guard header.count >= 16 else { break }
                // A 64-bit size may be anything up to UInt64.max: compare before converting.
                let large = UInt64(bigEndian32(header, 8)) << 32 | UInt64(bigEndian32(header, 12))
                guard large <= UInt64(remaining) else { break }
                size = Int64(large)
                headerLength = 16
            } else if size == 0 {
                size = remaining  // "to end of file": only whole if nothing follows
            }
            // A box holds at least its own header (16 bytes with a 64-bit size).
            guard size >= headerLength, size <= remaining else { break }
            let end = offset + size  // cannot overflow: size <= fileSize - offset
            switch type {
            case "moov":
                hasHeader = true
                keep = end
            case "moof":
                openFragment = true
            case "mdat":
                if openFragment { fragments += 1 }
                openFragment = false
                if hasHeader { keep = end }
            default:
                if !openFragment { keep = end }
            }
            offset = end
        }
        return Result(playableLength: hasHeader ? keep : 0, fragments: fragments, hasHeader: hasHeader)
    }

    private static func bigEndian32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8 | UInt32(bytes[at + 3])
    }
}
