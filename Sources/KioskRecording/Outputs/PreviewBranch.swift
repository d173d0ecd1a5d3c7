import KioskCore

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
