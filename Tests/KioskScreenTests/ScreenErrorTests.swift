import KioskCore
import SystemPackage
import XCTest
@testable import KioskFramebuffer
@testable import KioskScreen

/// The screen's classification of the kernel's answers, in the one error shape (`DeviceError`).
final class ScreenErrorTests: XCTestCase {
    /// EBUSY, EACCES and ENOENT keep the code and the hint they had before the device
    /// errors took one shape.
    func testBusyDeniedAndMissingKeepTheirCodeAndHint() {
        let cases: [(Errno, String, ScreenError.Code, String?)] = [
            (.resourceBusy, "/dev/fb0", .system, nil),
            (.permissionDenied, "/dev/fb0", .permissionDenied,
             "add the user to the `video` group (`sudo usermod -aG video $USER`, then log in again)"),
            (.permissionDenied, "/run/kioskcam/screen.fb", .permissionDenied, "check the file's permissions, or run as the daemon's user"),
            (.noSuchFileOrDirectory, "/dev/fb0", .notFound,
             "no such framebuffer: list them with `ls /dev/fb*`; set screen.framebuffer to one, or to \"auto\""),
            (.noSuchFileOrDirectory, "/run/kioskcam/screen.fb", .notFound,
             "the file-backed framebuffer does not exist: start the daemon, or set screen.framebuffer"),
        ]
        for (errno, path, code, hint) in cases {
            let error = ScreenError(path: path, operation: "open", errno: errno)
            XCTAssertEqual(error.code, code, "\(errno) \(path)")
            XCTAssertEqual(error.hint, hint, "\(errno) \(path)")
            XCTAssertEqual(error.errno, errno.rawValue)
            XCTAssertTrue(error.description.hasPrefix("open failed for \(path): \(errno.description) (\(ErrnoName.of(errno.rawValue)))"),
                          error.description)
        }
    }

    /// The screen used to print the errno's words without its name and the hint in lower
    /// case after a period; now it reads like every other device error.
    func testRendersLikeEveryDeviceError() {
        let error = ScreenError(path: "/dev/fb9", operation: "open", errno: .noSuchFileOrDirectory)
        XCTAssertEqual(error.description, "open failed for /dev/fb9: No such file or directory (ENOENT). "
                       + "No such framebuffer: list them with `ls /dev/fb*`; set screen.framebuffer to one, or to \"auto\".")
    }
}
