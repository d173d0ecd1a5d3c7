import CEvdev
import Glibc
import SystemPackage

/// Watches a device directory (`/dev/input`) with inotify so the poll loop learns when
/// input devices appear, disappear or change permission (udev sets the group after the
/// node appears). The descriptor is pollable; `drain()` empties it.
public final class InputHotplugWatcher {
    public let directory: String
    /// Poll for POLLIN.
    public var fileDescriptor: CInt { descriptor }
    private var descriptor: CInt

    /// - Throws: `InputError` when inotify is unavailable or the directory cannot be watched
    ///   (then rescan on a timer instead).
    public init(directory: String = "/dev/input") throws(InputError) {
        self.directory = directory
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else {
            throw InputError(path: directory, operation: "inotify_init1", errno: Errno(rawValue: Glibc.errno))
        }
        let mask = UInt32(IN_CREATE | IN_DELETE | IN_ATTRIB | IN_MOVED_TO | IN_MOVED_FROM)
        guard inotify_add_watch(fd, directory, mask) >= 0 else {
            let errno = Errno(rawValue: Glibc.errno)
            Glibc.close(fd)
            throw InputError(path: directory, operation: "inotify_add_watch", errno: errno,
                             detail: "cannot watch for input devices coming and going")
        }
        descriptor = fd
    }

    deinit { close() }

    public func close() {
        guard descriptor >= 0 else { return }
        Glibc.close(descriptor)
        descriptor = -1
    }

    /// Reads every pending notification; returns the names of the `event*` nodes they
    /// concern (empty when only other files changed).
    public func drain() -> Set<String> {
        var names: Set<String> = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while descriptor >= 0 {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, Glibc.errno == EINTR { continue }
            guard count > 0 else { break }
            var offset = 0
            while offset + kc_inotify_event_size <= count {
                let length = buffer.withUnsafeBytes { bytes in
                    Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))   // inotify_event.len
                }
                let start = offset + kc_inotify_event_size
                let end = min(start + length, count)
                let name = String(decoding: buffer[start..<end].prefix { $0 != 0 }, as: UTF8.self)
                if name.hasPrefix("event") { names.insert(name) }
                offset = start + length
            }
        }
        return names
    }
}
