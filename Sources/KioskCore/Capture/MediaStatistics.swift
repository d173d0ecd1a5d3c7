import Synchronization

/// How many frames (and bytes) the pipeline copied between capture and encode. The
/// media graph hands frames on by reference; a copy happens only where a consumer needs
/// another layout or a driver needs its buffer back sooner — and each is counted here,
/// so the claim is measured (`kioskcam status`, the metrics, `scripts/bench`).
public final class MediaStatistics: Sendable {
    public static let shared = MediaStatistics()

    private let copies = Atomic<Int>(0)
    private let copiedBytes = Atomic<Int>(0)

    public init() {}

    /// One frame copied whole.
    public func countCopy(bytes: Int) {
        copies.add(1, ordering: .relaxed)
        copiedBytes.add(bytes, ordering: .relaxed)
    }

    /// Frames and bytes copied so far.
    public var copied: (frames: Int, bytes: Int) {
        (copies.load(ordering: .relaxed), copiedBytes.load(ordering: .relaxed))
    }
}
