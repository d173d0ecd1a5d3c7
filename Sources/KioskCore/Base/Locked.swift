import Foundation

/// State shared between threads, reachable only while its lock is held: the one way
/// KioskCam shares mutable state, and the one way a thread blocks until that state is
/// ready for it (`withLock(waitingUntil:deadline:_:)`, woken by `wakeWaiters()`).
///
/// A class that crosses threads keeps its mutable state in one `Locked` and is then
/// plainly `Sendable`:
///
///     final class Counters: Sendable {
///         private let state = Locked(State())
///         func countDrop() { state.withLock { $0.dropped += 1 } }
///     }
///
/// It has the API and the `Sendable` rules of Swift's `Synchronization.Mutex`: it is
/// `Sendable` whatever it holds, because what goes in and what comes out is `sending`
/// (the compiler checks that no non-`Sendable` value stays reachable from outside), so
/// it may hold an FFmpeg encoder that one thread at a time uses under the lock.
///
/// Why not `Mutex` itself: ThreadSanitizer (`scripts/sanitize thread`) cannot see the
/// order a contended `Mutex` imposes on Linux. Its fast path is an atomic
/// compare-exchange inlined into our (instrumented) code, but a contended lock or unlock
/// goes through a PI futex inside the uninstrumented standard library, so TSan misses
/// that happens-before edge and reports races that are not there — for state inside the
/// `Mutex` as much as for buffers and frames handed from thread to thread under it
/// (4 threads incrementing a counter inside a `Mutex`: a report in 4 runs of 5; the same
/// over this lock: none). TSan intercepts `pthread_mutex_*` and `pthread_cond_*`, which
/// `Lock` (`NSCondition`) is made of, and so sees every edge. This is therefore the one
/// place that says `@unchecked Sendable` for shared state (docs/ARCHITECTURE.md, "Threads").
// @unchecked: `state` is only reached with `lock` held; in and out it is `sending`, as in `Mutex`.
public final class Locked<State: ~Copyable>: @unchecked Sendable {
    @usableFromInline let lock = Lock()
    /// Touched only with `lock` held.
    @usableFromInline var state: State

    public init(_ initial: consuming sending State) { state = initial }

    /// Runs `body` with the lock held and the state to read or change.
    /// - Throws: Whatever `body` throws (the lock is released first).
    @inlinable
    public func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending State) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        lock.lockRaw()
        defer { lock.unlockRaw() }
        return try body(&state)
    }

    /// Waits until `isReady` holds for the state or `deadline` passes, then runs `body`
    /// with the lock held (after a time-out the state may still not be ready: `body`
    /// looks). While waiting the lock is released; every `wakeWaiters()` makes the
    /// waiter look at the state again.
    /// - Parameters:
    ///   - isReady: Whether the state is what the caller waits for; asked with the lock held.
    ///   - deadline: When to stop waiting; nil waits as long as it takes.
    /// - Throws: Whatever `body` throws (the lock is released first).
    public func withLock<Result: ~Copyable, E: Error>(
        waitingUntil isReady: (borrowing State) -> Bool, deadline: Date? = nil,
        _ body: (inout sending State) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        lock.lockRaw()
        defer { lock.unlockRaw() }
        while !isReady(state) {
            if let deadline {
                if !lock.wait(until: deadline) { break }
            } else {
                lock.wait()
            }
        }
        return try body(&state)
    }

    /// Wakes every thread waiting in `withLock(waitingUntil:deadline:_:)`, to look at the
    /// state again. Call it after a change one of them may wait for, inside `withLock`
    /// or after it.
    public func wakeWaiters() { lock.broadcast() }
}
