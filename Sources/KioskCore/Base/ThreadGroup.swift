import Foundation

/// Threads one owner starts and waits for: the one join. `start` runs a body on a new
/// named thread; `wait` blocks until every body started so far has returned.
///
/// Built on `Locked` (a pthread mutex and condition), so ThreadSanitizer sees that what
/// a thread did happens before the `wait` that saw it end.
public final class ThreadGroup: Sendable {
    private struct State {
        var running = 0
        var threads: [pthread_t] = []
    }
    private let state = Locked(State())

    public init() {}

    /// Starts `body` on a new thread called `name`.
    public func start(name: String, _ body: @escaping @Sendable () -> Void) {
        // Counted before the thread exists, so a `wait` right after `start` waits for it.
        state.withLock { $0.running += 1 }
        let thread = Thread { [state] in
            // Named from inside: a name given before `start()` never reaches the kernel
            // with swift-corelibs-foundation, and `top -H`, `ps -L` and gdb show this one.
            Thread.current.name = name
            let me = pthread_self()
            state.withLock { $0.threads.append(me) }
            body()
            state.withLock {
                $0.running -= 1
                $0.threads.removeAll { pthread_equal($0, me) != 0 }
            }
            state.wakeWaiters()
        }
        thread.start()
    }

    /// Whether the calling thread is one of this group's (a thread must not wait for itself).
    public var includesCurrentThread: Bool {
        let me = pthread_self()
        return state.withLock { $0.threads.contains { pthread_equal($0, me) != 0 } }
    }

    /// Whether a thread of this group is still running.
    public var isRunning: Bool { state.withLock { $0.running > 0 } }

    /// Waits until every thread started so far has finished; returns at once when none
    /// runs. Blocking: from async code, call it through `onBackgroundThread`.
    /// - Parameters:
    ///   - timeout: Seconds to wait at most; nil waits as long as it takes.
    /// - Returns: false when `timeout` passed with a thread still running.
    @discardableResult
    public func wait(timeout: Double? = nil) -> Bool {
        let deadline = timeout.map { Date(timeIntervalSinceNow: $0) }
        return state.withLock(waitingUntil: { $0.running == 0 }, deadline: deadline) { $0.running == 0 }
    }
}
