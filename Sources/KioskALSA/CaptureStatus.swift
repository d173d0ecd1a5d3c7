import KioskCore

/// Counters and the diagnostic hook, shared by the microphone (read by anyone) and its
/// capture loop (written on the capture thread).
final class CaptureStatus: Sendable {
    private struct State {
        var overruns = 0
        var suspends = 0
        var dropped = 0
        var handler: (@Sendable (String) -> Void)?
    }
    private let state = Locked(State())

    var overruns: Int { state.withLock { $0.overruns } }
    var suspends: Int { state.withLock { $0.suspends } }
    var droppedChunks: Int { state.withLock { $0.dropped } }

    var diagnosticHandler: (@Sendable (String) -> Void)? {
        get { state.withLock { $0.handler } }
        set { state.withLock { $0.handler = newValue } }
    }

    func countOverrun() { state.withLock { $0.overruns += 1 } }
    func countSuspend() { state.withLock { $0.suspends += 1 } }
    func countDropped() { state.withLock { $0.dropped += 1 } }

    /// Passes `message` to the handler, outside the lock so the handler may read counters.
    func report(_ message: String) { diagnosticHandler?(message) }
}
