import Foundation


/// Runs blocking work — a thread join, a semaphore wait, a disk scan, opening a device —
/// on a thread of its own and awaits it, so the Swift concurrency pool (as many threads
/// as cores: two on a Pi-class board) never blocks on it.
/// - Parameters:
///   - name: The thread's name, for `top -H` and stack traces.
///   - body: The blocking work.
/// - Throws: What `body` throws.
public func onBackgroundThread<T: Sendable>(_ name: String, _ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.name = name
        thread.start()
    }
}

/// `onBackgroundThread` for work that cannot fail.
public func onBackgroundThread<T: Sendable>(_ name: String, _ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: body()) }
        thread.name = name
        thread.start()
    }
}
