import Foundation
import Glibc
import KioskCore
@testable import KioskFramebuffer
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

    /// Seconds since the test started, printed at each step: the guest runs a debug
    /// build under TCG, and a slow step should be visible in the log.
    private var started = DispatchTime.now().uptimeNanoseconds
    private func step(_ what: String) {
        print(String(format: "step %.1f s: %@", Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9, what))
        fflush(nil)  // every stream: stdout is buffered when it is a file
    }

    func testLiveAndPinScreensReadBackThroughKioskcamScreenshot() throws {
        started = DispatchTime.now().uptimeNanoseconds
        let framebuffer = try Framebuffer.device(path: path)
        defer { framebuffer.close() }
        let renderer = try ScreenRenderer(framebuffer: framebuffer, rotation: .none)
        step("opened \(framebuffer)")
        let frame = ScreenScenes.testPatternFrame(.nv12)
        step("test pattern drawn")
        try renderer.updatePreview(frame)
        step("preview scaled")
        renderer.render(ScreenScenes.liveModel())
        step("live screen rendered")
        try checkScreenshot(renderer, name: "live")
        step("live screen read back")

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
        step("PIN digits rendered")
        renderer.render(ScreenScenes.pinModel())
        try checkScreenshot(renderer, name: "pin")
        step("PIN screen read back")

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

    /// Runs a program with posix_spawn and waits for it, its output into `log`.
    /// Not Foundation's `Process`: in the guest it cannot make the CFSocket pair its run
    /// loop wants, and hangs waiting for the child.
    private func spawn(_ program: String, _ arguments: [String], log: String) throws -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        let result = posix_spawn(&pid, program, &actions, nil, argv, environ)
        guard result == 0 else { throw XCTSkip("cannot run \(program): \(String(cString: strerror(result)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        // WIFEXITED / WEXITSTATUS, which Swift does not import.
        return status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    }

    /// `kioskcam screenshot` of the device, from another process, equals the render.
    private func checkScreenshot(_ renderer: ScreenRenderer, name: String) throws {
        let config = folder.path + "/kioskcam.toml"
        try Data().write(to: URL(fileURLWithPath: config))
        let output = folder.path + "/\(name).png"
        let status = try spawn(Package.kioskcamBinary, ["screenshot", "--config", config, "--framebuffer", path, "-o", output],
                               log: folder.path + "/\(name)-screenshot.log")
        XCTAssertEqual(status, 0, (try? String(contentsOfFile: folder.path + "/\(name)-screenshot.log", encoding: .utf8)) ?? "")
        step("kioskcam screenshot ran")
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
