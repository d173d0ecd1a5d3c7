import XCTest
@testable import KioskPIN

final class KioskPINPlaceholderTests: XCTestCase {
    func testModuleLinks() { XCTAssertTrue(true) }
}
