import Foundation

/// A mutex with a scoped `withLock`, plus the condition variable the pipeline's
/// hand-off queues wait on. Thin over `NSCondition` so the core needs no C import.
public final class Lock: @unchecked Sendable {
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
