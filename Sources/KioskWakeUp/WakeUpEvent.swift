import CLinuxEventFD
import Glibc
import SystemPackage

/// Wakes a thread that sleeps in `poll`: the one way to do it (the camera's capture
/// thread, the microphone's, the control socket's threads; the UI loop's pipe is next).
///
/// An eventfd: `signal()` (any thread, never blocks) makes `fd` readable until the
/// sleeping thread calls `drain()`. Signals coalesce — ten before a drain wake the
/// sleeper once — so the sleeper looks at its own state (an inbox, a stop flag, under
/// `Locked`) after every wake-up rather than counting them. A class, so that whoever may
/// still signal keeps the descriptor open: it is closed when the last holder lets go,
/// never while a late `signal()` could write into a reused descriptor number.
///
///     var fds = [pollfd(fd: device, events: Int16(POLLIN), revents: 0), wakeUp.pollDescriptor]
///     poll(&fds, 2, timeout)
///     if fds[1].revents != 0 { wakeUp.drain() }   // then look at the state
public final class WakeUpEvent: Sendable {
    /// The descriptor to poll for `POLLIN` (non-blocking, close-on-exec).
    public let fd: Int32

    /// - Throws: `Errno` from `eventfd`: `.tooManyOpenFiles`, `.tooManyOpenFilesInSystem`,
    ///   `.noMemory`. The corresponding C function is `eventfd`.
    public init() throws(Errno) {
        let fd = kc_eventfd_open()
        guard fd >= 0 else { throw Errno(rawValue: errno) }
        self.fd = fd
    }

    deinit { close(fd) }

    /// Makes `fd` readable (again), from any thread. Never blocks, and cannot fail in a
    /// way that loses the wake-up: a counter at its limit is readable already.
    public func signal() {
        _ = eventfd_write(fd, 1)
    }

    /// Makes `fd` unreadable until the next `signal()`; call it when `poll` reported it.
    /// - Returns: Whether a signal was pending.
    @discardableResult
    public func drain() -> Bool {
        var count: eventfd_t = 0
        return eventfd_read(fd, &count) == 0
    }

    /// `fd` as an entry for `poll`'s array, waiting for `POLLIN`.
    public var pollDescriptor: pollfd { pollfd(fd: fd, events: Int16(POLLIN), revents: 0) }
}
