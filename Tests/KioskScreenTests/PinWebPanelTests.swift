import Foundation
import KioskCore
@testable import KioskFramebuffer
@testable import KioskScreen
import KioskTestSupport
import XCTest

/// The lock screen tells where the web app is: a QR code a real reader (zbarimg) decodes to
/// the URL, beside the PIN pad on a landscape screen; no panel where the pad leaves no room.
final class PinWebPanelTests: XCTestCase {
    private let info = ScreenWebInfo(url: "https://192.168.1.20:8443/",
                                     fingerprint: "86:A2:" + Array(repeating: "0F", count: 30).joined(separator: ":"))

    /// What zbarimg reads in the screenshot (nil: no code found).
    private func decoded(_ renderer: ScreenRenderer, _ name: String) throws -> String? {
        let zbarimg = try requiredProgram("zbarimg", package: "zbar-tools")
        let path = NSTemporaryDirectory() + "kioskcam-\(name).png"
        try Data(renderer.screenshotPNG()).write(to: URL(fileURLWithPath: path))
        let output = try Tool.run(zbarimg, ["--raw", "-q", "-Sbinary", path], allowFailure: true)
        // 4: no code in the picture.
        XCTAssertTrue(output.status == 0 || output.status == 4, "zbarimg \(path): \(output.status) \(output.stderr)")
        return output.status == 0 ? output.stdout.trimmingCharacters(in: .newlines) : nil
    }

    func testTheLockScreenShowsTheWebAddressAsAQRCodeAReaderDecodes() throws {
        let renderer = try ScreenRenderer(framebuffer: Framebuffer.memory(size: ScreenSize(width: 800, height: 480), format: .xrgb8888),
                                          rotation: .none)
        let panel = try XCTUnwrap(renderer.layout.pinWebPanel, "800x480 has room beside the pad")
        XCTAssertLessThanOrEqual(panel.maxX, renderer.layout.pinKeys.map(\.rect.x).min() ?? 0, "the panel stays left of the keys")
        var model = ScreenScenes.pinModel()
        renderer.render(model)
        XCTAssertNil(try decoded(renderer, "pin-no-web"), "no code while the web app is off")
        model.web = info
        renderer.render(model)
        XCTAssertEqual(try decoded(renderer, "pin-web"), info.url)
    }

    func testAPortraitScreenHasNoRoomAndDrawsNoPanel() throws {
        let renderer = try ScreenRenderer(framebuffer: Framebuffer.memory(size: ScreenSize(width: 800, height: 480), format: .xrgb8888),
                                          rotation: .quarter)
        XCTAssertNil(renderer.layout.pinWebPanel, "\(renderer.size)")
        var model = ScreenScenes.pinModel()
        model.web = info
        renderer.render(model)
        XCTAssertNil(try decoded(renderer, "pin-web-portrait"))
    }

    func testTheFingerprintIsShownInFourLinesOfSixteenDigits() {
        let lines = ScreenRenderer.fingerprintLines(info.fingerprint ?? "")
        XCTAssertEqual(lines.count, 4)
        XCTAssertEqual(lines.first, "86A2 0F0F 0F0F 0F0F")
        XCTAssertTrue(lines.allSatisfy { $0.count == 19 }, "\(lines)")
        XCTAssertEqual(ScreenRenderer.fingerprintLines(""), [])
    }
}
