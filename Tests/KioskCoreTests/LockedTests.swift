import Foundation
import XCTest
@testable import KioskCore

final class LockedTests: XCTestCase {
    func testWithLockReadsAndChangesTheState() {
        let state = Locked([1, 2])
        state.withLock { $0.append(3) }
        XCTAssertEqual(state.withLock { $0 }, [1, 2, 3])
        XCTAssertEqual(state.withLock { $0.removeFirst() }, 1)
        XCTAssertEqual(state.withLock { $0 }, [2, 3])
    }

    func testWithLockRethrowsTheBodysErrorAndReleasesTheLock() {
        struct Refused: Error {}
        let state = Locked(0)
        XCTAssertThrowsError(try state.withLock { (value: inout Int) throws(Refused) in
            value = 7
            throw Refused()
        }) { XCTAssertTrue($0 is Refused) }
        // Not deadlocked, and the change before the throw stands.
        XCTAssertEqual(state.withLock { $0 }, 7)
    }

    /// Four threads taking turns: every increment counts (and under `scripts/sanitize
    /// thread` no report — the lock order is visible to ThreadSanitizer, contended or not).
    func testContendedIncrementsAreNeitherLostNorReportedAsRaces() {
        let state = Locked(0)
        let threads = ThreadGroup()
        for index in 0..<4 {
            threads.start(name: "kioskcam.test.locked.\(index)") {
                for _ in 0..<20_000 { state.withLock { $0 += 1 } }
            }
        }
        threads.wait()
        XCTAssertEqual(state.withLock { $0 }, 80_000)
    }

    /// Memory written outside the lock and handed on under it (a pooled buffer, a frame)
    /// is ordered by the lock: the reader sees every byte, and TSan sees the order.
    func testMemoryHandedOnUnderTheLockIsSeenWhole() {
        let pool = BufferPool(bufferCapacity: 4096, count: 4)
        let handOff = Locked<[MediaBuffer]>([])
        let threads = ThreadGroup()
        let rounds = 200
        threads.start(name: "kioskcam.test.writer") {
            var round = 0
            while round < rounds {
                // Blocks come back from the reader through the pool: reused memory.
                guard let buffer = pool.take() else { usleep(100); continue }
                buffer.mutableBytes.initializeMemory(as: UInt8.self, repeating: UInt8(truncatingIfNeeded: round))
                buffer.byteCount = buffer.capacity
                handOff.withLock { $0.append(buffer) }
                handOff.wakeWaiters()
                round += 1
            }
        }
        var seen = 0
        while seen < rounds {
            let buffer = handOff.withLock(waitingUntil: { !$0.isEmpty }) { $0.removeFirst() }
            XCTAssertTrue(buffer.bytes.allSatisfy { $0 == UInt8(truncatingIfNeeded: seen) })
            buffer.doneReading()
            seen += 1
        }
        threads.wait()
    }

    func testWaitingUntilReturnsOnceAnotherThreadMakesTheStateReady() {
        let state = Locked(false)
        let threads = ThreadGroup()
        threads.start(name: "kioskcam.test.ready") {
            Thread.sleep(forTimeInterval: 0.05)
            state.withLock { $0 = true }
            state.wakeWaiters()
        }
        let started = Date()
        let ready = state.withLock(waitingUntil: { $0 }, deadline: Date(timeIntervalSinceNow: 10)) { $0 }
        XCTAssertTrue(ready)
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
        threads.wait()
    }

    func testWaitingUntilGivesUpAtTheDeadlineAndStillRunsTheBody() {
        let state = Locked(0)
        let started = Date()
        let value = state.withLock(waitingUntil: { $0 > 0 }, deadline: Date(timeIntervalSinceNow: 0.1)) { value -> Int in
            value -= 1
            return value
        }
        XCTAssertEqual(value, -1)
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 0.09)
    }

    func testWaitingUntilDoesNotWaitWhenTheStateIsReady() {
        let state = Locked(1)
        let started = Date()
        XCTAssertEqual(state.withLock(waitingUntil: { $0 == 1 }, deadline: Date(timeIntervalSinceNow: 5)) { $0 }, 1)
        XCTAssertLessThan(Date().timeIntervalSince(started), 1)
    }

    /// A wake-up for another condition is not mistaken for this one: the waiter looks
    /// at the state and waits on.
    func testAWakeUpWithoutTheAwaitedStateKeepsWaiting() {
        let state = Locked(0)
        let threads = ThreadGroup()
        threads.start(name: "kioskcam.test.steps") {
            for _ in 0..<3 {
                Thread.sleep(forTimeInterval: 0.02)
                state.withLock { $0 += 1 }
                state.wakeWaiters()
            }
        }
        XCTAssertEqual(state.withLock(waitingUntil: { $0 == 3 }, deadline: Date(timeIntervalSinceNow: 10)) { $0 }, 3)
        threads.wait()
    }
}

final class ThreadGroupTests: XCTestCase {
    func testWaitReturnsAfterEveryThreadFinished() {
        let threads = ThreadGroup()
        let done = Locked(0)
        for index in 0..<3 {
            threads.start(name: "kioskcam.test.group.\(index)") {
                Thread.sleep(forTimeInterval: 0.02 * Double(index))
                done.withLock { $0 += 1 }
            }
        }
        XCTAssertTrue(threads.wait(timeout: 10))
        XCTAssertEqual(done.withLock { $0 }, 3)
        XCTAssertFalse(threads.isRunning)
    }

    func testWaitReturnsAtOnceWhenNothingRuns() {
        XCTAssertTrue(ThreadGroup().wait(timeout: 0))
    }

    func testWaitTimesOutWhileAThreadStillRuns() {
        let threads = ThreadGroup()
        let release = Locked(false)
        threads.start(name: "kioskcam.test.blocked") {
            release.withLock(waitingUntil: { $0 }) { _ in }
        }
        XCTAssertFalse(threads.wait(timeout: 0.05))
        XCTAssertTrue(threads.isRunning)
        release.withLock { $0 = true }
        release.wakeWaiters()
        XCTAssertTrue(threads.wait(timeout: 10))
    }

    func testAThreadKnowsItIsOneOfTheGroup() {
        let threads = ThreadGroup()
        let answer = Locked<Bool?>(nil)
        threads.start(name: "kioskcam.test.self") { answer.withLock { $0 = threads.includesCurrentThread } }
        threads.wait()
        XCTAssertEqual(answer.withLock { $0 }, true)
        XCTAssertFalse(threads.includesCurrentThread)
    }

    /// The name `top -H`, `ps -L` and gdb show (the kernel keeps 15 bytes of it).
    func testTheThreadHasItsName() {
        let threads = ThreadGroup()
        let name = Locked<String?>(nil)
        threads.start(name: "kioskcam.named") {
            let found = try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)
            name.withLock { $0 = found?.trimmingCharacters(in: .newlines) }
        }
        threads.wait()
        XCTAssertEqual(name.withLock { $0 }, "kioskcam.named")
    }
}
