import Foundation
import Glibc
import KioskControl
import KioskCore
import KioskTestSupport
import Logging
import XCTest

/// A handler that records what it was asked and answers from canned results.
final class RecordingHandler: ControlHandler, @unchecked Sendable {
    private let lock = Lock()
    private var seen: [ControlRequest] = []
    var delaySeconds: Double = 0
    var status = StatusReport(state: .idle)

    var requests: [ControlRequest] { lock.withLock { seen } }

    func handle(_ request: ControlRequest) -> ControlOutcome {
        lock.withLock { seen.append(request) }
        if delaySeconds > 0 { Thread.sleep(forTimeInterval: delaySeconds) }
        switch request {
        case .status: return .encoding(lock.withLock { status })
        case .recordStart(let audioOnly, _):
            // As the daemon answers: the state and the kind (the file is named at the first frame).
            return .success(["state": .string("starting"), "kind": .string(audioOnly ? "audio" : "video")])
        case .recordStop: return .failure(ControlError(.failed, "not recording"))
        case .pinSet: return .success([:])
        default: return .success(["command": .string(request.command)])
        }
    }
}

/// A raw client socket for sending exactly the bytes a test wants.
final class RawClient {
    let fd: Int32
    private var buffer: [UInt8] = []

    init(_ path: String, receiveTimeout: Double = 5) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8)
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else {
            let code = errno
            close(fd)
            throw NSError(domain: "connect", code: Int(code))
        }
        var timeout = timeval(tv_sec: Int(receiveTimeout), tv_usec: Int((receiveTimeout - Double(Int(receiveTimeout))) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    func send(_ text: String) { send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { return }
            offset += sent
        }
    }

    /// The next line, or nil at end of stream or time-out.
    func readLine() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: 10) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeFirst(newline + 1)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = recv(fd, &chunk, chunk.count, 0)
            if count <= 0 { return nil }
            buffer.append(contentsOf: chunk[..<count])
        }
    }

    func readResponse(file: StaticString = #filePath, line: UInt = #line) -> ControlResponse? {
        guard let text = readLine() else {
            XCTFail("no answer", file: file, line: line)
            return nil
        }
        guard case .response(let response)? = try? ControlServerLine.parse(Array(text.utf8)) else {
            XCTFail("not a response: \(text)", file: file, line: line)
            return nil
        }
        return response
    }
}

extension XCTestCase {
    var quietLogger: Logger {
        var logger = Logger(label: "control-test")
        logger.logLevel = .critical
        return logger
    }

    /// A short socket path (sun_path holds 107 bytes) in a fresh folder.
    func socketFolder() -> (folder: TemporaryDirectory, path: String) {
        let folder = TemporaryDirectory("kc")
        return (folder, folder.path + "/control.sock")
    }

    func fileMode(_ path: String) -> mode_t {
        var status = stat()
        stat(path, &status)
        return status.st_mode & 0o7777
    }
}

/// Keeps log lines so tests can check what was said (and what was not, such as a PIN).
final class LogStore: @unchecked Sendable {
    private let lock = Lock()
    private var lines: [String] = []
    var all: [String] { lock.withLock { lines } }
    func append(_ line: String) { lock.withLock { lines.append(line) } }

    var logger: Logger {
        Logger(label: "control-test") { _ in CapturingLogHandler(store: self) }
    }
}

struct CapturingLogHandler: LogHandler {
    let store: LogStore
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        store.append("\(event.level) \(event.message) \(event.metadata ?? [:])")
    }
}
