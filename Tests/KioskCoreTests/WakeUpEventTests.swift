import Foundation
import XCTest
import KioskCore
@testable import KioskWakeUp

final class WakeUpEventTests: XCTestCase {
    /// Polls the event's descriptor alone; true when readable.
    private func isReadable(_ event: WakeUpEvent, milliseconds: Int32 = 0) -> Bool {
        var fds = [event.pollDescriptor]
        return poll(&fds, 1, milliseconds) == 1 && fds[0].revents & Int16(POLLIN) != 0
    }

    func testANewEventIsNotReadable() throws {
        let event = try WakeUpEvent()
        XCTAssertFalse(isReadable(event))
        XCTAssertFalse(event.drain())
    }

    /// A signal given before the sleeper reaches `poll` is not lost: poll returns at once.
    func testASignalBeforePollWakesIt() throws {
        let event = try WakeUpEvent()
        event.signal()
        let started = Date()
        XCTAssertTrue(isReadable(event, milliseconds: 5_000))
        XCTAssertLessThan(Date().timeIntervalSince(started), 1)
    }

    func testASignalFromAnotherThreadWakesAPoll() throws {
        let event = try WakeUpEvent()
        let threads = ThreadGroup()
        threads.start(name: "kioskcam.test.signal") {
            Thread.sleep(forTimeInterval: 0.05)
            event.signal()
        }
        let started = Date()
        XCTAssertTrue(isReadable(event, milliseconds: 10_000))
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
        threads.wait()
    }

    func testSeveralSignalsCoalesceIntoOneWakeUp() throws {
        let event = try WakeUpEvent()
        for _ in 0..<10 { event.signal() }
        XCTAssertTrue(isReadable(event))
        XCTAssertTrue(event.drain())
        // One drain clears all ten: the next poll sleeps.
        XCTAssertFalse(isReadable(event))
        XCTAssertFalse(event.drain())
    }

    func testDrainClearsUntilTheNextSignal() throws {
        let event = try WakeUpEvent()
        event.signal()
        XCTAssertTrue(event.drain())
        XCTAssertFalse(isReadable(event, milliseconds: 20))
        event.signal()
        XCTAssertTrue(isReadable(event))
        XCTAssertTrue(event.drain())
    }

    func testTheDescriptorIsNonBlockingAndClosedOnExec() throws {
        let event = try WakeUpEvent()
        XCTAssertNotEqual(fcntl(event.fd, F_GETFL) & O_NONBLOCK, 0)
        XCTAssertNotEqual(fcntl(event.fd, F_GETFD) & FD_CLOEXEC, 0)
        XCTAssertEqual(event.pollDescriptor.fd, event.fd)
        XCTAssertEqual(event.pollDescriptor.events, Int16(POLLIN))
    }

    func testTheDescriptorIsClosedWithTheLastHolder() throws {
        var event: WakeUpEvent? = try WakeUpEvent()
        let fd = try XCTUnwrap(event?.fd)
        XCTAssertEqual(fcntl(fd, F_GETFD), FD_CLOEXEC)
        event = nil
        XCTAssertEqual(fcntl(fd, F_GETFD), -1)
    }
}
