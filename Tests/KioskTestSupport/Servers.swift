import Foundation
import Glibc

/// A program the tests need, looked up on PATH and in the sbin folders (mosquitto lives
/// in /usr/sbin). Missing is an error naming its Debian package, never a skip:
/// scripts/install-deps --test installs it.
public func requiredProgram(_ name: String, package: String) throws -> String {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
    for folder in path.split(separator: ":").map(String.init) + ["/usr/sbin", "/usr/local/sbin", "/sbin"] {
        let candidate = folder + "/" + name
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    throw ToolError(command: name, status: 127, stderr: "\(name) is not installed: run scripts/install-deps --test (Debian package \(package))")
}

/// A TCP port on 127.0.0.1 nobody listens on now (the kernel picks it).
public func freeLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw ToolError(command: "socket", status: errno, stderr: "no socket") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    guard bound else { throw ToolError(command: "bind", status: errno, stderr: "no free port") }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Whether something accepts TCP connections on 127.0.0.1:`port`.
public func isListening(port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
    }
}

/// The states of the sockets of this network namespace bound to local `port`, read from
/// /proc/net without touching them (the kernel's hex codes: "0A" listening, "01" an
/// established connection; for UDP, "07" bound). A receiver that accepts one connection
/// (`ffmpeg -listen 1`) would be spent by a probing `connect`; this leaves it alone.
public func socketStates(localPort port: Int, udp: Bool = false) -> [String] {
    let hexPort = String(format: "%04X", port)
    return (udp ? ["udp", "udp6"] : ["tcp", "tcp6"]).flatMap { table -> [String] in
        let text = (try? String(contentsOfFile: "/proc/net/" + table, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").dropFirst().compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count > 3, fields[1].hasSuffix(":" + hexPort) else { return nil }
            return String(fields[3])
        }
    }
}

/// Polls `condition` every `interval` until it holds or `seconds` pass; whether it held.
/// For a daemon or a child process to reach a state: give a deadline that a loaded
/// machine meets (30–60 s), and name the state in the assertion's message.
public func waitUntil(_ seconds: Double, interval: Double = 0.1, _ condition: () -> Bool) -> Bool {
    // True as soon as the condition is seen to hold: asking again afterwards failed a wait
    // for a figure that hovers at its bound (the pre-event ring's span, CI 2026-12-01).
    let deadline = Date(timeIntervalSinceNow: seconds)
    while Date() < deadline {
        if condition() { return true }
        Thread.sleep(forTimeInterval: interval)
    }
    return condition()
}

/// Whether `listener` (an `ffmpeg -listen` receiver) came to listen on TCP `port` (or bind
/// UDP `port`, for SRT) within `seconds` and still runs: read from /proc/net, since a
/// probing connection would be the one connection it accepts.
public func waitForListener(port: Int, udp: Bool = false, _ listener: Process, seconds: Double = 30) -> Bool {
    let listening = waitUntil(seconds) { !listener.isRunning || socketStates(localPort: port, udp: udp).contains(udp ? "07" : "0A") }
    return listening && listener.isRunning
}

/// `kioskcam status --json` of the daemon `config` configures, as a dictionary (empty when it fails).
public func kioskcamStatus(config: String) -> [String: Any] {
    guard let output = try? Tool.run(Package.kioskcamBinary, ["status", "--json", "--config", config], allowFailure: true),
          output.status == 0,
          let object = try? JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [String: Any] else { return [:] }
    return object
}

/// Waits until the daemon `config` configures records and its status reports at least
/// `seconds` of media written (`seconds_recorded`: the file's own time, not the wall
/// clock's, so a loaded machine waits longer instead of recording less).
/// - Returns: nil once it has; else what it waited for, with the last status.
public func waitUntilRecorded(config: String, seconds: Double, timeout: Double = 60) -> String? {
    var last: [String: Any] = [:]
    let reached = waitUntil(timeout, interval: 0.2) {
        last = kioskcamStatus(config: config)
        return last["state"] as? String == "recording" && ((last["seconds_recorded"] as? NSNumber)?.doubleValue ?? 0) >= seconds
    }
    return reached ? nil : "not recording with \(seconds) s written (seconds_recorded) within \(timeout) s; last status: \(last)"
}

/// Debian's Mosquitto on 127.0.0.1, anonymous, without persistence: a real broker for
/// the MQTT tests, stopped and started again on the same port to test reconnection.
public final class MosquittoBroker {
    /// A TLS listener with a password file: the certificate authority, the broker's
    /// certificate and key (PEM), and `user` / `password`.
    public struct Security {
        public var caFile: String
        public var certificateFile: String
        public var keyFile: String
        public var user: String
        public var password: String

        /// A throwaway certificate authority and a broker certificate it signed for
        /// `localhost` and 127.0.0.1, made with openssl in `folder`.
        public static func make(in folder: String, user: String, password: String) throws -> Security {
            let openssl = try requiredProgram("openssl", package: "openssl")
            func run(_ arguments: [String]) throws { try Tool.run(openssl, arguments) }
            try run(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", folder + "/ca.key", "-out", folder + "/ca.pem",
                     "-days", "2", "-subj", "/CN=kioskcam test CA"])
            try run(["req", "-newkey", "rsa:2048", "-nodes", "-keyout", folder + "/broker.key", "-out", folder + "/broker.csr",
                     "-subj", "/CN=localhost"])
            try "subjectAltName=DNS:localhost,IP:127.0.0.1\n".write(toFile: folder + "/san.ext", atomically: true, encoding: .utf8)
            try run(["x509", "-req", "-in", folder + "/broker.csr", "-CA", folder + "/ca.pem", "-CAkey", folder + "/ca.key",
                     "-CAcreateserial", "-out", folder + "/broker.pem", "-days", "2", "-extfile", folder + "/san.ext"])
            // Debian's mosquitto reads its files after dropping to user mosquitto.
            chmod(folder + "/broker.key", 0o644)
            return Security(caFile: folder + "/ca.pem", certificateFile: folder + "/broker.pem", keyFile: folder + "/broker.key",
                            user: user, password: password)
        }
    }

    public let port: Int
    public let security: Security?
    private let folder: String
    private var process: Process?

    public init(folder: String, security: Security? = nil) throws {
        self.folder = folder
        self.security = security
        port = try freeLoopbackPort()
        var configuration = "listener \(port) 127.0.0.1\npersistence false\n"
        if let security {
            let passwords = folder + "/mosquitto.passwd"
            try Tool.run(try requiredProgram("mosquitto_passwd", package: "mosquitto"), ["-c", "-b", passwords, security.user, security.password])
            chmod(passwords, 0o644)
            configuration += "cafile \(security.caFile)\ncertfile \(security.certificateFile)\nkeyfile \(security.keyFile)\n"
                + "allow_anonymous false\npassword_file \(passwords)\n"
        } else {
            configuration += "allow_anonymous true\n"
        }
        try configuration.write(toFile: folder + "/mosquitto.conf", atomically: true, encoding: .utf8)
        try start()
    }

    deinit { stop() }

    public var url: String { security == nil ? "mqtt://127.0.0.1:\(port)" : "mqtts://localhost:\(port)" }

    /// How the command-line clients reach this broker.
    private var clientArguments: [String] {
        guard let security else { return ["-h", "127.0.0.1", "-p", String(port)] }
        return ["-h", "localhost", "-p", String(port), "--cafile", security.caFile, "-u", security.user, "-P", security.password]
    }

    public func start() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try requiredProgram("mosquitto", package: "mosquitto"))
        process.arguments = ["-c", folder + "/mosquitto.conf"]
        let log = folder + "/mosquitto.log"
        if !FileManager.default.fileExists(atPath: log) { FileManager.default.createFile(atPath: log, contents: nil) }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        handle.seekToEndOfFile()
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        self.process = process
        let deadline = Date(timeIntervalSinceNow: 10)
        while !isListening(port: port) && Date() < deadline && process.isRunning { Thread.sleep(forTimeInterval: 0.05) }
        guard isListening(port: port) else {
            throw ToolError(command: "mosquitto", status: 1, stderr: (try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
        }
    }

    /// Ends the broker (SIGKILL: the clients see the connection drop) and reaps it.
    public func stop() {
        guard let process else { return }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        self.process = nil
    }

    /// `mosquitto_sub` for up to `seconds`, with `-v` (topic, space, payload per line).
    /// - Parameter count: Stop after this many messages.
    public func subscribe(_ filter: String, count: Int? = nil, seconds: Int = 3, retainedOnly: Bool = false) throws -> [(topic: String, payload: String)] {
        var arguments = clientArguments + ["-t", filter, "-v", "-W", String(seconds)]
        if let count { arguments += ["-C", String(count)] }
        if retainedOnly { arguments.append("--retained-only") }
        let output = try Tool.run(try requiredProgram("mosquitto_sub", package: "mosquitto-clients"), arguments, allowFailure: true)
        return output.stdout.split(separator: "\n").map { line in
            let parts = line.split(separator: " ", maxSplits: 1)
            return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
        }
    }

    /// `mosquitto_pub`; with `lines`, each line of the text is one message.
    public func publish(_ topic: String, _ payload: String, lines: Bool = false) throws {
        let program = try requiredProgram("mosquitto_pub", package: "mosquitto-clients")
        if lines {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = clientArguments + ["-t", topic, "-l"]
            let input = Pipe()
            process.standardInput = input
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            input.fileHandleForWriting.write(Data(payload.utf8))
            try input.fileHandleForWriting.close()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                throw ToolError(command: "mosquitto_pub -l", status: process.terminationStatus, stderr: "")
            }
        } else {
            try Tool.run(program, clientArguments + ["-t", topic, "-m", payload])
        }
    }
}

/// `kioskcam run` on the built-in camera and tone with a file-backed screen, everything
/// under `root`, plus `sections` of the test's own.
public final class KioskcamDaemon {
    public let process: Process
    public let root: String
    public let config: String
    public let log: String
    public var media: String { root + "/media" }
    public var stateDirectory: String { root + "/state" }

    /// What runs the daemon: `launcher + [kioskcam, run, --config, FILE]` (empty: started directly).
    public let launcher: [String]

    /// - Parameters:
    ///   - launcher: A command that ends by executing its arguments (it keeps the pid), e.g. a
    ///     shell that first joins a cgroup, as systemd starts a unit in its own.
    /// - Throws: `ToolError` with the log when the daemon does not come up within 20 s.
    public init(root: String, sections: String, launcher: [String] = []) throws {
        self.root = root
        self.launcher = launcher
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        config = root + "/kioskcam.toml"
        log = root + "/daemon.log"
        try Self.configuration(root: root, sections: sections).write(toFile: config, atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: root + "/metrics", withIntermediateDirectories: true)
        if !FileManager.default.fileExists(atPath: log) { FileManager.default.createFile(atPath: log, contents: nil) }
        process = Process()
        try start()
    }

    /// The configuration of a test daemon under `root`: the built-in camera (320x240) and
    /// tone, a file-backed screen, the socket, state and metrics in `root`; `lock` goes
    /// into `[lock]`, `sections` after everything.
    public static func configuration(root: String, lock: String = "", sections: String = "") -> String {
        """
        [storage]
        media_root = "\(root)/media"
        [camera]
        source = "test"
        size = "320x240"
        [microphone]
        source = "tone"
        [encoder]
        preset = "ultrafast"
        [screen]
        framebuffer = "file:\(root)/screen.fb"
        [lock]
        \(lock)
        start_locked = false
        [control]
        state_directory = "\(root)/state"
        socket = "\(root)/control.sock"
        socket_group = ""
        metrics_file = "\(root)/metrics/kioskcam.prom"
        metrics_interval_seconds = 1
        \(sections)
        """
    }

    private func start() throws {
        let command = launcher + [Package.kioskcamBinary, "run", "--config", config]
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        handle.seekToEndOfFile()
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        guard waitForLog("kioskcam is running", seconds: 20) else {
            reap()
            throw ToolError(command: "kioskcam run", status: 1, stderr: logText())
        }
    }

    deinit { reap() }

    public func logText() -> String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    /// Waits until the log says `text`; whether it did.
    @discardableResult
    public func waitForLog(_ text: String, seconds: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while !logText().contains(text) && Date() < deadline && process.isRunning { Thread.sleep(forTimeInterval: 0.05) }
        return logText().contains(text)
    }

    public func kioskcam(_ arguments: [String]) throws -> Tool.Output {
        try Tool.run(Package.kioskcamBinary, arguments + ["--config", config], allowFailure: true)
    }

    /// `kioskcam status --json` as a dictionary (empty when it fails).
    public func status() -> [String: Any] { kioskcamStatus(config: config) }

    /// Waits until it records with at least `seconds` written (see `waitUntilRecorded(config:seconds:timeout:)`);
    /// nil once it does, else what it waited for.
    public func waitUntilRecorded(_ seconds: Double, timeout: Double = 60) -> String? {
        KioskTestSupport.waitUntilRecorded(config: config, seconds: seconds, timeout: timeout)
    }

    public var deviceID: String {
        ((try? String(contentsOfFile: stateDirectory + "/device-id", encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    public func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// SIGTERM and wait; the exit status, or nil after `timeout`.
    public func terminate(timeout: Double = 30) -> Int32? {
        signal(SIGTERM)
        let deadline = Date(timeIntervalSinceNow: timeout)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        guard !process.isRunning else { return nil }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Ends the daemon if it still runs (SIGKILL) and reaps it.
    public func reap() {
        guard process.processIdentifier != 0 else { return }
        if process.isRunning { signal(SIGKILL) }
        process.waitUntilExit()
    }
}

/// moto in server mode on 127.0.0.1: an S3 server the test starts and stops. Installed
/// by `scripts/install-deps --test` at `.build-tools/moto/bin/moto_server`; a missing
/// server is an error that fails the test (it never skips).
public final class MotoServer {
    public let port: Int
    private let process: Process
    public var endpoint: String { "http://127.0.0.1:\(port)" }

    public static var binary: String { Package.root() + "/.build-tools/moto/bin/moto_server" }

    /// Starts moto on `port` (a free one when nil) and waits until it answers.
    public init(port: Int? = nil) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.binary) else {
            throw ToolError(command: Self.binary, status: 127, stderr: "moto_server is missing: run scripts/install-deps --test")
        }
        self.port = try port ?? freeLoopbackPort()
        process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = ["-H", "127.0.0.1", "-p", String(self.port)]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date(timeIntervalSinceNow: 30)
        while !isListening(port: self.port) {
            guard Date() < deadline, process.isRunning else {
                stop()
                throw ToolError(command: Self.binary, status: 1, stderr: "moto_server did not answer on port \(self.port) within 30 s")
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
    }

    deinit { stop() }

    /// Kills the server at once (SIGKILL: a cut, not a shutdown) and reaps it.
    public func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// Creates a bucket (moto checks no signature, so a plain PUT does).
    public func createBucket(_ name: String) throws {
        try Tool.run("curl", ["-sf", "-X", "PUT", endpoint + "/" + name, "-o", "/dev/null"])
    }

    /// Every object key in `bucket`, through moto's ListObjectsV2 (up to 1,000).
    public func keys(in bucket: String) throws -> [String] {
        let xml = try Tool.run("curl", ["-sf", endpoint + "/" + bucket + "?list-type=2&max-keys=1000"]).stdout
        return xml.components(separatedBy: "<Key>").dropFirst().compactMap { $0.components(separatedBy: "</Key>").first }
    }

    /// An object's bytes, read with a signed GET (moto refuses an anonymous one).
    public func object(_ bucket: String, _ key: String) throws -> Data {
        let folder = TemporaryDirectory("kioskcam-object")
        let file = folder.path + "/object"
        try Tool.run("curl", ["-sf", "--aws-sigv4", "aws:amz:us-east-1:s3", "-u", "reader:secret",
                              endpoint + "/" + bucket + "/" + key, "-o", file])
        return try Data(contentsOf: URL(fileURLWithPath: file))
    }
}

/// An HTTP server that takes a request's headers and the first `bodyLimit` bytes of its
/// body, then stops reading and never answers: an upload caught midway by construction,
/// however loaded the machine (watching a throttled upload's socket races a small file).
/// Its receive buffer is kept small, so the client's writes block rather than pile up in
/// the kernel. Connections are taken one at a time and held open until `stop()`.
public final class StallingHTTPServer: @unchecked Sendable {
    /// One connection: its request line and how many body bytes were read from it.
    public struct Request: Sendable {
        public var line: String
        public var bodyBytes: Int
    }

    public let port: Int
    public let bodyLimit: Int
    private let listener: Int32
    private let lock = NSLock()
    private var requests: [Request] = []
    private var held: [Int32] = []
    private var stopped = false
    private let done = DispatchSemaphore(value: 0)

    /// Listens on `port` (a free one when nil) on 127.0.0.1.
    public init(port: Int? = nil, bodyLimit: Int = 8_192) throws {
        self.port = try port ?? freeLoopbackPort()
        self.bodyLimit = bodyLimit
        listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw ToolError(command: "socket", status: errno, stderr: "no socket") }
        var one: Int32 = 1
        var small: Int32 = 4_096
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(listener, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(self.port).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard bound, listen(listener, 4) == 0 else {
            let code = errno
            close(listener)
            throw ToolError(command: "bind", status: code, stderr: "cannot listen on 127.0.0.1:\(self.port)")
        }
        Thread { [self] in serve() }.start()
    }

    deinit { stop() }

    /// Every connection so far, in the order they came.
    public var received: [Request] { lock.withLock { requests } }

    /// Closes the listener and every held connection, and waits for the accepting thread.
    public func stop() {
        let wasStopped = lock.withLock { () -> Bool in
            defer { stopped = true }
            return stopped
        }
        guard !wasStopped else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        done.wait()
        close(listener)
        lock.withLock { held.forEach { close($0) }; held = [] }
    }

    private func serve() {
        defer { done.signal() }
        while true {
            let connection = accept(listener, nil, nil)
            if connection < 0 {
                if errno == EINTR { continue }
                return
            }
            let isStopped = lock.withLock { () -> Bool in
                held.append(connection)
                return stopped
            }
            if isStopped { return }
            take(connection)
        }
    }

    /// Reads the headers and up to `bodyLimit` body bytes, recording progress as it goes.
    private func take(_ connection: Int32) {
        var bytes: [UInt8] = []
        var headerEnd: Int?
        var chunk = [UInt8](repeating: 0, count: 1_024)
        let index = lock.withLock { () -> Int in
            requests.append(Request(line: "", bodyBytes: 0))
            return requests.count - 1
        }
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        while headerEnd.map({ bytes.count - $0 < bodyLimit }) ?? true {
            let wanted = headerEnd.map { min(chunk.count, bodyLimit - (bytes.count - $0)) } ?? chunk.count
            let count = Glibc.read(connection, &chunk, wanted)
            if count < 0 && (errno == EAGAIN || errno == EINTR) {
                if lock.withLock({ stopped }) { return }
                continue
            }
            guard count > 0 else { return }
            bytes += chunk[0..<count]
            if headerEnd == nil, let end = bytes.firstRange(of: Array("\r\n\r\n".utf8)) {
                headerEnd = end.upperBound
                let line = String(decoding: bytes[..<(bytes.firstRange(of: Array("\r\n".utf8))?.lowerBound ?? 0)], as: UTF8.self)
                lock.withLock { requests[index].line = line }
            }
            if let headerEnd {
                let body = bytes.count - headerEnd
                lock.withLock { requests[index].bodyBytes = body }
            }
        }
    }
}

/// A real RTMP server: Debian's nginx with libnginx-mod-rtmp, run as a user process on a
/// free loopback port with its own prefix and configuration in `folder` (`daemon off`, no
/// root paths). It records every stream published to `rtmp://127.0.0.1:PORT/live/NAME`
/// into `recordings/NAME.flv` (`record all`), and plays it to anyone who pulls it.
public final class NginxRTMPServer {
    public let port: Int
    public let folder: String
    private var process: Process?

    /// Where Debian's libnginx-mod-rtmp puts the module.
    public static let module = "/usr/lib/nginx/modules/ngx_rtmp_module.so"

    /// Starts nginx and waits until it accepts connections.
    /// - Throws: `ToolError` when nginx or the module is not installed, or nginx does
    ///   not listen within 10 s (its error log attached).
    public init(folder: String) throws {
        let nginx = try requiredProgram("nginx", package: "nginx")
        guard FileManager.default.fileExists(atPath: Self.module) else {
            throw ToolError(command: "nginx", status: 127,
                            stderr: "\(Self.module) is missing: run scripts/install-deps --test (Debian package libnginx-mod-rtmp)")
        }
        self.folder = folder
        port = try freeLoopbackPort()
        try FileManager.default.createDirectory(atPath: folder + "/recordings", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: folder + "/logs", withIntermediateDirectories: true)
        let configuration = """
            load_module \(Self.module);
            daemon off;
            master_process off;
            worker_processes 1;
            pid \(folder)/nginx.pid;
            error_log \(folder)/logs/error.log info;
            events { worker_connections 64; }
            rtmp {
                server {
                    listen 127.0.0.1:\(port);
                    application live {
                        live on;
                        record all;
                        record_path \(folder)/recordings;
                        record_unique off;
                    }
                }
            }

            """
        try configuration.write(toFile: folder + "/nginx.conf", atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: nginx)
        // -e: the error log before the configuration is read (else /var/log/nginx).
        process.arguments = ["-p", folder, "-c", folder + "/nginx.conf", "-e", folder + "/logs/error.log"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        let deadline = Date(timeIntervalSinceNow: 10)
        while !isListening(port: port) && Date() < deadline && process.isRunning { Thread.sleep(forTimeInterval: 0.05) }
        guard isListening(port: port) else {
            stop()
            throw ToolError(command: "nginx", status: 1, stderr: errorLog)
        }
    }

    deinit { stop() }

    public func url(_ name: String) -> String { "rtmp://127.0.0.1:\(port)/live/\(name)" }

    /// What nginx recorded of the stream `name`.
    public func recording(_ name: String) -> String { folder + "/recordings/\(name).flv" }

    public var errorLog: String { (try? String(contentsOfFile: folder + "/logs/error.log", encoding: .utf8)) ?? "" }

    /// Ends nginx (SIGTERM; recordings are closed when their publisher leaves) and reaps it.
    public func stop() {
        guard let process else { return }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        self.process = nil
    }
}
