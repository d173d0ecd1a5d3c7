import XCTest
@testable import KioskCore

final class DurationTextTests: XCTestCase {

    func testAcceptedForms() {
        let cases: [(String, Double)] = [
            ("10s", 10),
            ("1.5s", 1.5),
            ("250ms", 0.25),
            ("5m", 300),
            ("1h", 3600),
            ("1h30m", 5400),
            ("1m30s", 90),
            ("2h0m5s", 7205),
            ("90", 90),
            ("0", 0),
            ("0.5", 0.5),
            (" 2s ", 2),
            ("\t3m", 180),
            ("10S", 10),
            ("1H", 3600),
        ]
        for (text, seconds) in cases {
            guard let parsed = parseDuration(text) else {
                XCTFail("'\(text)' was rejected")
                continue
            }
            XCTAssertEqual(parsed, seconds, accuracy: 1e-9, "'\(text)'")
        }
    }

    func testMillisecondsAreNotMinutes() {
        XCTAssertEqual(parseDuration("1ms"), 0.001)
        XCTAssertEqual(parseDuration("1m"), 60)
        XCTAssertEqual(parseDuration("1m1ms") ?? -1, 60.001, accuracy: 1e-9)
    }

    func testRejections() {
        for text in ["", " ", "s", "ms", "10x", "-5s", "-5", "abc", "1.2.3s", "s10", "10 s", "1h30", "inf", "nan", "10s!"] {
            XCTAssertNil(parseDuration(text), "'\(text)' was accepted as \(String(describing: parseDuration(text)))")
        }
    }

    func testRejectsHexExponentsAndRepeatedUnits() {
        XCTAssertNil(parseDuration("0x10"))
        XCTAssertNil(parseDuration("1e3"))
        XCTAssertNil(parseDuration("1h1h"))
        XCTAssertEqual(parseDuration("1h2m3s"), 3723)
    }
}
