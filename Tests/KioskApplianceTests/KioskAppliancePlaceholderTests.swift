import XCTest
@testable import KioskAppliance

final class KioskAppliancePlaceholderTests: XCTestCase {
    func testModuleLinks() { XCTAssertTrue(true) }
}
