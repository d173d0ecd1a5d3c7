import Foundation
import Glibc
import KioskCore

/// A named thread running one capture loop, with a wake-up pipe the loop polls next to
/// the device, so `stop()` interrupts a `poll` at once and then waits for the loop to end.
final class CaptureThread: @unchecked Sendable {
    private let lock = Lock()
    private var stopRequested = false
    private var running = false
    private var loopThread: pthread_t?
    private let finished = DispatchSemaphore(value: 0)
    private let wakeRead: Int32
    private let wakeWrite: Int32

    /// Creates the wake-up pipe; nil (with `errno` set) when the process is out of descriptors.
    init?() {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return nil }
        wakeRead = ends[0]
        wakeWrite = ends[1]
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, O_NONBLOCK)
        }
    }

    deinit {
        close(wakeRead)
        close(wakeWrite)
    }

    /// Readable once `stop()` was called: poll it with the device's descriptors.
    var wakeDescriptor: Int32 { wakeRead }

    var shouldStop: Bool { lock.withLock { stopRequested } }

    /// Starts `loop` on a new thread; false if a loop is already running.
    func start(name: String, _ loop: @escaping @Sendable (CaptureThread) -> Void) -> Bool {
        let wasRunning = lock.withLock {
            if running { return true }
            stopRequested = false
            running = true
            return false
        }
        guard !wasRunning else { return false }
        let thread = Thread { [self] in
            lock.withLock { loopThread = pthread_self() }
            loop(self)
            lock.withLock {
                running = false
                loopThread = nil
            }
            finished.signal()
        }
        thread.name = name
        thread.start()
        return true
    }

    /// Asks the loop to stop and waits for it (no-op when not running). Called from the
    /// loop itself (e.g. from a sink callback) it only asks, since waiting would deadlock.
    /// - Returns: true when no loop is running any more; false when called from the loop.
    @discardableResult
    func stop() -> Bool {
        let (wasRunning, onLoopThread) = lock.withLock {
            stopRequested = true
            return (running, loopThread.map { pthread_equal($0, pthread_self()) != 0 } ?? false)
        }
        guard wasRunning else { return true }
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
        guard !onLoopThread else { return false }
        finished.wait()
        // Empty the pipe so a later start does not wake at once.
        var sink = [UInt8](repeating: 0, count: 16)
        while read(wakeRead, &sink, sink.count) > 0 {}
        return true
    }
}
