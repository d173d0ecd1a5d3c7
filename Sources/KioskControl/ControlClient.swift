import Foundation
import Glibc
import KioskCore
import SystemPackage

/// Why the CLI could not talk to the daemon, phrased for the person at the terminal.
public enum ControlClientError: Error, Equatable, CustomStringConvertible {
    /// No socket file: the daemon is not running.
    case notRunning(socketPath: String)
    /// A socket file nobody listens on: the daemon stopped without removing it.
    case staleSocket(socketPath: String)
    /// The socket's mode or group keeps this user out.
    case permissionDenied(socketPath: String, group: String)
    /// The daemon accepted the connection but did not answer in time.
    case timedOut(socketPath: String, seconds: Double)
    /// The daemon closed the connection before answering (it stopped, or refused us).
    case disconnected(socketPath: String)
    /// The daemon sent something this client does not understand.
    case protocolError(String)
    /// Any other failure of a socket call.
    case system(operation: String, socketPath: String, errno: Int32)

    public var description: String {
        switch self {
        case .notRunning(let path):
            "kioskcam is not running (no socket at \(path)): start it with `systemctl start kioskcam` or `kioskcam run`"
        case .staleSocket(let path):
            "kioskcam is not running (nothing listens on \(path); it was left by a daemon that stopped): start it with `systemctl start kioskcam` or `kioskcam run`"
        case .permissionDenied(let path, let group):
            "permission denied on the control socket \(path): join group \(group) (`sudo adduser $USER \(group)`, then log in again) or use sudo"
        case .timedOut(let path, let seconds):
            "the daemon did not answer within \(Int(seconds)) s on \(path): it may be stuck; see `journalctl -u kioskcam`"
        case .disconnected(let path):
            "the daemon closed the connection on \(path) without answering: see `journalctl -u kioskcam`"
        case .protocolError(let message):
            message
        case .system(let operation, let path, let code):
            "\(operation) on the control socket \(path) failed: \(Errno(rawValue: code))"
        }
    }

    /// A distinct exit status per cause, for scripts (sysexits.h: 69 unavailable, 77 no permission, 75 temporary failure).
    public var exitCode: Int32 {
        switch self {
        case .notRunning, .staleSocket: 69
        case .permissionDenied: 77
        case .timedOut: 75
        default: 1
        }
    }
}

/// The CLI's end of the control socket: one connection per request, or a long-lived
/// subscription for the event stream.
public struct ControlClient: Sendable {
    public let socketPath: String
    /// The group named in the permission-denied message (control.socket_group).
    public var group: String
    /// How long `send` waits for the answer.
    public var timeoutSeconds: Double
    /// Longest line accepted from the daemon (a `list` of a big library is long).
    static let maximumLineBytes = 64 * 1024 * 1024

    public init(socketPath: String, group: String? = "kioskcam", timeoutSeconds: Double = 30) {
        self.socketPath = socketPath
        self.group = group ?? "kioskcam"
        self.timeoutSeconds = timeoutSeconds
    }

    /// The client for `[control]`.
    public init(_ control: Configuration.Control) {
        self.init(socketPath: control.socketPath, group: control.socketGroup)
    }

    /// Sends one request and waits for its answer. An error answer from the daemon is a
    /// response with `error` set, not a throw.
    /// - Throws: `ControlClientError` when the daemon is not running, the socket is not
    ///   ours to use, or the daemon does not answer.
    public func send(_ request: ControlRequest) throws(ControlClientError) -> ControlResponse {
        let connection = try LineConnection(path: socketPath, group: group, receiveTimeout: timeoutSeconds)
        defer { connection.close() }
        let id: Int64 = 1
        try connection.write(ControlCall(id: id, request: request).line())
        while true {
            switch try connection.readLine() {
            case .response(let response) where response.id == id || response.id == nil:
                return response
            default:
                continue  // an event, or an answer to someone else: not ours
            }
        }
    }

    /// Subscribes to events (all kinds when `kinds` is nil).
    /// - Throws: `ControlClientError` as for `send`, or `.protocolError` when the daemon refuses.
    public func subscribe(_ kinds: Set<ControlEventKind>? = nil) throws(ControlClientError) -> ControlSubscription {
        let connection = try LineConnection(path: socketPath, group: group, receiveTimeout: timeoutSeconds)
        do throws(ControlClientError) {
            try connection.write(ControlCall(id: 1, request: .subscribe(events: kinds)).line())
            while true {
                guard case .response(let response) = try connection.readLine() else { continue }
                if let error = response.error { throw ControlClientError.protocolError("the daemon refused to subscribe: \(error)") }
                break
            }
        } catch {
            connection.close()
            throw error
        }
        connection.setReceiveTimeout(0)  // events may be minutes apart
        return ControlSubscription(connection)
    }

    /// The event stream as an async sequence; ends when the daemon closes the connection,
    /// and closes the connection when the consumer stops iterating.
    public func events(_ kinds: Set<ControlEventKind>? = nil) -> AsyncThrowingStream<ControlEvent, any Error> {
        AsyncThrowingStream { continuation in
            let subscription: ControlSubscription
            do {
                subscription = try subscribe(kinds)
            } catch {
                continuation.finish(throwing: error)
                return
            }
            continuation.onTermination = { _ in subscription.cancel() }
            Thread.detachNewThread {
                do {
                    while let event = try subscription.next() { continuation.yield(event) }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
                subscription.close()
            }
        }
    }
}

/// An open event subscription. `next()` blocks until the next event; `cancel()` (from
/// any thread) ends it; the owner calls `close()`.
public final class ControlSubscription: Sendable {
    private let connection: LineConnection

    init(_ connection: LineConnection) { self.connection = connection }

    /// The next event, or nil when the daemon closed the connection (or after `cancel()`).
    /// - Throws: `ControlClientError.protocolError` for a line that is not an event.
    public func next() throws(ControlClientError) -> ControlEvent? {
        while true {
            do {
                if case .event(let event) = try connection.readLine() { return event }
            } catch {
                if case .disconnected = error { return nil }
                throw error
            }
        }
    }

    /// Wakes a blocked `next()` and makes it return nil.
    public func cancel() { connection.shutdown() }

    public func close() { connection.close() }

    deinit { connection.close() }
}

/// A connected socket that reads and writes whole lines.
final class LineConnection: Sendable {
    let path: String
    private struct State {
        var fd: Int32
        /// Received bytes not yet read as lines.
        var buffer: [UInt8] = []
        var receiveTimeout: Double
    }
    private let state: Locked<State>

    init(path: String, group: String, receiveTimeout: Double) throws(ControlClientError) {
        self.path = path
        let fd: Int32
        do {
            fd = try UnixSocket.makeSocket()
        } catch {
            throw .system(operation: "socket", socketPath: path, errno: error.rawValue)
        }
        do {
            try UnixSocket.connect(fd, to: path)
        } catch {
            Glibc.close(fd)
            switch error {
            case .noSuchFileOrDirectory, .notDirectory: throw .notRunning(socketPath: path)
            case .connectionRefused: throw .staleSocket(socketPath: path)
            case .permissionDenied, .notPermitted: throw .permissionDenied(socketPath: path, group: group)
            default: throw .system(operation: "connect", socketPath: path, errno: error.rawValue)
            }
        }
        UnixSocket.setTimeout(fd, option: SO_RCVTIMEO, seconds: receiveTimeout)
        UnixSocket.setTimeout(fd, option: SO_SNDTIMEO, seconds: receiveTimeout)
        state = Locked(State(fd: fd, receiveTimeout: receiveTimeout))
    }

    /// The socket; -1 once closed.
    private var fd: Int32 { state.withLock { $0.fd } }

    func setReceiveTimeout(_ seconds: Double) {
        let fd = state.withLock { state in
            state.receiveTimeout = seconds
            return state.fd
        }
        UnixSocket.setTimeout(fd, option: SO_RCVTIMEO, seconds: seconds)
    }

    func write(_ line: String) throws(ControlClientError) {
        let fd = fd
        do {
            try UnixSocket.sendAll(fd, Array((line + "\n").utf8))
        } catch {
            throw error == .brokenPipe || error == .connectionReset ? .disconnected(socketPath: path)
                : .system(operation: "send", socketPath: path, errno: error.rawValue)
        }
    }

    /// The next line from the daemon, parsed.
    func readLine() throws(ControlClientError) -> ControlServerLine {
        while true {
            let (line, buffered, fd, receiveTimeout) = state.withLock { state -> ([UInt8]?, Int, Int32, Double) in
                guard let newline = state.buffer.firstIndex(of: UInt8(ascii: "\n")) else {
                    return (nil, state.buffer.count, state.fd, state.receiveTimeout)
                }
                defer { state.buffer.removeFirst(newline + 1) }
                return (Array(state.buffer[..<newline]), 0, state.fd, state.receiveTimeout)
            }
            if let line {
                do {
                    return try ControlServerLine.parse(line[...])
                } catch {
                    throw .protocolError("the daemon's answer could not be read: \(error.message)")
                }
            }
            guard buffered <= ControlClient.maximumLineBytes else {
                throw .protocolError("the daemon sent a line longer than \(ControlClient.maximumLineBytes) bytes")
            }
            // Received outside the lock: `shutdown()` from another thread must get in to
            // wake a blocked receive.
            var received: [UInt8] = []
            let count: Int
            do {
                count = try UnixSocket.receive(fd, into: &received, capacity: 64 * 1024)
                state.withLock { $0.buffer.append(contentsOf: received) }
            } catch {
                if error == .resourceTemporarilyUnavailable || error == .wouldBlock {
                    throw .timedOut(socketPath: path, seconds: receiveTimeout)
                }
                if error == .connectionReset || error == .badFileDescriptor { throw .disconnected(socketPath: path) }
                throw .system(operation: "recv", socketPath: path, errno: error.rawValue)
            }
            if count == 0 { throw .disconnected(socketPath: path) }
        }
    }

    func shutdown() {
        state.withLock { if $0.fd >= 0 { _ = Glibc.shutdown($0.fd, Int32(SHUT_RDWR)) } }
    }

    func close() {
        state.withLock { state in
            if state.fd >= 0 { Glibc.close(state.fd) }
            state.fd = -1
        }
    }
}
