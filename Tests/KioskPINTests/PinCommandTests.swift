import Foundation
import KioskTestSupport
import XCTest

/// `kioskcam pin set` and `kioskcam pin status` through the built binary, with a temp
/// config whose `[control] state_directory` is a temp folder.
final class PinCommandTests: XCTestCase {
    var folder: TemporaryDirectory!
    var config: String { folder.path + "/kioskcam.toml" }
    var stateDirectory: String { folder.path + "/state" }

    override func setUpWithError() throws {
        folder = TemporaryDirectory("kioskcam-pin-cli")
        try "[control]\nstate_directory = \"\(stateDirectory)\"\n".write(toFile: config, atomically: true, encoding: .utf8)
    }

    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs kioskcam with `input` on its standard input (Tool.run gives /dev/null).
    func kioskcam(_ arguments: [String], input: String? = nil, as user: String? = nil) throws -> Output {
        let process = Process()
        if let user {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=\(user)", "--regid=\(user == "nobody" ? "nogroup" : user)", "--clear-groups",
                                 Package.kioskcamBinary] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: Package.kioskcamBinary)
            process.arguments = arguments
        }
        let out = Pipe(), err = Pipe(), inPipe = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input == nil ? FileHandle.nullDevice : inPipe
        try process.run()
        if let input {
            inPipe.fileHandleForWriting.write(Data(input.utf8))
            try inPipe.fileHandleForWriting.close()
        }
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Output(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                           stderr: String(decoding: errData, as: UTF8.self))
    }

    func testSetFromStandardInputEndToEnd() throws {
        let before = try kioskcam(["pin", "status", "--config", config])
        XCTAssertEqual(before.status, 0, before.stderr)
        XCTAssertTrue(before.stdout.contains("FACTORY DEFAULT"), before.stdout)
        XCTAssertTrue(before.stdout.contains("wrong PINs in a row: 0"), before.stdout)

        let set = try kioskcam(["pin", "set", "--stdin", "--config", config], input: "2580\n")
        XCTAssertEqual(set.status, 0, set.stderr)
        XCTAssertTrue(set.stdout.contains("PIN set"), set.stdout)
        XCTAssertFalse((set.stdout + set.stderr).contains("2580"), "never printed")

        let pinFile = stateDirectory + "/pin"
        let attributes = try FileManager.default.attributesOfItem(atPath: pinFile)
        XCTAssertEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o600)
        let line = try String(contentsOfFile: pinFile, encoding: .utf8)
        XCTAssertTrue(line.hasPrefix("pbkdf2-sha256$210000$"), line)
        XCTAssertFalse(line.contains("2580"))

        let after = try kioskcam(["pin", "status", "--config", config])
        XCTAssertEqual(after.status, 0, after.stderr)
        XCTAssertTrue(after.stdout.contains("pin: set (pbkdf2-sha256, 210000 iterations)"), after.stdout)
        XCTAssertFalse(after.stdout.contains("FACTORY DEFAULT"))
        XCTAssertFalse(after.stdout.contains("2580") || after.stdout.contains(line.trimmingCharacters(in: .newlines)))
    }

    func testTrivialAndMalformedPINsAreRefused() throws {
        let trivial = try kioskcam(["pin", "set", "--stdin", "--config", config], input: "1111\n")
        XCTAssertEqual(trivial.status, 65)
        XCTAssertTrue(trivial.stderr.contains("--force"), trivial.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: stateDirectory + "/pin"))

        let short = try kioskcam(["pin", "set", "--stdin", "--config", config], input: "123\n")
        XCTAssertEqual(short.status, 65)
        XCTAssertTrue(short.stderr.contains("exactly 4 digits"), short.stderr)

        let empty = try kioskcam(["pin", "set", "--stdin", "--config", config], input: "")
        XCTAssertEqual(empty.status, 65, empty.stderr)

        let forced = try kioskcam(["pin", "set", "--stdin", "--force", "--config", config], input: "1111\r\n")
        XCTAssertEqual(forced.status, 0, forced.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: stateDirectory + "/pin"))
    }

    func testWithoutATerminalOrStdinFlagItSaysWhatToDo() throws {
        let result = try kioskcam(["pin", "set", "--config", config])
        XCTAssertEqual(result.status, 64)
        XCTAssertTrue(result.stderr.contains("--stdin"), result.stderr)
    }

    /// The state directory is root-only: anyone else is told to run as root.
    func testNotRootIsToldToRunAsRoot() throws {
        guard geteuid() == 0 else { throw XCTSkip("needs root to drop to the user nobody (PinStoreTests covers it as non-root)") }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else { throw XCTSkip("setpriv (util-linux) is missing") }
        let set = try kioskcam(["pin", "set", "--stdin", "--config", config], input: "2580\n")
        XCTAssertEqual(set.status, 0, set.stderr)
        let result = try kioskcam(["pin", "status", "--config", config], as: "nobody")
        XCTAssertEqual(result.status, 77, result.stderr)
        XCTAssertTrue(result.stderr.contains("\(stateDirectory)/pin: Permission denied (EACCES). Run as root or check [control] state_directory"),
                      result.stderr)
    }

    func testUnusableStateDirectoryIsAClearError() throws {
        try "x".write(toFile: folder.path + "/file", atomically: true, encoding: .utf8)
        try "[control]\nstate_directory = \"\(folder.path)/file/state\"\n".write(toFile: config, atomically: true, encoding: .utf8)
        let result = try kioskcam(["pin", "set", "--stdin", "--config", config], input: "2580\n")
        XCTAssertEqual(result.status, 74, result.stderr)
        XCTAssertTrue(result.stderr.contains("state_directory"), result.stderr)
    }
}
