import Foundation
import KioskCore
@testable import KioskScreen
import KioskTestSupport
import XCTest

/// The renderer against a real framebuffer driver: vfb in the HIL guest
/// (scripts/hil/scenarios/screen.sh sets 800x480x16, then 480x800x32). Skipped unless
/// `KIOSKCAM_HIL_FB` names the device:
///
///     KIOSKCAM_HIL_FB=/dev/fb0 kioskcamPackageTests.xctest KioskScreenTests.FramebufferHILTests
///
/// Each picture is read back by a separate `kioskcam screenshot` process while this one
/// still holds the device open (as the daemon would), and must match the render exactly.
final class FramebufferHILTests: XCTestCase {
    var path = ""
    var folder: TemporaryDirectory!

    override func setUpWithError() throws {
        guard let path = ProcessInfo.processInfo.environment["KIOSKCAM_HIL_FB"], !path.isEmpty else {
            throw XCTSkip("set KIOSKCAM_HIL_FB=/dev/fbN to run against a real framebuffer (scripts/hil)")
        }
        self.path = path
        folder = TemporaryDirectory("kioskcam-fb-hil")
    }

    func testDeviceReportsWhatFbsetSet() throws {
        let framebuffer = try Framebuffer.device(path: path)
        defer { framebuffer.close() }
        guard case .device(_, let driver) = framebuffer.backing else { return XCTFail("\(framebuffer.backing)") }
        XCTAssertEqual(driver, "Virtual FB")
        if let expected = ProcessInfo.processInfo.environment["KIOSKCAM_HIL_FB_EXPECT"] {
            XCTAssertEqual("\(framebuffer.size) \(framebuffer.format)", expected, framebuffer.description)
        }
        XCTAssertGreaterThanOrEqual(framebuffer.stride, framebuffer.size.width * framebuffer.format.bytesPerPixel)
        print("framebuffer: \(framebuffer)")
    }

    func testLiveAndPinScreensReadBackThroughKioskcamScreenshot() throws {
        let framebuffer = try Framebuffer.device(path: path)
        defer { framebuffer.close() }
        let renderer = try ScreenRenderer(framebuffer: framebuffer, rotation: .none)
        try renderer.updatePreview(ScreenScenes.testPatternFrame(.nv12))
        renderer.render(ScreenScenes.liveModel())
        try checkScreenshot(renderer, name: "live")

        // Digits one by one: each render copies only what changed, and the panel matches.
        var model = ScreenScenes.pinModel()
        model.pinDigitsEntered = 0
        model.pinMessage = nil
        model.pressedTarget = nil
        XCTAssertFalse(renderer.render(model).isEmpty)
        for digits in 1...3 {
            model.pinDigitsEntered = digits
            let damage = renderer.render(model)
            let pixels = damage.reduce(0) { $0 + $1.width * $1.height }
            XCTAssertGreaterThan(pixels, 0)
            XCTAssertLessThan(pixels, renderer.size.width * renderer.size.height / 10, "digit \(digits): \(damage)")
        }
        renderer.render(ScreenScenes.pinModel())
        try checkScreenshot(renderer, name: "pin")

        // Blank: black on the panel whether or not the driver can power it down (vfb cannot).
        renderer.render(ScreenScenes.blankModel())
        let rows = UnsafeRawBufferPointer(start: framebuffer.pixels, count: framebuffer.stride * framebuffer.size.height)
        let visibleBytes = framebuffer.size.width * framebuffer.format.bytesPerPixel
        let lit = (0..<framebuffer.size.height).filter { (row: Int) -> Bool in
            // Only the colour bits: a 32-bit layout may keep alpha bits set.
            let colour = framebuffer.format.red.mask | framebuffer.format.green.mask | framebuffer.format.blue.mask
            let start = row * framebuffer.stride
            if framebuffer.format.bytesPerPixel == 2 {
                return rows[start..<start + visibleBytes].contains { $0 != 0 }
            }
            return stride(from: start, to: start + visibleBytes, by: 4).contains { (offset: Int) -> Bool in
                rows.loadUnaligned(fromByteOffset: offset, as: UInt32.self) & colour != 0
            }
        }
        XCTAssertEqual(lit, [], "rows not black after blanking")
        renderer.render(ScreenScenes.pinModel())
    }

    /// `kioskcam screenshot` of the device, from another process, equals the render.
    private func checkScreenshot(_ renderer: ScreenRenderer, name: String) throws {
        let config = folder.path + "/kioskcam.toml"
        try Data().write(to: URL(fileURLWithPath: config))
        let output = folder.path + "/\(name).png"
        let result = try Tool.run(Package.kioskcamBinary, ["screenshot", "--config", config, "--framebuffer", path, "-o", output])
        XCTAssertEqual(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines), output)
        // Both PNGs come from the same encoder, so equal pixels give equal bytes; comparing
        // bytes keeps this quick in the guest, where a debug build runs under TCG.
        let fromScreenshot = try Data(contentsOf: URL(fileURLWithPath: output))
        let expected = try Data(renderer.screenshotPNG())
        XCTAssertTrue(fromScreenshot == expected, "\(name): kioskcam screenshot differs from the render")
        if fromScreenshot != expected {
            try expected.write(to: URL(fileURLWithPath: folder.path + "/\(name)-expected.png"))
        }
        if let results = ProcessInfo.processInfo.environment["HIL_RESULTS"] {
            try? FileManager.default.copyItem(atPath: output, toPath: "\(results)/\(name)-\(renderer.size)-\(renderer.framebuffer.format).png")
            if fromScreenshot != expected {
                try? expected.write(to: URL(fileURLWithPath: "\(results)/\(name)-\(renderer.size)-expected.png"))
            }
        }
    }
}
