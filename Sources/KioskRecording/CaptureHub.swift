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

/// The newest frame for the screen, at most `framesPerSecond` a second, kept by
/// reference (no copy). The UI takes it when it is ready to draw; frames it never took
/// are counted as skipped.
public final class PreviewBranch: CaptureBranch, Sendable {
    private let minimumInterval: Int64
    private struct State {
        var latest: VideoFrame?
        var lastKept: MonotonicInstant?
        var skipped = 0
    }
    private let state = Locked(State())

    public init(framesPerSecond: Int) {
        minimumInterval = 1_000_000_000 / Int64(max(1, framesPerSecond))
    }

    public func take(_ frame: VideoFrame) {
        let minimumInterval = minimumInterval
        state.withLock { state in
            if let lastKept = state.lastKept, frame.timestamp.nanoseconds(since: lastKept) < minimumInterval { return }
            state.lastKept = frame.timestamp
            if state.latest != nil { state.skipped += 1 }
            state.latest = frame   // the previous one is let go: its buffer returns if nobody else holds it
        }
    }

    /// The camera stopped: the last frame is let go (it may hold a driver's buffer).
    public func videoEnded(_ name: String, _ end: SourceEnd) {
        state.withLock { $0.latest = nil }
    }

    /// The newest frame if one arrived since the last call (the branch lets go of it).
    public func takeNewFrame() -> VideoFrame? {
        state.withLock { state in
            defer { state.latest = nil }
            return state.latest
        }
    }

    /// Preview frames replaced before the screen took them.
    public var skippedFrames: Int { state.withLock { $0.skipped } }
}
