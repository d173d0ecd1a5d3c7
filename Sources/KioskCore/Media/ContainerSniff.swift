/// What a file is, from its first bytes: what kioskcam reads (ISO BMFF — MP4, M4A,
/// MOV —, WAV, and its own JPEG stills), or a name for anything else, for the error that
/// refuses it.
///
/// kioskcam opens files only with the demuxer its container calls for, chosen here,
/// never by FFmpeg's probe, which would hand any file to any of its demuxers (an HLS
/// playlist named `.mp4` would be opened as HLS and fetch what it lists).
public enum ContainerSniff: Equatable, Sendable {
    /// MP4, M4A, MOV; WAV; a JPEG still (kioskcam's photos, read for thumbnails).
    case isoMedia, wave, jpeg
    /// Not ours; `what` names it ("an HLS playlist", "an empty file").
    case other(what: String)

    /// Bytes the decision needs.
    public static let headerLength = 12

    /// The kind of a file that starts with `bytes` (fewer than `headerLength` for a short file).
    public init(_ bytes: some Collection<UInt8>) {
        let head = Array(bytes.prefix(Self.headerLength))
        func ascii(_ range: Range<Int>) -> String? {
            guard head.count >= range.upperBound else { return nil }
            return String(decoding: head[range], as: UTF8.self)
        }
        // ISO BMFF starts with a box; the types kioskcam's files (and salvage's torn ones) start with.
        if let type = ascii(4..<8), ["ftyp", "moov", "moof", "mdat", "free", "skip", "wide", "styp"].contains(type) {
            self = .isoMedia
        } else if ascii(0..<4) == "RIFF", ascii(8..<12) == "WAVE" {
            self = .wave
        } else if head.isEmpty {
            self = .other(what: Self.emptyFile)
        } else if ascii(0..<7) == "#EXTM3U" {
            self = .other(what: "an HLS playlist")
        } else if head[0] == 0x47 {
            self = .other(what: "an MPEG transport stream")
        } else if head.starts(with: [0x1A, 0x45, 0xDF, 0xA3]) {
            self = .other(what: "a Matroska or WebM file")
        } else if head.starts(with: [0xFF, 0xD8, 0xFF]) {
            self = .jpeg
        } else if head.count >= 2, head[0] == 0xFF, head[1] & 0xF6 == 0xF0 {
            self = .other(what: "raw AAC (ADTS)")
        } else if head.starts(with: [0x89, 0x50, 0x4E, 0x47]) {
            self = .other(what: "a PNG picture")
        } else if ascii(0..<3) == "FLV" {
            self = .other(what: "an FLV file")
        } else if ascii(0..<4) == "RIFF" {
            self = .other(what: "a RIFF file that is not WAV (AVI?)")
        } else if head.starts(with: [0, 0, 0, 1]) || head.starts(with: [0, 0, 1]) {
            self = .other(what: "a raw H.264 stream")
        } else {
            self = .other(what: Self.unrecognised)
        }
    }

    static let emptyFile = "an empty file"
    static let unrecognised = "not a recognised media file"

    /// The name of the other container it is ("an HLS playlist"); nil for ours, and for
    /// bytes that are no container at all (an empty file, or a recording damaged at its start).
    public var otherContainer: String? {
        guard case .other(let what) = self, what != Self.emptyFile, what != Self.unrecognised else { return nil }
        return what
    }

    /// libavformat's demuxer for it; nil for anything else.
    public var demuxerName: String? {
        switch self {
        case .isoMedia: "mov"
        case .wave: "wav"
        case .jpeg: "jpeg_pipe"
        case .other: nil
        }
    }
}
