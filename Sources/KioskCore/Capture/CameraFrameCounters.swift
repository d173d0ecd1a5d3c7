/// What a camera did with its frames since it was opened (a reconnect starts again at
/// 0): for `kioskcam status`, the metrics and the log when a picture stutters. Zero-copy
/// delivery shows as `leased`; the rest were copied out of the camera's buffer.
public struct CameraFrameCounters: Sendable, Equatable, Codable {
    /// Frames handed to the capture graph.
    public var delivered: Int
    /// Of those, handed on in the camera's own buffer, and copied out of it.
    public var leased: Int
    public var copied: Int
    /// Left out because the camera ran faster than asked and cannot be told the rate.
    public var paced: Int
    /// Dropped because every pooled buffer was still on its way to the encoder.
    public var dropped: Int
    /// Dropped because they were broken (flagged by the driver, short, undecodable).
    public var corrupt: Int

    /// Nothing counted yet.
    public static let zero = CameraFrameCounters(delivered: 0, leased: 0, copied: 0, dropped: 0, corrupt: 0)

    public init(delivered: Int, leased: Int, copied: Int, paced: Int = 0, dropped: Int, corrupt: Int) {
        self.delivered = delivered
        self.leased = leased
        self.copied = copied
        self.paced = paced
        self.dropped = dropped
        self.corrupt = corrupt
    }

    /// "900 delivered (850 in the camera's buffers, 50 copied), 0 paced out, 2 dropped
    /// for want of a buffer, 1 corrupt".
    public var line: String {
        "\(delivered) delivered (\(leased) in the camera's buffers, \(copied) copied), \(paced) paced out, "
            + "\(dropped) dropped for want of a buffer, \(corrupt) corrupt"
    }

    /// The counters as metric samples: (label value, count).
    public var samples: [(outcome: String, count: Int)] {
        [("delivered", delivered), ("leased", leased), ("copied", copied), ("paced", paced),
         ("dropped", dropped), ("corrupt", corrupt)]
    }
}

/// A camera that counts its frames (V4L2, libcamera).
public protocol FrameCounting: AnyObject, Sendable {
    var frameCounters: CameraFrameCounters { get }
}
