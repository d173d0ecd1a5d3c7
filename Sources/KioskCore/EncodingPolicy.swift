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
