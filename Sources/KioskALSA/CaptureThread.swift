import Foundation
import Glibc
import KioskCore
import KioskWakeUp
import SystemPackage

/// A named thread running one capture loop, with a `WakeUpEvent` the loop polls next to
/// the device, so `stop()` interrupts a `poll` at once and then waits for the loop to end.
final class CaptureThread: Sendable {
    private struct State {
        var stopRequested = false
        var running = false
    }
    private let state = Locked(State())
    private let thread = ThreadGroup()
    private let wakeUp: WakeUpEvent

    /// Creates the wake-up event.
    /// - Throws: `Errno` when the process is out of descriptors.
    init() throws(Errno) {
        wakeUp = try WakeUpEvent()
    }

    /// Readable once `stop()` was called: poll it with the device's descriptors.
    var wakeDescriptor: Int32 { wakeUp.fd }

    var shouldStop: Bool { state.withLock { $0.stopRequested } }

    /// Starts `loop` on a new thread; false if a loop is already running.
    func start(name: String, _ loop: @escaping @Sendable (CaptureThread) -> Void) -> Bool {
        let wasRunning = state.withLock { state -> Bool in
            if state.running { return true }
            state.stopRequested = false
            state.running = true
            return false
        }
        guard !wasRunning else { return false }
        thread.start(name: name) { [self] in
            loop(self)
            state.withLock { $0.running = false }
        }
        return true
    }

    /// Asks the loop to stop and waits for it (no-op when not running). Called from the
    /// loop itself (e.g. from a sink callback) it only asks, since waiting would deadlock.
    /// - Returns: true when no loop is running any more; false when called from the loop.
    @discardableResult
    func stop() -> Bool {
        let wasRunning = state.withLock { state -> Bool in
            state.stopRequested = true
            return state.running
        }
        guard wasRunning else { return true }
        wakeUp.signal()
        guard !thread.includesCurrentThread else { return false }
        thread.wait()
        // Clear the signal so a later start does not wake at once.
        wakeUp.drain()
        return true
    }
}
