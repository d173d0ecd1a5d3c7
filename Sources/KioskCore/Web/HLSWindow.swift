/// The live view as native HLS, for browsers without Media Source Extensions (older
/// iPhones play HLS but not MSE): the live stream's one-picture fragments gathered into
/// segments that each begin at a keyframe, the newest few kept, and the playlist that
/// lists them. Pure: the web app feeds it the `LiveStream` chunks and serves what it holds.
public struct HLSWindow: Sendable {
    public struct Segment: Sendable, Equatable {
        public var sequence: Int
        public var seconds: Double
        public var bytes: [UInt8]
    }

    /// `ftyp` + `moov` of the stream the segments belong to (`#EXT-X-MAP`).
    public private(set) var initSegment: [UInt8]?
    public private(set) var segments: [Segment] = []
    private var open: (start: Double, bytes: [UInt8])?
    private var nextSequence: Int
    private let minimumSeconds: Double
    private let keep: Int

    /// - Parameters:
    ///   - minimumSeconds: A segment ends at the first keyframe this long after its start
    ///     (the encoder's GOP, or more when keyframes come faster).
    ///   - keep: Segments listed (the newest); older ones are forgotten.
    ///   - firstSequence: The first segment's number (numbers never repeat within a daemon,
    ///     so a player never takes a new segment for one it has).
    public init(minimumSeconds: Double = 1, keep: Int = 6, firstSequence: Int = 0) {
        self.minimumSeconds = minimumSeconds
        self.keep = max(3, keep)
        nextSequence = firstSequence
    }

    /// The number the next segment will have (to start a later window after this one).
    public var upcomingSequence: Int { nextSequence }

    /// A new init segment: the stream started again (new time zero), so what is held belongs
    /// to the old one and is dropped.
    public mutating func start(initSegment bytes: [UInt8]) {
        initSegment = bytes
        segments.removeAll()
        open = nil
    }

    /// One fragment of the live stream: its bytes, whether it begins with a keyframe and
    /// its picture's time in seconds since the stream's start.
    public mutating func add(fragment bytes: [UInt8], keyframe: Bool, seconds: Double) {
        guard initSegment != nil, seconds.isFinite else { return }
        if keyframe, let current = open, seconds - current.start >= minimumSeconds {
            segments.append(Segment(sequence: nextSequence, seconds: seconds - current.start, bytes: current.bytes))
            nextSequence += 1
            if segments.count > keep { segments.removeFirst(segments.count - keep) }
            open = nil
        }
        if open == nil {
            guard keyframe else { return }   // a segment must begin with a keyframe
            open = (seconds, [])
        }
        open?.bytes.append(contentsOf: bytes)
    }

    public func segment(_ sequence: Int) -> Segment? { segments.first { $0.sequence == sequence } }

    /// The live playlist (RFC 8216, version 7 for fMP4), or nil before the first segment.
    /// - Parameter prefix: Where the init and the segments are served ("/api/live").
    public func playlist(prefix: String) -> String? {
        guard let first = segments.first else { return nil }
        let target = Int((segments.map(\.seconds).max() ?? 1).rounded(.up))
        var lines = ["#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-TARGETDURATION:\(max(1, target))",
                     "#EXT-X-MEDIA-SEQUENCE:\(first.sequence)", "#EXT-X-INDEPENDENT-SEGMENTS",
                     "#EXT-X-MAP:URI=\"\(prefix)/init.mp4\""]
        for segment in segments {
            lines.append("#EXTINF:" + Self.decimal(segment.seconds) + ",")
            lines.append("\(prefix)/\(segment.sequence).m4s")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Seconds with three decimals, no exponent.
    private static func decimal(_ seconds: Double) -> String {
        let millis = Int((max(0, seconds) * 1000).rounded())
        let fraction = String(millis % 1000)
        return "\(millis / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }
}
