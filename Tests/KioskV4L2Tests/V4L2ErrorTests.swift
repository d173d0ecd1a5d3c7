import Foundation
import KioskCore
import KioskTestSupport
import SystemPackage
import XCTest
@testable import KioskV4L2

/// The errors a user meets on a machine without (the right) camera: each names the
/// device and the operation and says what to do. This host has no /dev/video*, so these
/// run against the real kernel's answers for missing nodes, /dev/null, files and folders.
final class V4L2ErrorTests: XCTestCase {
    let request = VideoFormat(size: FrameSize(width: 640, height: 480), pixelFormat: .yuyv, framesPerSecond: 30)

    func openError(_ path: String, file: StaticString = #filePath, line: UInt = #line) -> V4L2Error? {
        do {
            let device = try V4L2Device(path: path)
            XCTFail("\(path) opened as a V4L2 device: \(device.capabilities)", file: file, line: line)
            return nil
        } catch {
            return error
        }
    }

    func testMissingDeviceSaysHowToFindCameras() throws {
        let error = try XCTUnwrap(openError("/dev/video99"))
        XCTAssertEqual(error.code, .noSuchDevice)
        XCTAssertEqual(error.errno, ENOENT)
        XCTAssertEqual(error.call, "open")
        XCTAssertEqual(error.subject, "/dev/video99")
        let text = error.description
        XCTAssertTrue(text.hasPrefix("open failed for /dev/video99: No such file or directory (ENOENT)"), text)
        XCTAssertTrue(text.contains("`kioskcam probe`"), text)
        XCTAssertTrue(text.contains("`v4l2-ctl --list-devices`"), text)
        XCTAssertTrue(text.contains("set camera.source to the right /dev/videoN"), text)
    }

    func testCameraOnMissingDeviceThrowsTheSameError() {
        XCTAssertThrowsError(try V4L2Camera(path: "/dev/video99", request: request)) { error in
            XCTAssertEqual((error as? V4L2Error)?.code, .noSuchDevice, "\(error)")
        }
    }

    func testDevNullIsNotAVideoDevice() throws {
        let error = try XCTUnwrap(openError("/dev/null"))
        XCTAssertEqual(error.code, .notAVideoDevice)
        XCTAssertEqual(error.call, "VIDIOC_QUERYCAP")
        XCTAssertEqual(error.errno, ENOTTY)
        XCTAssertTrue(error.description.contains("not a V4L2 device"), error.description)
        XCTAssertTrue(error.description.contains("/dev/null is not a V4L2 video device"), error.description)
        XCTAssertThrowsError(try V4L2Camera(path: "/dev/null", request: request)) { error in
            XCTAssertEqual((error as? V4L2Error)?.code, .notAVideoDevice, "\(error)")
        }
    }

    func testRegularFileAndFolderAreNotVideoDevices() throws {
        let folder = TemporaryDirectory()
        let file = folder.path + "/video0"
        try Data("not a camera".utf8).write(to: URL(fileURLWithPath: file))
        XCTAssertEqual(openError(file)?.code, .notAVideoDevice)
        let directoryError = try XCTUnwrap(openError(folder.path))
        XCTAssertEqual(directoryError.code, .notAVideoDevice)
        XCTAssertEqual(directoryError.errno, EISDIR)
        XCTAssertTrue(directoryError.description.contains("give a device node such as /dev/video0"), directoryError.description)
    }

    func testEveryErrnoGetsItsHint() {
        func error(_ errno: Errno, _ operation: String = "VIDIOC_S_FMT") -> V4L2Error {
            V4L2Error(path: "/dev/video0", operation: operation, errno: errno)
        }
        let busy = error(.resourceBusy)
        XCTAssertEqual(busy.code, .busy)
        XCTAssertTrue(busy.hint?.hasPrefix("another process holds the camera — stop it") ?? false, busy.description)
        XCTAssertTrue(busy.description.contains("`fuser /dev/video0`"), busy.description)
        XCTAssertTrue(busy.description.contains("(EBUSY)"), busy.description)
        let denied = error(.permissionDenied, "open")
        XCTAssertEqual(denied.code, .permissionDenied)
        XCTAssertTrue(denied.description.contains("`video` group"), denied.description)
        let gone = error(.operationNotSupportedByDevice, "VIDIOC_DQBUF")
        XCTAssertEqual(gone.code, .unplugged)
        XCTAssertTrue(gone.description.contains("The camera was unplugged"), gone.description)
        XCTAssertTrue(gone.description.contains("(ENODEV)"), gone.description)
        XCTAssertEqual(error(.ioError).code, .unplugged)
        XCTAssertEqual(error(.invalidArgument).code, .rejected)
        XCTAssertEqual(error(.inappropriateIOCTLForDevice, "VIDIOC_S_PARM").code, .system)
        XCTAssertTrue(error(.inappropriateIOCTLForDevice, "VIDIOC_S_PARM").description.contains("does not support VIDIOC_S_PARM"))
        XCTAssertEqual(error(.noMemory).code, .system)
        // Sentences: the hint starts with a capital after the period.
        XCTAssertTrue(busy.description.contains(". Another process"), busy.description)
    }

    func testPermissionDeniedOnARealFile() throws {
        guard getuid() != 0 else { throw XCTSkip("root opens any file; EACCES cannot happen here") }
        let folder = TemporaryDirectory()
        let file = folder.path + "/video0"
        XCTAssertTrue(FileManager.default.createFile(atPath: file, contents: Data(), attributes: [.posixPermissions: 0]))
        XCTAssertEqual(openError(file)?.code, .permissionDenied)
    }

    func testStreamEndsSayWhatHappened() {
        let unplugged = V4L2Camera.end(for: V4L2Error(path: "/dev/video0", operation: "VIDIOC_DQBUF", errno: .operationNotSupportedByDevice))
        guard case .failed(let text) = unplugged else { return XCTFail("\(unplugged)") }
        XCTAssertTrue(text.hasPrefix("camera unplugged (ENODEV)"), text)
        guard case .failed(let io) = V4L2Camera.end(for: V4L2Error(path: "/dev/video0", operation: "VIDIOC_DQBUF", errno: .ioError)) else {
            return XCTFail()
        }
        XCTAssertTrue(io.contains("EIO"), io)
        XCTAssertEqual(V4L2Camera.seconds(5), "5 s")
        XCTAssertEqual(V4L2Camera.seconds(2.5), "2.5 s")
    }

    func testTimestampsOnlyFromTheMonotonicClock() {
        let now = MonotonicInstant(nanoseconds: 100_000_000_000)
        let monotonic: UInt32 = 0x2000, unknown: UInt32 = 0, copied: UInt32 = 0x4000
        XCTAssertEqual(CaptureClock.instant(kind: monotonic, seconds: 99, microseconds: 500_000, now: now),
                       MonotonicInstant(nanoseconds: 99_500_000_000))
        XCTAssertNil(CaptureClock.instant(kind: unknown, seconds: 99, microseconds: 0, now: now))
        XCTAssertNil(CaptureClock.instant(kind: copied, seconds: 99, microseconds: 0, now: now))
        XCTAssertNil(CaptureClock.instant(kind: monotonic, seconds: 0, microseconds: 0, now: now), "unstamped")
        XCTAssertNil(CaptureClock.instant(kind: monotonic, seconds: 101, microseconds: 0, now: now), "from the future")
    }

    func testFourCC() {
        XCTAssertEqual(FourCC("YUYV")?.rawValue, 0x5659_5559)
        XCTAssertEqual(FourCC("MJPG")?.rawValue, 0x4750_4A4D)
        XCTAssertEqual(FourCC(rawValue: 0x5659_5559).description, "YUYV")
        XCTAssertEqual(FourCC("Y10")?.rawValue, FourCC("Y10 ")?.rawValue)
        XCTAssertEqual(FourCC("Y10")?.description, "Y10")
        XCTAssertEqual(FourCC(rawValue: 0x5659_5559 | 1 << 31).description, "YUYV-BE")
        XCTAssertNil(FourCC("TOOLONG"))
        XCTAssertNil(FourCC(""))
        XCTAssertNil(FourCC("ÄÖ"))
        XCTAssertEqual(FourCC(rawValue: 0x0000_0001).description, "?")  // unprintable bytes, trailing NULs shown as ?
    }

    /// EBUSY, EACCES and ENOENT keep the code and the hint they had before the device
    /// errors took one shape (`DeviceError`); the name comes from the one errno table.
    func testBusyDeniedAndMissingKeepTheirCodeAndHint() {
        let cases: [(Errno, V4L2Error.Code, String)] = [
            (.resourceBusy, .busy, "another process holds the camera — stop it (e.g. `fuser /dev/video0`)"),
            (.permissionDenied, .permissionDenied,
             "add the user to the `video` group (`sudo usermod -aG video $USER`, then log in again)"),
            (.noSuchFileOrDirectory, .noSuchDevice,
             "no such camera: list cameras with `kioskcam probe` or `v4l2-ctl --list-devices`; set camera.source to the right /dev/videoN"),
        ]
        for (errno, code, hint) in cases {
            let error = V4L2Error(path: "/dev/video0", operation: "open", errno: errno)
            XCTAssertEqual(error.code, code, "\(errno)")
            XCTAssertEqual(error.hint, hint, "\(errno)")
            XCTAssertEqual(error.errno, errno.rawValue)
            XCTAssertEqual(error.subject, "/dev/video0")
            XCTAssertTrue(error.description.hasPrefix("open failed for /dev/video0: \(errno.description) (\(ErrnoName.of(errno.rawValue))). "),
                          error.description)
        }
    }
}
