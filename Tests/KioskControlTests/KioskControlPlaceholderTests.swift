import XCTest
@testable import KioskControl

final class KioskControlPlaceholderTests: XCTestCase {
    func testModuleLinks() { XCTAssertTrue(true) }
}
