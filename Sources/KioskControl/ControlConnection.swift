import Glibc
import KioskCore
import KioskWakeUp
import SystemPackage

/// One client's socket, wake-up event and event queue. Its thread owns the descriptor.
final class ControlConnection: Sendable {
    let fd: Int32
    /// Whether the client runs as root or as the daemon's own user (`SO_PEERCRED`), who
    /// may send the commands that `ControlRequest.needsRoot` names.
    let isPrivileged: Bool
    /// Wakes the client's thread from `poll`: an event to send, or `requestClose()`.
    let wake: WakeUpEvent
    private let queueLimit: Int
    private struct State {
        var subscription: Set<ControlEventKind>?? = .none
        var queue: [[UInt8]] = []
        var dropped = 0
        var closing = false
        var closed = false
    }
    private let state = Locked(State())

    init(fd: Int32, queueLimit: Int) throws(Errno) {
        self.fd = fd
        isPrivileged = UnixSocket.peerUserID(fd).map { $0 == 0 || $0 == geteuid() } ?? false
        self.queueLimit = max(1, queueLimit)
        wake = try WakeUpEvent()
    }

    var isSubscribed: Bool { state.withLock { $0.subscription != nil } }
    var closeRequested: Bool { state.withLock { $0.closing } }

    /// Subscribes to `kinds` (nil: all).
    func subscribe(_ kinds: Set<ControlEventKind>?) { state.withLock { $0.subscription = .some(kinds) } }

    func wants(_ kind: ControlEventKind) -> Bool {
        state.withLock {
            guard case .some(let kinds) = $0.subscription else { return false }
            return kinds?.contains(kind) ?? true
        }
    }

    /// Queues an event line; returns true when an older one had to be dropped.
    func enqueue(_ line: [UInt8]) -> Bool {
        let queueLimit = queueLimit
        let droppedOne = state.withLock { state -> Bool in
            var droppedOne = false
            if state.queue.count >= queueLimit {
                state.queue.removeFirst()
                state.dropped += 1
                droppedOne = true
            }
            state.queue.append(line)
            return droppedOne
        }
        wake.signal()
        return droppedOne
    }

    func takeEvents() -> (lines: [[UInt8]], dropped: Int) {
        state.withLock { state in
            defer { state.queue.removeAll(keepingCapacity: true); state.dropped = 0 }
            return (state.queue, state.dropped)
        }
    }

    /// Asks the client's thread to finish; it closes the descriptor itself.
    func requestClose() {
        state.withLock { $0.closing = true }
        shutdown(fd, Int32(SHUT_RDWR))
        wake.signal()
    }

    func closeDescriptor() {
        let first = state.withLock { state -> Bool in
            defer { state.closed = true }
            return !state.closed
        }
        if first { close(fd) }
    }
}
