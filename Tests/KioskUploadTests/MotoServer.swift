import Foundation
import Glibc
import KioskTestSupport
import XCTest

/// moto in server mode on 127.0.0.1: an S3 server the test starts and stops. Installed
/// by `scripts/install-deps --test` at `.build-tools/moto/bin/moto_server`; a missing
/// server fails the test (it never skips).
final class MotoServer {
    let port: UInt16
    private let process: Process
    var endpoint: String { "http://127.0.0.1:\(port)" }

    static var binary: String { Package.root() + "/.build-tools/moto/bin/moto_server" }

    /// Starts moto on `port` (a free one when nil) and waits until it answers.
    init(port: UInt16? = nil, file: StaticString = #filePath, line: UInt = #line) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.binary) else {
            XCTFail("\(Self.binary) is missing: run scripts/install-deps --test", file: file, line: line)
            throw MotoError("moto_server missing")
        }
        self.port = try port ?? Self.freePort()
        process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = ["-H", "127.0.0.1", "-p", String(self.port)]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date(timeIntervalSinceNow: 30)
        while !Self.answers(self.port) {
            guard Date() < deadline, process.isRunning else {
                stop()
                XCTFail("moto_server did not answer on port \(self.port) within 30 s", file: file, line: line)
                throw MotoError("moto_server did not start")
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
    }

    deinit { stop() }

    /// Kills the server at once (SIGKILL: a cut, not a shutdown) and reaps it.
    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// A port nothing listens on now.
    static func freePort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw MotoError("socket failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Bool in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw MotoError("bind failed") }
        return UInt16(bigEndian: address.sin_port)
    }

    /// Whether something accepts TCP connections on the port.
    static func answers(_ port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}

struct MotoError: Error, CustomStringConvertible {
    let description: String
    init(_ text: String) { description = text }
}
