import KioskCore

/// Counters and the diagnostic hook, shared by the microphone (read by anyone) and its
/// capture loop (written on the capture thread).
final class CaptureStatus: @unchecked Sendable {
    private let lock = Lock()
    private var overrunCount = 0
    private var suspendCount = 0
    private var droppedCount = 0
    private var handler: (@Sendable (String) -> Void)?

    var overruns: Int { lock.withLock { overrunCount } }
    var suspends: Int { lock.withLock { suspendCount } }
    var droppedChunks: Int { lock.withLock { droppedCount } }

    var diagnosticHandler: (@Sendable (String) -> Void)? {
        get { lock.withLock { handler } }
        set { lock.withLock { handler = newValue } }
    }

    func countOverrun() { lock.withLock { overrunCount += 1 } }
    func countSuspend() { lock.withLock { suspendCount += 1 } }
    func countDropped() { lock.withLock { droppedCount += 1 } }

    /// Passes `message` to the handler, outside the lock so the handler may read counters.
    func report(_ message: String) { diagnosticHandler?(message) }
}
