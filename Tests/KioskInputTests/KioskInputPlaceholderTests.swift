import XCTest
@testable import KioskInput

final class KioskInputPlaceholderTests: XCTestCase {
    func testModuleLinks() { XCTAssertTrue(true) }
}
