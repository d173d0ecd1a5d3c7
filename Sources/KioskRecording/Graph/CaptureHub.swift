import KioskCore

/// Something fed from the capture hub: the encode branch, the preview, stills, the luma
/// branch. It gets every frame and chunk **by reference** (no copy), on the capture
/// source's thread, so it must return at once: a branch that is busy drops its own
/// frames and counts them, and never slows capture or the other branches. (The one
/// exception is the encode branch replaying a file as fast as it can, which applies
/// back-pressure on purpose.)
public protocol CaptureBranch: AnyObject, Sendable {
    func take(_ frame: VideoFrame)
    func take(_ chunk: AudioChunk)
    /// The camera delivered its last frame.
    func videoEnded(_ name: String, _ end: SourceEnd)
    /// The microphone delivered its last chunk.
    func audioEnded(_ name: String, _ end: SourceEnd)
}

extension CaptureBranch {
    public func take(_ chunk: AudioChunk) {}
    public func videoEnded(_ name: String, _ end: SourceEnd) {}
    public func audioEnded(_ name: String, _ end: SourceEnd) {}
}

/// The one place capture sources deliver to: it hands each frame and chunk to every
/// branch, by reference. The frame's buffer goes back to its pool (or its driver) when
/// the last branch lets go of it.
public final class CaptureHub: CaptureSink, Sendable {
    private let branches = Locked<[any CaptureBranch]>([])

    public init() {}

    /// Adds a branch; it gets everything captured from now on.
    public func add(_ branch: any CaptureBranch) {
        branches.withLock { $0.append(branch) }
    }

    private var current: [any CaptureBranch] { branches.withLock { $0 } }

    public func deliver(_ frame: VideoFrame) {
        for branch in current { branch.take(frame) }
    }

    public func deliver(_ chunk: AudioChunk) {
        for branch in current { branch.take(chunk) }
    }

    public func videoSourceEnded(_ name: String, _ end: SourceEnd) {
        for branch in current { branch.videoEnded(name, end) }
    }

    public func audioSourceEnded(_ name: String, _ end: SourceEnd) {
        for branch in current { branch.audioEnded(name, end) }
    }
}
