import Foundation

/// A pthread mutex with a scoped `withLock`, plus its condition variable: what `Locked`
/// is made of. Thin over `NSCondition` (a `pthread_mutex_t` and a `pthread_cond_t`) so
/// the core needs no C import, and so that ThreadSanitizer, which intercepts both, sees
/// the order it imposes — which it does not for `Synchronization.Mutex` (see `Locked`).
///
/// Keep state in a `Locked` rather than next to a bare `Lock`: then the compiler checks
/// that it is only reached under the lock.
public final class Lock: Sendable {
    private let condition = NSCondition()

    public init() {}

    @inlinable
    public func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        lockRaw()
        defer { unlockRaw() }
        return try body()
    }

    @usableFromInline func lockRaw() { condition.lock() }
    @usableFromInline func unlockRaw() { condition.unlock() }

    /// Waits (lock held) until signalled or until `deadline`; returns false on time-out.
    public func wait(until deadline: Date) -> Bool { condition.wait(until: deadline) }

    /// Waits (lock held) until signalled.
    public func wait() { condition.wait() }

    public func broadcast() { condition.broadcast() }
}
