import Foundation
import KioskCore

/// A named thread that runs a capture loop until asked to stop, and whose `stop()`
/// waits for the loop to finish — so a source is never still writing into buffers
/// after its owner has moved on.
final class SourceThread: @unchecked Sendable {
    private let lock = Lock()
    private var stopRequested = false
    private var running = false
    private let finished = DispatchSemaphore(value: 0)

    /// Starts `loop` on a new thread. The loop polls `shouldStop` between items.
    func start(name: String, _ loop: @escaping @Sendable (SourceThread) -> Void) {
        lock.withLock {
            stopRequested = false
            running = true
        }
        let thread = Thread { [self] in
            loop(self)
            lock.withLock { running = false }
            finished.signal()
        }
        thread.name = name
        thread.start()
    }

    var shouldStop: Bool { lock.withLock { stopRequested } }

    /// Asks the loop to stop and waits for it (no-op when not running).
    func stop() {
        let wasRunning = lock.withLock {
            stopRequested = true
            return running
        }
        if wasRunning { finished.wait() }
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
