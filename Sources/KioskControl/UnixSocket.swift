import Glibc
import KioskCore
import SystemPackage

/// The few socket calls the server and client need, each retried on EINTR and
/// returning `Errno` on failure. One owner per descriptor: whoever created it closes it.
enum UnixSocket {
    /// A `sockaddr_un` for `path`, or nil when the path does not fit in `sun_path`.
    static func address(_ path: String) -> sockaddr_un? {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard !bytes.isEmpty, bytes.count < capacity else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }

    /// The user id of the process at the other end of a connected socket (`SO_PEERCRED`:
    /// the kernel's word, taken at connect), or nil when the kernel does not say.
    static func peerUserID(_ fd: Int32) -> uid_t? {
        // struct ucred { pid_t pid; uid_t uid; gid_t gid; }: Glibc's Swift module hides it.
        var credentials: (pid: Int32, uid: UInt32, gid: UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout.size(ofValue: credentials))
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0,
              Int(length) == MemoryLayout.size(ofValue: credentials) else { return nil }
        return credentials.uid
    }

    /// A new stream socket, close-on-exec.
    static func makeSocket() throws(Errno) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Errno(rawValue: errno) }
        return fd
    }

    static func connect(_ fd: Int32, to path: String) throws(Errno) {
        guard var address = address(path) else { throw Errno.fileNameTooLong }
        let result = retryingInterrupts {
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
        }
        // A connect interrupted by a signal carries on in the background; EINPROGRESS/EALREADY
        // cannot happen on a blocking Unix socket, so EINTR retries are safe enough here.
        guard result == 0 else { throw Errno(rawValue: errno) }
    }

    static func bind(_ fd: Int32, to path: String) throws(Errno) {
        guard var address = address(path) else { throw Errno.fileNameTooLong }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else { throw Errno(rawValue: errno) }
    }

    /// Sets a send or receive time-out (SO_SNDTIMEO / SO_RCVTIMEO); 0 means none.
    static func setTimeout(_ fd: Int32, option: Int32, seconds: Double) {
        let whole = Int(max(0, seconds))
        var value = timeval(tv_sec: whole, tv_usec: Int(((max(0, seconds) - Double(whole)) * 1_000_000).rounded()))
        _ = setsockopt(fd, SOL_SOCKET, option, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    /// The process id of the peer (SO_PEERCRED), for "another daemon (pid N) is listening".
    static func peerProcess(_ fd: Int32) -> Int32? {
        // struct ucred (pid, uid, gid) is hidden behind _GNU_SOURCE in Glibc's module.
        struct PeerCredentials { var pid: Int32 = 0; var uid: UInt32 = 0; var gid: UInt32 = 0 }
        var credentials = PeerCredentials()
        var length = socklen_t(MemoryLayout<PeerCredentials>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 else { return nil }
        return credentials.pid
    }

    /// Writes all of `bytes`; MSG_NOSIGNAL so a vanished peer is EPIPE, not SIGPIPE.
    static func sendAll(_ fd: Int32, _ bytes: [UInt8]) throws(Errno) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { raw in
                retryingInterrupts { send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL)) }
            }
            guard sent > 0 else { throw sent == 0 ? Errno.brokenPipe : Errno(rawValue: errno) }
            offset += sent
        }
    }

    /// Reads what is there (up to `capacity` bytes); 0 bytes means the peer closed.
    static func receive(_ fd: Int32, into buffer: inout [UInt8], capacity: Int = 16 * 1024) throws(Errno) -> Int {
        var chunk = [UInt8](repeating: 0, count: capacity)
        let count = chunk.withUnsafeMutableBytes { raw in retryingInterrupts { recv(fd, raw.baseAddress!, raw.count, 0) } }
        guard count >= 0 else { throw Errno(rawValue: errno) }
        buffer.append(contentsOf: chunk[0..<count])
        return count
    }

    /// Waits until `fds` are ready or `timeout` seconds pass (nil: forever).
    /// Returns the revents per descriptor, all zero on time-out.
    static func poll(_ fds: [(fd: Int32, events: Int16)], timeout: Double?) -> [Int16] {
        var entries = fds.map { pollfd(fd: $0.fd, events: $0.events, revents: 0) }
        let milliseconds = timeout.map { Int32(min(max(0, $0) * 1000, Double(Int32.max)).rounded(.up)) } ?? -1
        let result = entries.withUnsafeMutableBufferPointer { buffer in
            retryingInterrupts { Glibc.poll(buffer.baseAddress, nfds_t(buffer.count), milliseconds) }
        }
        guard result > 0 else { return Array(repeating: 0, count: fds.count) }
        return entries.map(\.revents)
    }

    static func retryingInterrupts<T: BinaryInteger>(_ body: () -> T) -> T {
        while true {
            let result = body()
            if result == -1 && errno == EINTR { continue }
            return result
        }
    }

    /// Accepts a client, close-on-exec (accept4 is hidden behind _GNU_SOURCE in Glibc's module).
    static func accept(_ listener: Int32) throws(Errno) -> Int32 {
        let fd = retryingInterrupts { Glibc.accept(listener, nil, nil) }
        guard fd >= 0 else { throw Errno(rawValue: errno) }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        return fd
    }
}
