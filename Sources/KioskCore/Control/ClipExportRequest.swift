/// `clip.export`: cut a clip out of a recording in the daemon's library. The clip is
/// written under the library's `exports/tmp`, never to a path the client names, so a
/// socket client cannot make the daemon write anywhere else.
public struct ClipExportRequest: Sendable, Equatable {
    /// The recording, relative to the media root: `video/YYYYMMDD/HHMMSS.mp4` or
    /// `audio/YYYYMMDD/HHMMSS.m4a` (with an event label or attempt number as `list` shows).
    public var file: String
    /// Seconds; nil for the beginning.
    public var from: Double?
    /// Seconds; nil for the end.
    public var to: Double?
    /// Re-encode the whole range (frame-exact), optionally smaller.
    public var reencode: Bool
    /// With `reencode`: even width and height, 16…4096.
    public var size: FrameSize?
    /// With `reencode`: kbit/s, 50…20000.
    public var bitrateKbps: Int?
    /// The sound as 16-bit WAV instead of a copy.
    public var wav: Bool

    public init(file: String, from: Double? = nil, to: Double? = nil, reencode: Bool = false, size: FrameSize? = nil,
                bitrateKbps: Int? = nil, wav: Bool = false) {
        self.file = file
        self.from = from
        self.to = to
        self.reencode = reencode
        self.size = size
        self.bitrateKbps = bitrateKbps
        self.wav = wav
    }

    /// Times a recording can have: a week at most (`ClipInputFile` treats more as damage).
    public static let timeRange: ClosedRange<Double> = 0...604_800

    /// The wire arguments.
    public var arguments: [String: JSONValue] {
        var object: [String: JSONValue] = ["file": .string(file)]
        if let from { object["from"] = .number(from) }
        if let to { object["to"] = .number(to) }
        if reencode { object["reencode"] = .bool(true) }
        if let size { object["size"] = .string("\(size.width)x\(size.height)") }
        if let bitrateKbps { object["bitrate"] = .integer(Int64(bitrateKbps)) }
        if wav { object["wav"] = .bool(true) }
        return object
    }

    /// Whether `size` may be asked for: even, 16…4096 each way (what libx264 and the
    /// scaler take, and no larger than a camera gives).
    public static func isValidSize(_ size: FrameSize) -> Bool {
        (16...4096).contains(size.width) && (16...4096).contains(size.height) && size.width % 2 == 0 && size.height % 2 == 0
    }
}

extension LibraryLayout {
    /// The absolute path of a recording named relative to the root as `list` names it
    /// (`video/20261124/101455.mp4`, `audio/20261124/101455-1.m4a`,
    /// `video/20261124/101455-motion.mp4`); nil for anything else — an absolute path,
    /// `..`, another folder, a photo, a name that is not a recording's.
    public func recordingPath(relative: String) -> String? {
        let parts = relative.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, let kind = MediaKind(rawValue: String(parts[0])), kind != .photo,
              CalendarDate(folderName: String(parts[1])) != nil else { return nil }
        let name = parts[2].utf8
        let allowed: (UInt8) -> Bool = {
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0)
                || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".")
        }
        guard (8...64).contains(name.count), name.allSatisfy(allowed), parts[2].hasSuffix("." + kind.fileExtension),
              parts[2].prefix(6).allSatisfy(\.isASCIIDigit), !parts[2].contains("..") else { return nil }
        return kindDirectory(kind) + "/" + parts[1] + "/" + parts[2]
    }

    /// Where `clip.export` writes clips for a maintainer to fetch: inside the root (same
    /// filesystem, under the disk guard's eye), outside the kind folders retention walks.
    public var exportsDirectory: String { (root.hasSuffix("/") ? root : root + "/") + "exports/tmp" }

    /// The file name of an exported clip: the recording's kind, day and name and the
    /// range in milliseconds, so the same request gives the same name and different ones do not collide.
    public static func exportName(relative: String, from: Double, to: Double?, fileExtension: String) -> String {
        let stem = relative.split(separator: "/").joined(separator: "-")
        let base = stem.split(separator: ".").first.map(String.init) ?? stem
        func ms(_ seconds: Double) -> String {
            guard seconds.isFinite, seconds >= 0, seconds < 1e9 else { return "end" }
            return String(Int((seconds * 1000).rounded()))
        }
        return base + "_" + ms(from) + "-" + (to.map(ms) ?? "end") + "." + fileExtension
    }
}
