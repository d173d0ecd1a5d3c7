import Foundation
import Glibc
import KioskControl
import KioskCore
import KioskTestSupport
import XCTest

/// `kioskcam status/start/stop/watch` (the built binary) against a server in this process.
final class ControlCommandLineTests: XCTestCase {
    var binary: String { Package.kioskcamBinary }

    /// A config whose `[control] socket` is `path`.
    func config(in folder: TemporaryDirectory, socket path: String) throws -> String {
        let file = folder.path + "/kioskcam.toml"
        try "[control]\nsocket = \"\(path)\"\nsocket_group = \"\"\n".write(toFile: file, atomically: true, encoding: .utf8)
        chmod(file, 0o644)
        return file
    }

    func testStatusStartStopAgainstATestServer() throws {
        let (folder, path) = socketFolder()
        let configFile = try config(in: folder, socket: path)
        let handler = RecordingHandler()
        handler.status = {
            var report = StatusReport(state: .recording)
            report.kind = "video"
            report.currentFile = "/m/.incoming/101010.mp4.part"
            report.bytesWritten = 2_000_000
            report.secondsRecorded = 4.5
            report.deviceID = "0b6c1c52-0d0e-4a8e-8a4c-2f0e3b1d9f00"
            report.defaultPIN = true
            return report
        }()
        let server = try ControlServer(path: path, group: nil, handler: handler, logger: quietLogger)
        defer { server.stop() }

        let status = try Tool.run(binary, ["status", "--config", configFile], allowFailure: true)
        XCTAssertEqual(status.status, 0, status.stderr)
        for expected in ["state:        recording (video)", "/m/.incoming/101010.mp4.part", "4.5 s, 1.9 MiB", "0b6c1c52", "factory default PIN"] {
            XCTAssertTrue(status.stdout.contains(expected), "missing \(expected):\n\(status.stdout)")
        }

        let json = try Tool.run(binary, ["status", "--json", "--config", configFile], allowFailure: true)
        XCTAssertEqual(json.status, 0, json.stderr)
        XCTAssertEqual(try JSONDecoder().decode(StatusReport.self, from: Data(json.stdout.utf8)), handler.status)

        let start = try Tool.run(binary, ["start", "--audio", "--duration", "1m", "--config", configFile], allowFailure: true)
        XCTAssertEqual(start.status, 0, start.stderr)
        XCTAssertEqual(start.stdout, "sound-only recording started\n")

        // The daemon's refusal is a clear error and exit status 1.
        let stop = try Tool.run(binary, ["stop", "--config", configFile], allowFailure: true)
        XCTAssertEqual(stop.status, 1)
        XCTAssertTrue(stop.stderr.contains("the daemon refused record.stop: not recording"), stop.stderr)

        let badDuration = try Tool.run(binary, ["start", "--duration", "soon", "--config", configFile], allowFailure: true)
        XCTAssertEqual(badDuration.status, 64, badDuration.stderr)

        XCTAssertEqual(handler.requests, [.status, .status, .recordStart(audioOnly: true, duration: 60), .recordStop])
    }

    func testNotRunningIsAClearMessageAndExitStatus69() throws {
        let (folder, path) = socketFolder()
        let configFile = try config(in: folder, socket: path)
        for command in [["status"], ["status", "--json"], ["start"], ["stop"], ["watch"]] {
            let result = try Tool.run(binary, command + ["--config", configFile], allowFailure: true)
            XCTAssertEqual(result.status, 69, "\(command): \(result.stderr)")
            XCTAssertEqual(result.stderr, "kioskcam: error: kioskcam is not running (no socket at \(path)): start it with `systemctl start kioskcam` or `kioskcam run`\n")
            XCTAssertEqual(result.stdout, "")
        }
    }

    /// Another user (nobody) without the group: "join group … or use sudo", exit status 77.
    func testPermissionDeniedForAUserOutsideTheGroup() throws {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else {
            throw XCTSkip("needs root and setpriv to run the CLI as another user")
        }
        let (folder, path) = socketFolder()
        let configFile = try config(in: folder, socket: path)
        chmod(folder.path, 0o755)
        let server = try ControlServer(path: path, group: nil, handler: RecordingHandler(), logger: quietLogger)
        defer { server.stop() }
        let result = try Tool.run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", binary, "status", "--config", configFile],
                                  allowFailure: true)
        XCTAssertEqual(result.status, 77, result.stderr)
        XCTAssertTrue(result.stderr.contains("permission denied on the control socket \(path): join group kioskcam"), result.stderr)
        XCTAssertTrue(result.stderr.contains("or use sudo"), result.stderr)
    }

    /// The socket's group may use every command but pin.set, which needs root as
    /// `kioskcam pin set` does: the socket is no way around that. Root (this process) may.
    func testAGroupMemberMayNotChangeThePIN() throws {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else {
            throw XCTSkip("needs root and setpriv to connect as another user")
        }
        // Debian's own: another user cannot run root's pyenv shims.
        let python = "/usr/bin/python3"
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: python), "python3 (package python3) is needed")
        let (folder, path) = socketFolder()
        chmod(folder.path, 0o755)
        let handler = RecordingHandler()
        let server = try ControlServer(path: path, group: "nogroup", handler: handler, logger: quietLogger)
        defer { server.stop() }
        // Two requests on one connection, answers printed a line each.
        let script = """
            import socket, sys
            s = socket.socket(socket.AF_UNIX)
            s.connect(sys.argv[1])
            s.sendall(b'{"v":1,"id":1,"cmd":"pin.set","args":{"pin":"4321"}}\\n{"v":1,"id":2,"cmd":"status"}\\n')
            data = b""
            while data.count(b"\\n") < 2:
                chunk = s.recv(65536)
                if not chunk: break
                data += chunk
            sys.stdout.write(data.decode())
            """
        let member = try Tool.run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", python, "-c", script, path])
        let answers = member.stdout.split(separator: "\n")
        XCTAssertEqual(answers.count, 2, member.stdout + member.stderr)
        XCTAssertTrue(answers.first?.contains(#""ok":false"#) == true && answers.first?.contains(#""code":"forbidden""#) == true, member.stdout)
        XCTAssertTrue(answers.first?.contains("sudo kioskcam pin set") == true, member.stdout)
        XCTAssertTrue(answers.last?.contains(#""ok":true"#) == true, "the group may use the other commands: \(member.stdout)")
        XCTAssertEqual(handler.requests.map(\.command), ["status"], "pin.set never reached the daemon")

        let root = try Tool.run(python, ["-c", script, path])
        XCTAssertEqual(root.stdout.split(separator: "\n").filter { $0.contains(#""ok":true"#) }.count, 2, root.stdout)
        XCTAssertEqual(handler.requests.map(\.command), ["status", "pin.set", "status"])
    }

    func testWatchPrintsEventsAsTheyHappen() throws {
        let (folder, path) = socketFolder()
        let configFile = try config(in: folder, socket: path)
        let server = try ControlServer(path: path, group: nil, handler: RecordingHandler(), logger: quietLogger)
        defer { server.stop() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["watch", "--events", "state,button", "--count", "2", "--config", configFile]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date(timeIntervalSinceNow: 10)
        while server.subscriberCount == 0, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        server.publish(ControlEvent(.levels, ["rms_dbfs": [-10]]))
        server.publish(.state(.recording, file: "/m/video/20261122/101010.mp4"))
        server.publish(.button("record", press: "short"))
        let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        let lines = output.split(separator: "\n")
        XCTAssertEqual(lines.count, 2, output)
        XCTAssertTrue(lines.first?.hasSuffix("state file=/m/video/20261122/101010.mp4 state=recording") ?? false, output)
        XCTAssertTrue(lines.last?.hasSuffix("button button=record press=short") ?? false, output)
        XCTAssertFalse(output.contains("levels"))
    }
}
