import XCTest
@testable import KioskScreen

final class KioskScreenPlaceholderTests: XCTestCase {
    func testModuleLinks() { XCTAssertTrue(true) }
}
