import Foundation

/// A thread that runs its body every `interval` seconds, or at once when woken, until
/// stopped: the one way the daemon's background loops (upkeep, the storage guard) sleep,
/// wake and end.
public final class RepeatingThread: Sendable {
    private let name: String
    private let interval: Double
    private let body: @Sendable (_ woken: Bool) -> Void
    private struct State {
        var woken = false
        var stopRequested = false
        var running = false
    }
    /// The thread sleeps in it between rounds.
    private let state = Locked(State())
    private let thread = ThreadGroup()

    /// - Parameters:
    ///   - body: One round; `woken` says whether `wake()` asked for it.
    public init(name: String, interval: Double, body: @escaping @Sendable (_ woken: Bool) -> Void) {
        self.name = name
        self.interval = interval
        self.body = body
    }

    /// Starts the thread; the first round runs at once. Idempotent.
    public func start() {
        let starting = state.withLock { state -> Bool in
            guard !state.running else { return false }
            state.running = true
            state.stopRequested = false
            return true
        }
        guard starting else { return }
        thread.start(name: name) { [self] in
            var wokenNow = false
            while true {
                body(wokenNow)
                let stop = state.withLock(waitingUntil: { $0.woken || $0.stopRequested },
                                          deadline: Date(timeIntervalSinceNow: interval)) { state -> Bool in
                    wokenNow = state.woken
                    state.woken = false
                    return state.stopRequested
                }
                if stop { break }
            }
        }
    }

    /// Runs a round soon, without waiting for the interval; returns at once.
    public func wake() {
        state.withLock { $0.woken = true }
        state.wakeWaiters()
    }

    /// Ends the thread after its current round and waits for it. Blocking: from async
    /// code, call it through `onBackgroundThread`.
    public func stop() {
        let wasRunning = state.withLock { state -> Bool in
            guard state.running else { return false }
            state.stopRequested = true
            return true
        }
        guard wasRunning else { return }
        state.wakeWaiters()
        thread.wait()
        state.withLock { $0.running = false }
    }
}
