import KioskCore
import XCTest

/// systemd's watchdog is pinged only while every watched thread makes progress.
final class WatchdogGateTests: XCTestCase {
    private func at(_ seconds: Double) -> MonotonicInstant { MonotonicInstant(nanoseconds: Int64(seconds * 1e9)) }

    func testPingsWhileEveryThreadMoves() {
        var gate = WatchdogGate(names: ["encoder", "ui"], now: at(0))
        XCTAssertTrue(gate.observe([1, 1], now: at(0.5)).ping)
        XCTAssertFalse(gate.observe([2, 2], now: at(1.0)).ping, "at most once a second")
        XCTAssertTrue(gate.observe([3, 3], now: at(1.5)).ping)
    }

    /// The defect: pings came from a timer, so a stuck encoder went unnoticed.
    func testAStuckThreadStopsThePingsAndIsReportedOnce() {
        var gate = WatchdogGate(names: ["encoder", "ui"], now: at(0))
        XCTAssertTrue(gate.observe([1, 1], now: at(0.5)).ping)
        var pings = 0
        var stalled: [String] = []
        for step in 1...40 {
            let outcome = gate.observe([1, UInt64(1 + step)], now: at(0.5 + Double(step) * 0.5))
            if outcome.ping { pings += 1 }
            stalled += outcome.stalled.map(\.name)
        }
        XCTAssertEqual(pings, 0, "no ping while the encoder is stuck")
        XCTAssertEqual(stalled, ["encoder"], "reported once")
        let recovered = gate.observe([2, 50], now: at(21))
        XCTAssertEqual(recovered.recovered, ["encoder"])
        XCTAssertTrue(recovered.ping)
    }

    func testEveryThreadMustMoveSinceTheLastPing() {
        var gate = WatchdogGate(names: ["encoder", "ui"], now: at(0))
        XCTAssertTrue(gate.observe([1, 1], now: at(1)).ping)
        XCTAssertFalse(gate.observe([2, 1], now: at(2)).ping, "the UI loop has not moved since the ping")
        XCTAssertTrue(gate.observe([2, 2], now: at(3)).ping)
    }

    func testNoPartsMeansAPingAtEachInterval() {
        var gate = WatchdogGate(names: [], now: at(0))
        XCTAssertTrue(gate.observe([], now: at(1)).ping)
        XCTAssertTrue(gate.observe([], now: at(2)).ping)
    }
}
