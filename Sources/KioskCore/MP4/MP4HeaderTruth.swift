/// Makes a finished fragmented MP4's header say how long the file is and how many bits
/// it really carries, by overwriting fields in place.
///
/// libavformat writes a fragmented file's `moov` before the first frame, so its
/// durations (`mvhd`, `tkhd`, `mdhd`) are 0, there is no `mehd`, and `btrt`/`esds` hold
/// the encoder's configured bitrate. Players that trust the header then show no length
/// (MP4Box), drop the last fragment (GStreamer) or grow the length as they read
/// (Chromium without Range requests). The writer therefore reserves room for a `mehd`
/// when the header is written (`reservingMovieExtendsDuration`), and when the file is
/// finished (or salvaged) these patches fill in the truth.
///
/// Power-cut safety: every patch overwrites bytes of the same length inside boxes that
/// are there already, so no box moves and every state between two writes is a valid
/// file (a field is 0, "unknown", or right). The reserved room is a `free` box, skipped
/// by every reader, until its body is written; only then does its type become `mehd`
/// (`Patches.last`, written after the others reach the disk).
///
/// Every number comes from a file that may be torn or damaged: sizes are checked before
/// use, and a header that does not look as expected gets no patch rather than a wrong one.
public enum MP4HeaderTruth {
    /// What one track really holds, measured by the writer or by reading the file back.
    public struct Track: Sendable, Equatable {
        public enum Kind: Sendable, Equatable { case video, audio }
        public var kind: Kind
        /// When its first sample starts and its last ends, from time zero of the file.
        public var startNanoseconds: Int64
        public var endNanoseconds: Int64
        public var bytes: Int64
        /// The most bits in any one second (`PeakBitrate`).
        public var peakBitsPerSecond: Int64
        public var largestSample: Int64

        public init(kind: Kind, startNanoseconds: Int64 = 0, endNanoseconds: Int64, bytes: Int64, peakBitsPerSecond: Int64,
                    largestSample: Int64) {
            self.kind = kind
            self.startNanoseconds = startNanoseconds
            self.endNanoseconds = endNanoseconds
            self.bytes = bytes
            self.peakBitsPerSecond = peakBitsPerSecond
            self.largestSample = largestSample
        }

        /// The sum of its samples' durations: what `mdhd` and (with no edit list) `tkhd`
        /// hold. Sound may start a little after the first picture, so it is not the end.
        public var durationNanoseconds: Int64 {
            endNanoseconds > startNanoseconds && startNanoseconds >= 0 ? endNanoseconds - startNanoseconds : 0
        }

        /// Bits per second over the whole track (0 for a track of no length).
        public var averageBitsPerSecond: Int64 {
            guard durationNanoseconds > 0, bytes > 0 else { return 0 }
            let bits = Double(bytes) * 8
            let average = bits * 1e9 / Double(durationNanoseconds)
            return average < 9e18 ? Int64(average.rounded()) : Int64.max
        }
    }

    /// Bytes to write at a file offset.
    public struct Patch: Sendable, Equatable {
        public var offset: Int64
        public var bytes: [UInt8]
    }

    /// The patches, in two groups: `fields` may be written in any order; `commit` (the
    /// reserved box's new type, when there is one) only after `fields` are on the disk.
    public struct Patches: Sendable, Equatable {
        public var fields: [Patch] = []
        public var commit: [Patch] = []
        public var isEmpty: Bool { fields.isEmpty && commit.isEmpty }
    }

    /// Size of the reserved box: a version-1 `mehd` (header 8, version and flags 4, a
    /// 64-bit duration).
    public static let reservedLength = 20

    /// The init segment (`ftyp` + `moov`, as libavformat wrote it) with a 20-byte `free`
    /// box added at the end of `moov/mvex`, the sizes of `mvex` and `moov` grown to hold
    /// it; nil when there is no `moov/mvex` with 32-bit sizes to grow.
    public static func reservingMovieExtendsDuration(in segment: [UInt8]) -> [UInt8]? {
        let bytes = segment[...]
        guard let moov = childBox("moov", in: bytes), moov.headerLength == 8,
              let mvex = childBox("mvex", in: bytes[(moov.start + 8)..<moov.end]), mvex.headerLength == 8,
              moov.end - moov.start <= Int(UInt32.max) - reservedLength else { return nil }
        var out = Array(segment[..<mvex.end])
        out += [0, 0, 0, UInt8(reservedLength)] + Array("free".utf8) + [UInt8](repeating: 0, count: reservedLength - 8)
        out += segment[mvex.end...]
        store32(UInt32(mvex.end - mvex.start + reservedLength), into: &out, at: mvex.start)
        store32(UInt32(moov.end - moov.start + reservedLength), into: &out, at: moov.start)
        return out
    }

    /// The patches for a file that begins with `segment` (its `ftyp` and `moov`).
    public static func patches(initSegment segment: [UInt8], tracks: [Track]) -> Patches {
        guard let moov = childBox("moov", in: segment[...]) else { return Patches() }
        return patches(moov: Array(segment[moov.start..<moov.end]), at: Int64(moov.start), tracks: tracks)
    }

    /// The patches that make the `moov` at `moovOffset` in the file tell the truth about
    /// `tracks` (matched to the file's tracks by handler, `vide` or `soun`).
    /// - Parameter moov: The `moov` box's bytes, header included.
    public static func patches(moov: [UInt8], at moovOffset: Int64, tracks: [Track]) -> Patches {
        var result = Patches()
        let bytes = moov[...]
        guard let box = childBox("moov", in: bytes), box.start == 0, moovOffset >= 0 else { return result }
        let body = bytes[(box.start + box.headerLength)..<box.end]
        guard let mvhd = childBox("mvhd", in: body), let movieTimescale = timescaleAndDuration(of: mvhd, in: bytes)
        else { return result }
        func add(_ at: Int, _ value: [UInt8]) {
            result.fields.append(Patch(offset: moovOffset + Int64(at), bytes: value))
        }
        var movieDuration: Int64 = 0
        for trak in children("trak", in: body) {
            let trakBody = bytes[(trak.start + trak.headerLength)..<trak.end]
            guard let mdia = childBox("mdia", in: trakBody) else { continue }
            let mdiaBody = bytes[(mdia.start + mdia.headerLength)..<mdia.end]
            guard let kind = handlerKind(in: mdiaBody, bytes),
                  let track = tracks.first(where: { $0.kind == kind }), track.durationNanoseconds > 0 else { continue }
            movieDuration = max(movieDuration, track.durationNanoseconds)
            if let mdhd = childBox("mdhd", in: mdiaBody), let media = timescaleAndDuration(of: mdhd, in: bytes),
               let value = units(track.durationNanoseconds, media.timescale) {
                if let field = encode(value, width: media.durationWidth) { add(media.durationAt, field) }
            }
            if let tkhd = childBox("tkhd", in: trakBody), let at = tkhdDurationField(tkhd, in: bytes),
               let value = units(track.durationNanoseconds, movieTimescale.timescale),
               let field = encode(value, width: at.width) {
                add(at.offset, field)
            }
            for entry in sampleEntries(in: mdiaBody, bytes) {
                bitratePatches(entry: entry, kind: kind, track: track, in: bytes).forEach { add($0.at, $0.value) }
            }
        }
        guard movieDuration > 0, let value = units(movieDuration, movieTimescale.timescale) else { return result }
        if let field = encode(value, width: movieTimescale.durationWidth) { add(movieTimescale.durationAt, field) }
        // mehd: the reserved free box becomes one (body first, type last), or one that is
        // there already is corrected.
        guard let mvex = childBox("mvex", in: body) else { return result }
        let mvexBody = bytes[(mvex.start + mvex.headerLength)..<mvex.end]
        if let mehd = childBox("mehd", in: mvexBody), mehd.end - mehd.start == reservedLength, bytes[mehd.start + 8] == 1 {
            add(mehd.start + 12, big64(UInt64(value)))
        } else if let free = childBox("free", in: mvexBody), free.end - free.start == reservedLength, free.headerLength == 8 {
            add(free.start + 8, [1, 0, 0, 0] + big64(UInt64(value)))
            result.commit.append(Patch(offset: moovOffset + Int64(free.start + 4), bytes: Array("mehd".utf8)))
        }
        return result
    }

    /// A `moov` larger than this is not one kioskcam wrote (ours are about 2 KiB).
    static let largestHeader: Int64 = 1 << 20

    /// The `moov` among a file's first top-level boxes, with its offset; nil when there is
    /// none of a size kioskcam writes.
    /// - Parameter read: Up to `count` bytes at `offset` (fewer at the end of the file).
    public static func moov(read: (_ offset: Int64, _ count: Int) -> [UInt8]) -> (bytes: [UInt8], offset: Int64)? {
        var offset: Int64 = 0
        for _ in 0..<4 {
            let header = read(offset, 8)
            guard header.count == 8 else { return nil }
            let size = Int64(read32(header[...], 0))
            // A 64-bit or "to the end" size is not how our ftyp and moov are written.
            guard size >= 8, size <= largestHeader else { return nil }
            if header[4..<8].elementsEqual("moov".utf8) {
                let moov = read(offset, Int(size))
                return moov.count == Int(size) ? (moov, offset) : nil
            }
            offset += size
        }
        return nil
    }

    // MARK: Fields

    /// `units` of a duration in nanoseconds at `timescale`, rounded; nil on overflow.
    static func units(_ nanoseconds: Int64, _ timescale: UInt32) -> Int64? {
        guard nanoseconds >= 0, timescale > 0 else { return nil }
        let (product, overflow) = nanoseconds.multipliedReportingOverflow(by: Int64(timescale))
        guard !overflow, product <= Int64.max - 500_000_000 else { return nil }
        return (product + 500_000_000) / 1_000_000_000
    }

    /// A duration as a 32- or 64-bit field; nil when it does not fit in 32 bits (the field
    /// is then left 0, "unknown", rather than wrapped).
    static func encode(_ value: Int64, width: Int) -> [UInt8]? {
        if width == 8 { return big64(UInt64(value)) }
        guard value <= Int64(UInt32.max) else { return nil }
        return big32(UInt32(value))
    }

    /// `mvhd`/`mdhd`: the timescale, and where the duration is and how wide.
    private static func timescaleAndDuration(of box: Box, in bytes: ArraySlice<UInt8>)
        -> (timescale: UInt32, durationAt: Int, durationWidth: Int)? {
        let body = box.start + box.headerLength
        guard box.end - body >= 4 else { return nil }
        let version = bytes[body]
        // version 0: times 4 + 4, timescale 4, duration 4; version 1: 8 + 8, 4, 8.
        let (timescaleAt, width) = version == 1 ? (body + 4 + 16, 8) : (body + 4 + 8, 4)
        guard version <= 1, timescaleAt + 4 + width <= box.end else { return nil }
        let timescale = read32(bytes, timescaleAt)
        guard timescale > 0 else { return nil }
        return (timescale, timescaleAt + 4, width)
    }

    /// `tkhd`: times, track ID 4, reserved 4, then the duration.
    private static func tkhdDurationField(_ box: Box, in bytes: ArraySlice<UInt8>) -> (offset: Int, width: Int)? {
        let body = box.start + box.headerLength
        guard box.end - body >= 4 else { return nil }
        let version = bytes[body]
        let (at, width) = version == 1 ? (body + 4 + 16 + 8, 8) : (body + 4 + 8 + 8, 4)
        guard version <= 1, at + width <= box.end else { return nil }
        return (at, width)
    }

    private static func handlerKind(in mdiaBody: ArraySlice<UInt8>, _ bytes: ArraySlice<UInt8>) -> Track.Kind? {
        guard let hdlr = childBox("hdlr", in: mdiaBody) else { return nil }
        let at = hdlr.start + hdlr.headerLength + 8   // version and flags, pre_defined
        guard at + 4 <= hdlr.end else { return nil }
        switch String(decoding: bytes[at..<(at + 4)], as: UTF8.self) {
        case "vide": return .video
        case "soun": return .audio
        default: return nil
        }
    }

    /// The sample entries (`avc1`, `mp4a`, …) of `minf/stbl/stsd`.
    private static func sampleEntries(in mdiaBody: ArraySlice<UInt8>, _ bytes: ArraySlice<UInt8>) -> [Box] {
        guard let minf = childBox("minf", in: mdiaBody),
              let stbl = childBox("stbl", in: bytes[(minf.start + minf.headerLength)..<minf.end]),
              let stsd = childBox("stsd", in: bytes[(stbl.start + stbl.headerLength)..<stbl.end]) else { return [] }
        let entriesStart = stsd.start + stsd.headerLength + 8   // version and flags, entry count
        guard entriesStart <= stsd.end else { return [] }
        return boxes(in: bytes[entriesStart..<stsd.end])
    }

    /// `btrt` (buffer size, maximum and average bitrate) and an `esds` decoder
    /// configuration's same three numbers, inside one sample entry.
    private static func bitratePatches(entry: Box, kind: Track.Kind, track: Track, in bytes: ArraySlice<UInt8>)
        -> [(at: Int, value: [UInt8])] {
        // A visual sample entry has 86 bytes before its boxes, an audio one (version 0) 36,
        // its header included.
        let childrenStart = entry.start + (kind == .video ? 86 : 36)
        guard childrenStart <= entry.end else { return [] }
        let inside = bytes[childrenStart..<entry.end]
        let peak = clamp32(track.peakBitsPerSecond)
        let average = clamp32(track.averageBitsPerSecond)
        var patches: [(Int, [UInt8])] = []
        if let btrt = childBox("btrt", in: inside), btrt.start + btrt.headerLength + 12 <= btrt.end {
            let at = btrt.start + btrt.headerLength
            patches.append((at, big32(clamp32(track.largestSample)) + big32(peak) + big32(average)))
        }
        if let esds = childBox("esds", in: inside), let at = decoderConfigBitrates(esds, in: bytes) {
            // bufferSizeDB is 24 bits wide.
            let buffer = min(max(track.largestSample, 0), 0xFF_FFFF)
            patches.append((at, [UInt8(buffer >> 16), UInt8(buffer >> 8 & 0xFF), UInt8(buffer & 0xFF)] + big32(peak) + big32(average)))
        }
        return patches
    }

    /// Where an `esds`'s DecoderConfigDescriptor keeps bufferSizeDB (3 bytes), then
    /// maxBitrate and avgBitrate (4 each); nil when the descriptors do not parse.
    static func decoderConfigBitrates(_ esds: Box, in bytes: ArraySlice<UInt8>) -> Int? {
        var at = esds.start + esds.headerLength + 4   // version and flags
        let end = esds.end
        // A descriptor: a tag byte, then a length of 1 to 4 bytes, 7 bits each.
        func descriptor(_ tag: UInt8) -> Int? {
            guard at < end, bytes[at] == tag else { return nil }
            at += 1
            var length = 0
            for _ in 0..<4 {
                guard at < end else { return nil }
                let byte = bytes[at]
                at += 1
                length = length << 7 | Int(byte & 0x7F)
                if byte & 0x80 == 0 { return at + length <= end ? length : nil }
            }
            return nil
        }
        guard descriptor(0x03) != nil, at + 3 <= end else { return nil }   // ES_Descriptor
        let flags = bytes[at + 2]
        at += 3   // ES_ID, flags
        if flags & 0x80 != 0 { at += 2 }   // dependsOn_ES_ID
        if flags & 0x40 != 0 {             // URL
            guard at < end else { return nil }
            at += 1 + Int(bytes[at])
        }
        if flags & 0x20 != 0 { at += 2 }   // OCR_ES_Id
        guard at <= end, let length = descriptor(0x04), length >= 13 else { return nil }
        return at + 2   // objectTypeIndication, streamType
    }

    // MARK: Boxes (every size checked against what is left)

    struct Box: Equatable {
        var start: Int
        var end: Int
        var headerLength: Int
        var type: String
    }

    /// The boxes in `bytes`, each whole; the walk stops at the first that is not.
    static func boxes(in bytes: ArraySlice<UInt8>) -> [Box] {
        var found: [Box] = []
        var at = bytes.startIndex
        while found.count < 4096, let box = FragmentedMP4Scan.child(of: bytes, at: at, cutToFit: false) {
            found.append(Box(start: at, end: at + box.size, headerLength: box.headerLength, type: box.type))
            at += box.size
        }
        return found
    }

    static func childBox(_ type: String, in bytes: ArraySlice<UInt8>) -> Box? { boxes(in: bytes).first { $0.type == type } }
    static func children(_ type: String, in bytes: ArraySlice<UInt8>) -> [Box] { boxes(in: bytes).filter { $0.type == type } }

    static func read32(_ bytes: ArraySlice<UInt8>, _ at: Int) -> UInt32 { FragmentedMP4Scan.bigEndian32(bytes, at) }

    private static func store32(_ value: UInt32, into bytes: inout [UInt8], at: Int) {
        bytes.replaceSubrange(at..<(at + 4), with: big32(value))
    }

    static func big32(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    static func big64(_ value: UInt64) -> [UInt8] { big32(UInt32(value >> 32)) + big32(UInt32(value & 0xFFFF_FFFF)) }

    private static func clamp32(_ value: Int64) -> UInt32 { UInt32(min(max(value, 0), Int64(UInt32.max))) }
}
