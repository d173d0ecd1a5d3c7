/// The encoder defaults: bits per pixel, frame rate, keyframe interval.
public enum EncodingPolicy {
    /// Frames below this many pixels (640×480) get the low bits-per-pixel figure.
    public static let smallFramePixelCount = 640 * 480
    public static let smallFrameBitsPerPixel = 4.05
    public static let largeFrameBitsPerPixel = 10.1
    /// "A keyframe at least every 30 frames" — also bounds what a power cut loses.
    public static let maximumKeyframeInterval = 30

    /// The default video bitrate in bits per second when the configuration names none:
    /// width × height × bits-per-pixel.
    public static func defaultBitrate(for size: FrameSize) -> Int {
        let bpp = size.pixelCount < smallFramePixelCount ? smallFrameBitsPerPixel : largeFrameBitsPerPixel
        return Int((Double(size.pixelCount) * bpp).rounded())
    }

    /// The encoder's rate cap (its VBV): at most 1.5 × the bitrate, over a buffer of one
    /// second of it. Without one, libx264's average-bitrate control spends what it saved
    /// on a quiet scene the moment the picture gets busy — measured at 294 Mbit/s in the
    /// first second of noise after 10 s of a test pattern, against a 9.3 Mbit/s target —
    /// which drops frames, bursts a stream, and empties the pre-event ring (kept to a
    /// byte budget) down to a second. With the cap a busy second costs at most 1.5 ×.
    /// - Returns: The maximum rate in bits per second and the buffer in bits; zeros for
    ///   no bitrate (the encoder then chooses).
    public static func rateCap(bitrate: Int) -> (maximumRate: Int, bufferBits: Int) {
        guard bitrate > 0 else { return (0, 0) }
        let (maximum, overflow) = bitrate.multipliedReportingOverflow(by: 3)
        return (overflow ? Int.max : maximum / 2, bitrate)
    }

    /// Keyframe interval in frames: never more than 30, and never more than one second.
    public static func keyframeInterval(framesPerSecond: Int) -> Int {
        max(1, min(maximumKeyframeInterval, framesPerSecond))
    }
}

/// When to close one segment and open the next (split long recordings).
public struct SegmentPolicy: Sendable, Equatable {
    /// Longest segment in seconds; nil for no limit.
    public var maximumSeconds: Double?
    /// Largest segment in bytes; nil for no limit.
    public var maximumBytes: Int64?

    public init(maximumSeconds: Double? = 300, maximumBytes: Int64? = nil) {
        self.maximumSeconds = maximumSeconds
        self.maximumBytes = maximumBytes
    }

    /// Whether a segment that has run `seconds` and written `bytes` should end before
    /// the next frame. The byte limit leaves room for the frame about to be written.
    public func shouldCut(seconds: Double, bytes: Int64, nextFrameEstimate: Int64 = 0) -> Bool {
        if let limit = maximumSeconds, seconds >= limit { return true }
        if let limit = maximumBytes, bytes + nextFrameEstimate >= limit { return true }
        return false
    }
}
