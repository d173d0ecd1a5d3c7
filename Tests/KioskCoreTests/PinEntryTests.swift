import KioskCore
import XCTest

final class PinEntryTests: XCTestCase {
    func testDigitsCompleteAtTheFourthAndTheEntryClears() {
        var entry = PinEntry()
        XCTAssertNil(entry.press(.digit(2)))
        XCTAssertNil(entry.press(.digit(5)))
        XCTAssertNil(entry.press(.digit(8)))
        XCTAssertEqual(entry.count, 3)
        XCTAssertEqual(entry.press(.digit(0)), "2580")
        XCTAssertTrue(entry.isEmpty, "ready for the next attempt")
    }

    func testDeleteRemovesTheLastDigit() {
        var entry = PinEntry()
        XCTAssertNil(entry.press(.delete), "del on an empty entry does nothing")
        XCTAssertEqual(entry.count, 0)
        _ = entry.press(.digit(1))
        _ = entry.press(.digit(9))
        XCTAssertNil(entry.press(.delete))
        XCTAssertEqual(entry.count, 1)
        _ = entry.press(.digit(7))
        _ = entry.press(.digit(3))
        XCTAssertEqual(entry.press(.digit(4)), "1734", "the deleted 9 is gone")
    }

    func testClearAndDescriptionNeverShowsDigits() {
        var entry = PinEntry()
        _ = entry.press(.digit(6))
        _ = entry.press(.digit(6))
        XCTAssertFalse(entry.description.contains("66"))
        XCTAssertEqual(entry.description, "PIN entry with 2 of 4 digits")
        entry.clear()
        XCTAssertEqual(entry.count, 0)
        XCTAssertNil(entry.press(.digit(12)), "not a key on the pad")
        XCTAssertEqual(entry.count, 0)
    }
}
