/// Finds how much of an interrupted fragmented MP4 is whole.
///
/// A fragmented file is `ftyp moov (moof mdat)* …`; a crash or a full disk tears at
/// most the last box. Cutting the file after the last complete `mdat` (or after
/// `moov`, if no fragment survived) leaves a valid, playable file — without needing
/// any free space, which matters when the disk is what failed.
///
/// Every number comes from a file a crash (or anyone) may have torn, so no box size is
/// added to an offset before it is known to fit: a corrupt size ends the scan, it never
/// traps. A fragment that claims more samples than its `mdat` has bytes ends it too:
/// libavformat allocates memory for every sample claimed before reading one, so such a
/// count, left in the file, could make salvage take gigabytes.
public enum FragmentedMP4Scan {
    public struct Result: Sendable, Equatable {
        /// Bytes to keep.
        public var playableLength: Int64
        /// Complete `moof`+`mdat` pairs inside `playableLength`.
        public var fragments: Int
        /// Whether the header (`moov`) is there at all.
        public var hasHeader: Bool
        /// The scan ended at a fragment that claims more samples than it holds bytes (or
        /// whose header is far larger than kioskcam writes): damage, not a torn end (a tear
        /// leaves a fragment whole or short, never wrong).
        public var endsAtDamagedFragment = false

        public init(playableLength: Int64, fragments: Int, hasHeader: Bool, endsAtDamagedFragment: Bool = false) {
            self.playableLength = playableLength
            self.fragments = fragments
            self.hasHeader = hasHeader
            self.endsAtDamagedFragment = endsAtDamagedFragment
        }
    }

    /// What a writer continuing the file (the timelapse) needs beyond the salvage facts.
    public struct Continuation: Sendable, Equatable {
        public var result: Result
        /// Samples the complete fragments hold: the next one's number.
        public var samples: UInt64
        /// Where the last complete fragment ends (the header's end if there is none):
        /// where a writer goes on. Unlike `result.playableLength` it leaves out any other
        /// box after it — a torn write's bytes can look like one.
        public var fragmentsEnd: Int64
        /// Where the `moov` box is, to compare its stream description with the new one's.
        public var headerOffset: Int64
        public var headerLength: Int64
    }

    /// The scan, and where the header is and how many samples the whole fragments hold;
    /// nil when the file has no header.
    public static func continuation(fileSize: Int64, read: (_ offset: Int64, _ count: Int) -> [UInt8]) -> Continuation? {
        let walked = walk(fileSize: fileSize, read: read)
        guard let header = walked.header else { return nil }
        return Continuation(result: walked.result, samples: walked.samples, fragmentsEnd: walked.fragmentsEnd,
                            headerOffset: header.offset, headerLength: header.length)
    }

    /// Walks the top-level boxes.
    /// - Parameters:
    ///   - fileSize: The file's length in bytes.
    ///   - read: Returns up to `count` bytes at `offset` (fewer at end of file).
    public static func scan(fileSize: Int64, read: (_ offset: Int64, _ count: Int) -> [UInt8]) -> Result {
        walk(fileSize: fileSize, read: read).result
    }

    private static func walk(fileSize: Int64, read: (_ offset: Int64, _ count: Int) -> [UInt8])
        -> (result: Result, samples: UInt64, fragmentsEnd: Int64, header: (offset: Int64, length: Int64)?) {
        var offset: Int64 = 0
        var keep: Int64 = 0
        var fragments = 0
        var hasHeader = false
        var openFragment = false
        var claimedSamples: UInt64 = 0
        var damaged = false
        var samples: UInt64 = 0
        var moov: (offset: Int64, length: Int64)?
        var fragmentsEnd: Int64 = 0
        guard fileSize > 0 else { return (Result(playableLength: 0, fragments: 0, hasHeader: false), 0, 0, nil) }
        boxes: while fileSize - offset >= 8 {
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
                if moov == nil {
                    moov = (offset, size)
                    fragmentsEnd = end
                }
                keep = end
            case "moof":
                let bodyLength = size - headerLength
                guard bodyLength <= largestFragmentHeader else { damaged = true; break boxes }
                let body = read(offset + headerLength, Int(bodyLength))
                guard body.count == Int(bodyLength) else { break boxes }
                // No more samples than bytes left: checked here, the sum cannot overflow.
                claimedSamples += sampleCount(inside: body[...])
                guard claimedSamples <= UInt64(remaining) else { damaged = true; break boxes }
                openFragment = true
            case "mdat":
                if openFragment {
                    // Every sample takes at least one byte of the fragment's data.
                    guard claimedSamples <= UInt64(size - headerLength) else { damaged = true; break boxes }
                    fragments += 1
                    samples += claimedSamples   // each at most the file's size: no overflow
                    if hasHeader { fragmentsEnd = end }
                }
                openFragment = false
                claimedSamples = 0
                if hasHeader { keep = end }
            default:
                if !openFragment { keep = end }
            }
            offset = end
        }
        return (Result(playableLength: hasHeader ? keep : 0, fragments: fragments, hasHeader: hasHeader,
                       endsAtDamagedFragment: damaged), samples, fragmentsEnd, moov)
    }

    /// A `moof` describes about a second of media in a few hundred bytes; one larger than
    /// this is not a fragment header kioskcam wrote.
    static let largestFragmentHeader: Int64 = 1 << 20

    /// The samples every `trun` inside `boxes` (a `moof`'s body, or a `traf`'s) claims.
    /// Boxes are walked as libavformat walks them, a child running past its parent cut to
    /// fit and nesting at most 10 deep, so that no count libavformat acts on is missed.
    static func sampleCount(inside boxes: ArraySlice<UInt8>, depth: Int = 0) -> UInt64 {
        guard depth <= 10 else { return 0 }
        var total: UInt64 = 0
        var at = boxes.startIndex
        while let (size, headerLength, type) = child(of: boxes, at: at, cutToFit: true) {
            let body = boxes[(at + headerLength)..<(at + size)]
            switch type {
            case "traf": total += sampleCount(inside: body, depth: depth + 1)
            case "trun" where body.count >= 8: total += UInt64(bigEndian32(body, body.startIndex + 4))
            default: break
            }
            at += size
        }
        return total
    }

    /// The bytes of the box at `path` (types, outermost first, each the first of its
    /// type) inside `boxes`, header included; nil when it is not there or does not fit.
    /// Used to tell whether two `moov`s describe the same stream (their `stsd`).
    public static func box(at path: [String], inside boxes: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        guard let first = path.first, path.count <= 10 else { return nil }
        var at = boxes.startIndex
        while let (size, headerLength, type) = child(of: boxes, at: at, cutToFit: false) {
            if type == first {
                let whole = boxes[at..<(at + size)]
                guard path.count > 1 else { return whole }
                // stsd has a version/flags word and an entry count before its children.
                let skip = first == "stsd" ? 8 : 0
                guard size - headerLength >= skip else { return nil }
                return box(at: Array(path.dropFirst()), inside: boxes[(at + headerLength + skip)..<(at + size)])
            }
            at += size
        }
        return nil
    }

    /// The box starting at `at` inside `boxes`: its size (header included), header length
    /// and type; nil when no whole header is there, or its size is below its header. A box
    /// running past `boxes` is cut to fit (`cutToFit`, as libavformat reads children) or
    /// is nil. A 64-bit size is compared with what is left before it is converted.
    static func child(of boxes: ArraySlice<UInt8>, at: Int, cutToFit: Bool) -> (size: Int, headerLength: Int, type: String)? {
        let left = boxes.endIndex - at
        guard left >= 8 else { return nil }
        var size = Int(bigEndian32(boxes, at))
        var headerLength = 8
        if size == 1 {
            guard left >= 16 else { return nil }
            let large = UInt64(bigEndian32(boxes, at + 8)) << 32 | UInt64(bigEndian32(boxes, at + 12))
            size = large > UInt64(left) ? left + 1 : Int(large)   // "more than is left", without converting
            headerLength = 16
        } else if size == 0 {
            size = left
        }
        guard size >= headerLength else { return nil }
        if size > left {
            guard cutToFit else { return nil }
            size = left
        }
        return (size, headerLength, String(decoding: boxes[(at + 4)..<(at + 8)], as: UTF8.self))
    }

    static func bigEndian32<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes, _ at: Int) -> UInt32
        where Bytes.Index == Int {
        UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8 | UInt32(bytes[at + 3])
    }
}
