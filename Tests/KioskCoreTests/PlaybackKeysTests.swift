import KioskCore
import XCTest

final class PlaybackKeysTests: XCTestCase {
    private func key(_ character: Character, at volume: Double = 0.5) -> PlaybackKeyAction? {
        PlaybackKeys.action(for: character.asciiValue ?? 0, volume: volume)
    }

    func testSpacePausesQStopsOtherKeysDoNothing() {
        XCTAssertEqual(key(" "), .togglePause)
        XCTAssertEqual(key("q"), .stop)
        XCTAssertEqual(key("Q"), .stop)
        for other: Character in ["a", "\n", "\u{1B}", "[", "A", "0", "p"] {
            XCTAssertNil(key(other), "\(other.unicodeScalars.first?.value ?? 0)")
        }
    }

    func testPlusAndMinusStepATenthOnTheTenthsWithinZeroAndOne() {
        XCTAssertEqual(key("+"), .volume(0.6))
        XCTAssertEqual(key("="), .volume(0.6), "+ without shift")
        XCTAssertEqual(key("-"), .volume(0.4))
        XCTAssertEqual(key("_"), .volume(0.4))
        XCTAssertEqual(key("+", at: 0.55), .volume(0.6), "onto the tenths, not 0.65")
        XCTAssertEqual(key("-", at: 0.55), .volume(0.5))
        XCTAssertEqual(key("+", at: 1), .volume(1), "never louder than as recorded")
        XCTAssertEqual(key("-", at: 0), .volume(0))
        XCTAssertEqual(key("-", at: 0.05), .volume(0))
        XCTAssertEqual(key("+", at: .nan), .volume(0.1), "a volume that is no number counts as silence")
    }

    func testTenPressesGoFromSilenceToFullAndBack() {
        var volume = 0.0
        for _ in 0..<10 {
            guard case .volume(let next)? = PlaybackKeys.action(for: UInt8(ascii: "+"), volume: volume) else { return XCTFail() }
            volume = next
        }
        XCTAssertEqual(volume, 1)
        for _ in 0..<10 {
            guard case .volume(let next)? = PlaybackKeys.action(for: UInt8(ascii: "-"), volume: volume) else { return XCTFail() }
            volume = next
        }
        XCTAssertEqual(volume, 0)
    }
}
