import Foundation

/// A thread that runs its body every `interval` seconds, or at once when woken, until
/// stopped: the one way the daemon's background loops (upkeep, the storage guard) sleep,
/// wake and end.
public final class RepeatingThread: @unchecked Sendable {
    private let name: String
    private let interval: Double
    private let body: @Sendable (_ woken: Bool) -> Void
    private let lock = Lock()
    // Guarded by `lock`.
    private var woken = false
    private var stopRequested = false
    private var running = false
    private let finished = DispatchSemaphore(value: 0)

    /// - Parameters:
    ///   - body: One round; `woken` says whether `wake()` asked for it.
    public init(name: String, interval: Double, body: @escaping @Sendable (_ woken: Bool) -> Void) {
        self.name = name
        self.interval = interval
        self.body = body
    }

    /// Starts the thread; the first round runs at once. Idempotent.
    public func start() {
        let starting = lock.withLock { () -> Bool in
            guard !running else { return false }
            running = true
            stopRequested = false
            return true
        }
        guard starting else { return }
        let thread = Thread { [self] in
            var wokenNow = false
            while true {
                body(wokenNow)
                let stop = lock.withLock { () -> Bool in
                    if !woken && !stopRequested { _ = lock.wait(until: Date(timeIntervalSinceNow: interval)) }
                    wokenNow = woken
                    woken = false
                    return stopRequested
                }
                if stop { break }
            }
            finished.signal()
        }
        thread.name = name
        thread.start()
    }

    /// Runs a round soon, without waiting for the interval; returns at once.
    public func wake() {
        lock.withLock {
            woken = true
            lock.broadcast()
        }
    }

    /// Ends the thread after its current round and waits for it. Blocking: from async
    /// code, call it through `onBackgroundThread`.
    public func stop() {
        let wasRunning = lock.withLock { () -> Bool in
            guard running else { return false }
            stopRequested = true
            lock.broadcast()
            return true
        }
        guard wasRunning else { return }
        finished.wait()
        lock.withLock { running = false }
    }
}
