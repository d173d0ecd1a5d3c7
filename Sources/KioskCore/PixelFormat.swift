/// Pixel layouts that cameras deliver and the pipeline accepts.
///
/// Names follow V4L2's fourcc names so logs match `v4l2-ctl` output.
public enum PixelFormat: String, CaseIterable, Sendable, Codable {
    /// Packed 4:2:2, Y0 U Y1 V — the most common USB camera format.
    case yuyv = "YUYV"
    /// Packed 4:2:2, U Y0 V Y1.
    case uyvy = "UYVY"
    /// Planar 4:2:0: Y plane, then U, then V (FFmpeg's yuv420p).
    case yuv420 = "YU12"
    /// Semi-planar 4:2:0: Y plane, then interleaved UV.
    case nv12 = "NV12"

    /// Bytes one frame of `size` occupies, tightly packed (no row padding).
    public func frameByteCount(_ size: FrameSize) -> Int {
        let pixels = size.width * size.height
        switch self {
        case .yuyv, .uyvy: return pixels * 2
        case .yuv420, .nv12: return pixels + 2 * ((size.width + 1) / 2) * ((size.height + 1) / 2)
        }
    }

    /// Whether the format subsamples chroma vertically, which needs an even height.
    public var needsEvenSize: Bool { true }
}

/// A frame size in pixels.
public struct FrameSize: Hashable, Sendable, Codable, CustomStringConvertible {
    public var width: Int
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    public var pixelCount: Int { width * height }
    public var description: String { "\(width)x\(height)" }

    /// Parses "1280x720".
    public init?(parsing text: String) {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]) else { return nil }
        self.init(width: w, height: h)
    }
}

/// What a video source delivers: size, layout and nominal frame rate.
public struct VideoFormat: Hashable, Sendable, CustomStringConvertible {
    public var size: FrameSize
    public var pixelFormat: PixelFormat
    public var framesPerSecond: Int

    public init(size: FrameSize, pixelFormat: PixelFormat, framesPerSecond: Int) {
        self.size = size
        self.pixelFormat = pixelFormat
        self.framesPerSecond = framesPerSecond
    }

    public var frameByteCount: Int { pixelFormat.frameByteCount(size) }
    public var frameDurationNanoseconds: Int64 { 1_000_000_000 / Int64(max(framesPerSecond, 1)) }
    public var description: String { "\(size) \(pixelFormat.rawValue) @\(framesPerSecond)fps" }
}

/// What an audio source delivers: interleaved signed 16-bit PCM.
public struct AudioFormat: Hashable, Sendable, CustomStringConvertible {
    public var sampleRate: Int
    public var channels: Int

    public init(sampleRate: Int, channels: Int) {
        self.sampleRate = sampleRate
        self.channels = channels
    }

    public var bytesPerFrame: Int { 2 * channels }
    public var description: String { "\(sampleRate) Hz, \(channels) ch, S16" }
}
