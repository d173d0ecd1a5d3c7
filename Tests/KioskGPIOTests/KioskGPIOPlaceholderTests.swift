import XCTest
@testable import KioskGPIO

final class KioskGPIOPlaceholderTests: XCTestCase {
    func testModuleLinks() { XCTAssertTrue(true) }
}
