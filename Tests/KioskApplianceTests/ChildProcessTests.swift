import Foundation
import Glibc
import KioskSources
import KioskTestSupport
import XCTest

/// A child process (the broadcast, the camera helper), spawned and reaped without Foundation's `Process`: its
/// end must be seen by polling alone, its signals must be a fresh process's, and none of
/// the daemon's descriptors may leak into it.
final class ChildProcessTests: XCTestCase {
    func testAnEndedChildIsSeenAsEndedWithoutAnyoneElseReapingIt() throws {
        let child = try ChildProcess(program: "/bin/sh", arguments: ["-c", "exit 3"])
        XCTAssertTrue(child.wait(timeout: 10), "the child's end was never seen")
        XCTAssertFalse(child.isRunning)
        // Reaped: the pid is no longer this process's child.
        var status: Int32 = 0
        XCTAssertEqual(waitpid(child.pid, &status, WNOHANG), -1)
    }

    func testSIGTERMStopsItEvenWhenTheParentIgnoresSIGTERM() throws {
        // The daemon takes SIGTERM with its own handler; an ignored disposition would be
        // inherited across exec and make the broadcast deaf to `broadcast stop`.
        let previous = Glibc.signal(SIGTERM, SIG_IGN)
        defer { Glibc.signal(SIGTERM, previous) }
        let child = try ChildProcess(program: "/bin/sleep", arguments: ["30"])
        XCTAssertTrue(child.isRunning)
        child.signal(SIGTERM)
        XCTAssertTrue(child.wait(timeout: 10), "sleep ignored SIGTERM: the parent's disposition leaked into it")
    }

    func testTheParentsDescriptorsAreNotInherited() throws {
        let temporary = TemporaryDirectory("kioskcam-child")
        let leaked = open(temporary.path + "/held-open", O_CREAT | O_WRONLY, 0o600)   // no O_CLOEXEC
        XCTAssertGreaterThanOrEqual(leaked, 3)
        defer { close(leaked) }
        let listing = temporary.path + "/fds"
        // Compared by what each descriptor points at, not by number: the shell keeps
        // descriptors of its own (dash saves the redirected stdout at 10), and a number it
        // happens to share with `leaked` is not a leak.
        let child = try ChildProcess(program: "/bin/sh", arguments: ["-c", "ls -l /proc/$$/fd > '\(listing)'"])
        XCTAssertTrue(child.wait(timeout: 10))
        let targets = try String(contentsOfFile: listing, encoding: .utf8)
        XCTAssertTrue(targets.contains(listing), "the listing does not show the child's own descriptors: \(targets)")
        XCTAssertFalse(targets.contains("held-open"), "descriptor \(leaked) leaked into the child: \(targets)")
    }

    func testAMissingProgramIsAClearError() {
        XCTAssertThrowsError(try ChildProcess(program: "/nonexistent/kioskcam", arguments: [])) { error in
            XCTAssertTrue("\(error)".contains("cannot start /nonexistent/kioskcam"), "\(error)")
        }
    }
}
