import Foundation
import Glibc
import KioskCore
import KioskWakeUp
import Logging
import SystemPackage

/// Answers control requests from the daemon's own state.
///
/// Synchronous on purpose: it is called on the requesting client's own thread, so a slow
/// answer (a snapshot waiting for the next frame) holds up only that client; the daemon
/// answers from state it already has, under its own lock. `subscribe` never reaches it.
public protocol ControlHandler: Sendable {
    func handle(_ request: ControlRequest) -> ControlOutcome
}

/// Why the control socket could not be opened.
public struct ControlServerError: Error, CustomStringConvertible, Equatable {
    public var path: String
    public var message: String
    public var description: String { message }
}

/// The daemon's end of the control socket.
///
/// One thread accepts; each client gets its own thread (at most `maxClients`), which reads
/// request lines, calls the handler, writes the answer and, once subscribed, the events
/// `publish` queued for it. A thread per client keeps every connection's code a plain
/// blocking loop, and a slow handler or a stuck client never delays the others; the
/// client cap bounds the threads.
///
/// `publish` never blocks: each subscriber has a bounded queue; when it is full the
/// oldest event is dropped and counted, and the client gets a `dropped` event with the
/// count before the next one it receives.
///
/// One owner calls `stop()`, which closes every connection, waits for their threads and
/// removes the socket file.
public final class ControlServer: Sendable {
    public struct Options: Sendable {
        public var maxClients = 16
        /// Disconnect a client that sends nothing for this long (subscribers excepted).
        public var idleTimeoutSeconds: Double = 60
        /// Events queued per subscriber before the oldest are dropped.
        public var eventQueueLimit = 256
        /// A client that accepts no bytes for this long while we write is disconnected.
        public var writeTimeoutSeconds: Double = 10

        public init(maxClients: Int = 16, idleTimeoutSeconds: Double = 60, eventQueueLimit: Int = 256, writeTimeoutSeconds: Double = 10) {
            self.maxClients = maxClients
            self.idleTimeoutSeconds = idleTimeoutSeconds
            self.eventQueueLimit = eventQueueLimit
            self.writeTimeoutSeconds = writeTimeoutSeconds
        }

        /// The options `[control]` sets.
        public init(_ control: Configuration.Control) {
            self.init(maxClients: control.maxClients, idleTimeoutSeconds: control.idleTimeoutSeconds)
        }
    }

    public let path: String
    public let options: Options
    /// The socket's mode after binding: 0660 when the group was applied, else 0600.
    public let mode: mode_t
    private let handler: any ControlHandler
    private let logger: Logger
    private let listenFD: Int32
    /// Wakes the accept thread from `poll` for `stop()`.
    private let wake: WakeUpEvent
    private let socketInode: ino_t
    private struct State {
        var connections: [ObjectIdentifier: ControlConnection] = [:]
        var stopped = false
        var droppedTotal = 0
    }
    private let state = Locked(State())
    /// The accept thread and one per client; `stop()` waits for all of them.
    private let threads = ThreadGroup()

    /// Binds the socket, applies the group and mode, and starts accepting.
    /// - Parameters:
    ///   - path: The socket file; its folder is created (0755) if missing.
    ///   - group: Members may connect (mode 0660). nil: the owner's group. A group that
    ///     does not exist or cannot be applied leaves the socket root-only (0600), logged.
    ///   - handler: Answers requests.
    /// - Throws: `ControlServerError` when another daemon is listening on `path`, when
    ///   `path` exists and is not a socket, or when the socket cannot be created or bound.
    public init(path: String, group: String?, options: Options = Options(), handler: any ControlHandler, logger: Logger) throws(ControlServerError) {
        self.path = path
        self.options = options
        self.handler = handler
        self.logger = logger
        func failure(_ message: String) -> ControlServerError { ControlServerError(path: path, message: message) }

        guard UnixSocket.address(path) != nil else {
            throw failure("the control socket path \(path) is longer than a Unix socket allows (107 bytes): choose a shorter control.socket")
        }
        try Self.removeStaleSocket(path, logger: logger)
        let folder = (path as NSString).deletingLastPathComponent
        if !FileManager.default.fileExists(atPath: folder) {
            do {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
            } catch {
                throw failure("cannot create the folder \(folder) for the control socket: \(error.localizedDescription); create it or choose another control.socket")
            }
        }
        let fd: Int32
        do {
            fd = try UnixSocket.makeSocket()
        } catch {
            throw failure("cannot create a Unix socket: \(error)")
        }
        do throws(Errno) {
            try UnixSocket.bind(fd, to: path)
            guard listen(fd, 32) == 0 else { throw Errno(rawValue: errno) }
        } catch {
            close(fd)
            let fix = error == .permissionDenied || error == .readOnlyFileSystem
                ? "run as root (the daemon's systemd unit does) or choose a writable control.socket" : "check the path in control.socket"
            throw failure("cannot listen on the control socket \(path): \(error): \(fix)")
        }
        var status = stat()
        lstat(path, &status)
        socketInode = status.st_ino
        mode = Self.applyGroup(group, to: path, logger: logger)
        listenFD = fd
        do {
            wake = try WakeUpEvent()
        } catch {
            close(fd)
            unlink(path)
            throw failure("cannot create an eventfd for the control socket: \(error)")
        }
        threads.start(name: "control-accept") { [self] in acceptLoop() }
        logger.info("control socket listening", metadata: ["path": "\(path)", "mode": "\(String(mode, radix: 8))"])
    }

    /// Sends an event to every client subscribed to its kind. Never blocks.
    public func publish(_ event: ControlEvent) {
        let line = Array((event.line() + "\n").utf8)
        let targets = state.withLock { $0.stopped ? [] : Array($0.connections.values) }
        var dropped = 0
        for connection in targets where connection.wants(event.kind) {
            if connection.enqueue(line) { dropped += 1 }
        }
        if dropped > 0 { state.withLock { $0.droppedTotal += dropped } }
    }

    /// Clients connected now.
    public var clientCount: Int { state.withLock { $0.connections.count } }

    /// Clients subscribed to events now.
    public var subscriberCount: Int { state.withLock { Array($0.connections.values) }.filter(\.isSubscribed).count }

    /// Events dropped for slow subscribers since the server started.
    public var eventsDroppedTotal: Int { state.withLock { $0.droppedTotal } }

    /// Closes every connection, waits for their threads and removes the socket file.
    /// Safe to call more than once.
    public func stop() {
        let open: [ControlConnection]? = state.withLock { state in
            guard !state.stopped else { return nil }
            state.stopped = true
            return Array(state.connections.values)
        }
        guard let open else { return }
        wake.signal()
        for connection in open { connection.requestClose() }
        threads.wait()
        // Remove the file only if it is still ours (not a successor's socket).
        var status = stat()
        if lstat(path, &status) == 0, status.st_ino == socketInode { unlink(path) }
        logger.info("control socket closed", metadata: ["path": "\(path)"])
    }

    deinit {
        if !state.withLock({ $0.stopped }) {
            logger.error("ControlServer for \(path) was released without stop(): the socket file is left behind")
        }
    }

    // MARK: Accepting

    private func acceptLoop() {
        defer { close(listenFD) }
        while true {
            let ready = UnixSocket.poll([(listenFD, Int16(POLLIN)), (wake.fd, Int16(POLLIN))], timeout: nil)
            if state.withLock({ $0.stopped }) { return }
            guard ready[0] != 0 else { continue }
            do {
                admit(try UnixSocket.accept(listenFD))
            } catch {
                let exhausted: Set<Errno> = [.tooManyOpenFilesInSystem, .tooManyOpenFiles, .noMemory]
                if exhausted.contains(error) {
                    logger.warning("control socket: cannot accept a client: \(error); retrying in 1 s")
                    Thread.sleep(forTimeInterval: 1)
                }
            }
        }
    }

    private func admit(_ fd: Int32) {
        UnixSocket.setTimeout(fd, option: SO_SNDTIMEO, seconds: options.writeTimeoutSeconds)
        let connection: ControlConnection
        do {
            connection = try ControlConnection(fd: fd, queueLimit: options.eventQueueLimit)
        } catch {
            close(fd)
            logger.warning("control socket: cannot serve a client: \(error)")
            return
        }
        let maxClients = options.maxClients
        let (admitted, stopping) = state.withLock { state -> (Bool, Bool) in
            guard !state.stopped, state.connections.count < maxClients else { return (false, state.stopped) }
            state.connections[ObjectIdentifier(connection)] = connection
            return (true, false)
        }
        if stopping {
            close(fd)
            return
        }
        guard admitted else {
            let busy = ControlResponse(id: nil, failure: ControlError(.busy,
                "the daemon already serves \(options.maxClients) control clients (control.max_clients); try again shortly"))
            try? UnixSocket.sendAll(fd, Array((busy.line() + "\n").utf8))
            close(fd)
            logger.warning("control socket: refused a client, \(options.maxClients) already connected")
            return
        }
        threads.start(name: "control-client") { [self] in
            serve(connection)
            state.withLock { _ = $0.connections.removeValue(forKey: ObjectIdentifier(connection)) }
            connection.closeDescriptor()
        }
    }

    // MARK: One client

    private func serve(_ connection: ControlConnection) {
        var buffer: [UInt8] = []
        var discarding = false
        var lastHeard = Date()
        let fd = connection.fd
        while !connection.closeRequested {
            let timeout = connection.isSubscribed ? nil : options.idleTimeoutSeconds - Date().timeIntervalSince(lastHeard)
            if let timeout, timeout <= 0 {
                logger.debug("control socket: closing an idle client after \(options.idleTimeoutSeconds) s")
                return
            }
            let ready = UnixSocket.poll([(fd, Int16(POLLIN)), (connection.wake.fd, Int16(POLLIN))], timeout: timeout)
            if ready[1] != 0 {
                connection.wake.drain()
                if connection.closeRequested { return }
                guard flushEvents(connection) else { return }
            }
            guard ready[0] != 0 else { continue }
            let count: Int
            do {
                count = try UnixSocket.receive(fd, into: &buffer)
            } catch {
                return
            }
            lastHeard = Date()
            // Complete lines; at end of input a last line without a newline counts too.
            var start = 0
            while let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = buffer[start..<newline]
                start = newline + 1
                if discarding { discarding = false; continue }
                guard answer(line, on: connection) else { return }
            }
            buffer.removeFirst(start)
            if count == 0 {
                if !buffer.isEmpty, !discarding { _ = answer(buffer[...], on: connection) }
                return
            }
            if buffer.count > ControlProtocol.maximumLineBytes {
                if !discarding {
                    let tooLarge = ControlResponse(id: nil, failure: ControlError(.tooLarge,
                        "the request is longer than \(ControlProtocol.maximumLineBytes) bytes; it is skipped up to its newline"))
                    guard write(tooLarge.line(), to: connection) else { return }
                    discarding = true
                }
                buffer.removeAll(keepingCapacity: true)
            }
        }
    }

    /// Parses one line and writes the answer; false when the client is gone.
    private func answer(_ line: ArraySlice<UInt8>, on connection: ControlConnection) -> Bool {
        var line = line
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        // Blank lines (a human at `socat`) get no answer.
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return true }
        let response: ControlResponse
        switch ControlCall.parse(line) {
        case .failure(let failure):
            logger.debug("control socket: bad request: \(failure.error)")
            response = failure.response
        case .success(let call):
            logger.debug("control socket: \(call.request)")
            if case .subscribe(let kinds) = call.request {
                connection.subscribe(kinds)
                let names = (kinds.map(Array.init) ?? ControlEventKind.subscribable).map(\.rawValue).sorted()
                response = ControlResponse(id: call.id, result: ["events": .array(names.map(JSONValue.string))])
            } else if call.request.needsRoot, !connection.isPrivileged {
                logger.warning("control socket: refused \(call.request.command) from a user who is not root")
                response = ControlResponse(id: call.id, failure: ControlError(.forbidden,
                    "\(call.request.command) needs root: use `sudo kioskcam pin set` (the socket's group may use every other command)"))
            } else {
                response = ControlResponse(id: call.id, outcome: handler.handle(call.request))
            }
        }
        return write(response.line(), to: connection)
    }

    private func flushEvents(_ connection: ControlConnection) -> Bool {
        let (lines, dropped) = connection.takeEvents()
        if dropped > 0 {
            guard write(ControlEvent(.dropped, ["count": .integer(Int64(dropped))]).line(), to: connection) else { return false }
        }
        for line in lines {
            do { try UnixSocket.sendAll(connection.fd, line) } catch { return false }
        }
        return true
    }

    private func write(_ line: String, to connection: ControlConnection) -> Bool {
        do {
            try UnixSocket.sendAll(connection.fd, Array((line + "\n").utf8))
            return true
        } catch {
            logger.debug("control socket: a client stopped reading (\(error)); disconnected")
            return false
        }
    }

    // MARK: Binding

    /// Removes a socket file nobody listens on; refuses when a daemon answers.
    private static func removeStaleSocket(_ path: String, logger: Logger) throws(ControlServerError) {
        var status = stat()
        guard lstat(path, &status) == 0 else { return }
        guard (status.st_mode & S_IFMT) == S_IFSOCK else {
            throw ControlServerError(path: path, message: "\(path) exists and is not a socket: remove it, or choose another control.socket")
        }
        guard let probe = try? UnixSocket.makeSocket() else { return }
        defer { close(probe) }
        do {
            try UnixSocket.connect(probe, to: path)
            let pid = UnixSocket.peerProcess(probe).map { " (pid \($0))" } ?? ""
            throw ControlServerError(path: path, message:
                "another kioskcam daemon\(pid) is already listening on \(path): stop it first (`systemctl stop kioskcam`), or give this one another control.socket")
        } catch let error as ControlServerError {
            throw error
        } catch {
            guard (error as? Errno) == .connectionRefused else {
                throw ControlServerError(path: path, message: "cannot check whether a daemon listens on \(path): \(error)")
            }
            unlink(path)
            logger.notice("removed a stale control socket left by a daemon that stopped", metadata: ["path": "\(path)"])
        }
    }

    /// Applies the group and mode; returns the mode set.
    private static func applyGroup(_ group: String?, to path: String, logger: Logger) -> mode_t {
        guard let group else {
            chmod(path, 0o660)
            return 0o660
        }
        guard let gid = groupID(group) else {
            chmod(path, 0o600)
            logger.warning("the group \(group) (control.socket_group) does not exist: the control socket \(path) is root-only; create it with `sudo addgroup --system \(group)`")
            return 0o600
        }
        guard chown(path, uid_t.max, gid) == 0 else {
            let error = Errno(rawValue: errno)
            chmod(path, 0o600)
            logger.warning("cannot give the control socket \(path) to group \(group): \(error); it is root-only")
            return 0o600
        }
        chmod(path, 0o660)
        return 0o660
    }

    static func groupID(_ name: String) -> gid_t? {
        var entry = group()
        var result: UnsafeMutablePointer<group>?
        var storage = [CChar](repeating: 0, count: 16 * 1024)
        let status = getgrnam_r(name, &entry, &storage, storage.count, &result)
        guard status == 0, let result else { return nil }
        return result.pointee.gr_gid
    }
}
