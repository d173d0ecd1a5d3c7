import Foundation
import KioskCore

/// A named thread that runs a capture loop until asked to stop, and whose `stop()`
/// waits for the loop to finish — so a source is never still writing into buffers
/// after its owner has moved on.
final class SourceThread: Sendable {
    private let stopRequested = Locked(false)
    private let thread = ThreadGroup()

    /// Starts `loop` on a new thread. The loop polls `shouldStop` between items.
    func start(name: String, _ loop: @escaping @Sendable (SourceThread) -> Void) {
        stopRequested.withLock { $0 = false }
        thread.start(name: name) { [self] in loop(self) }
    }

    var shouldStop: Bool { stopRequested.withLock { $0 } }

    /// Asks the loop to stop and waits for it (no-op when not running).
    func stop() {
        stopRequested.withLock { $0 = true }
        thread.wait()
    }
}

/// Real-time pacing for the built-in sources: item `n` is due at `start + n × period`.
struct Pacer {
    let start: MonotonicInstant
    let periodNanoseconds: Int64

    func deadline(_ index: Int) -> MonotonicInstant {
        start.advanced(byNanoseconds: Int64(index) * periodNanoseconds)
    }
}
