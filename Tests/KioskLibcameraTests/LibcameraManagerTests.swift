import CLibcamera
import KioskCore
@testable import KioskLibcamera
import XCTest

/// The wrapper against the real libcamera on this machine (which lists no camera on a
/// build VM: the camera itself is proven in the HIL guest with vimc,
/// scripts/hil/scenarios/libcamera.sh).
final class LibcameraManagerTests: XCTestCase {
    func testVersionIsTheOneBuiltAgainst() {
        let parts = LibcameraManager.version.split(separator: ".").compactMap { Int($0) }
        XCTAssertEqual(parts.count, 3, LibcameraManager.version)
        XCTAssertEqual(parts.first, 0, "libcamera has no 1.x yet; a change here is a new API to check")
    }

    /// libcamera aborts the process on a second CameraManager; the shim shares one.
    func testManyManagersShareLibcamerasOne() throws {
        let first = try LibcameraManager()
        let second = try LibcameraManager()
        XCTAssertEqual(first.cameraIDs, second.cameraIDs)
        // After both are gone, a new one starts libcamera again.
        _ = consume first
        _ = consume second
        XCTAssertNoThrow(try LibcameraManager())
    }

    func testAnUnknownCameraIsNotFoundWithAHint() throws {
        let manager = try LibcameraManager()
        XCTAssertThrowsError(try LibcameraCamera(manager: manager, id: "no such camera",
                                                 request: CameraFormatRequest(size: FrameSize(width: 320, height: 240),
                                                                              framesPerSecond: 15))) { error in
            guard let error = error as? LibcameraError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.code, .notFound)
            XCTAssertTrue(error.description.contains("no such camera"), error.description)
            XCTAssertTrue(error.description.contains("kioskcam probe"), error.description)
        }
    }

    func testDescribingListsEveryCameraLibcameraLists() throws {
        let manager = try LibcameraManager()
        XCTAssertEqual(manager.describeCameras().map(\.id), manager.cameraIDs)
    }

    // MARK: Frames from mapped planes

    func testContiguousPlanesAreOneSpanToTheLastPlanesUsedBytes() {
        let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: 6 * 4 * 3 / 2, alignment: 64)
        defer { memory.deallocate() }
        let base = UnsafeRawPointer(memory.baseAddress!)
        // YUV420 6x4: Y 24 bytes, U 6, V 6, one after another.
        let planes = [UnsafeRawBufferPointer(start: base, count: 24), UnsafeRawBufferPointer(start: base + 24, count: 6),
                      UnsafeRawBufferPointer(start: base + 30, count: 6)]
        let span = LibcameraCamera.span(of: planes)
        XCTAssertEqual(span?.baseAddress, base)
        XCTAssertEqual(span?.count, 36)
        // A last plane filled short gives a short span (the converter then drops the frame).
        let short = [planes[0], planes[1], UnsafeRawBufferPointer(start: base + 30, count: 2)]
        XCTAssertEqual(LibcameraCamera.span(of: short)?.count, 32)
        XCTAssertNil(LibcameraCamera.span(of: []))
    }

    func testTimestampsInTheFutureOrZeroAreNow() {
        let now = MonotonicInstant(nanoseconds: 5_000_000_000)
        XCTAssertEqual(LibcameraCamera.timestamp(4_000_000_000, now: now), MonotonicInstant(nanoseconds: 4_000_000_000))
        XCTAssertEqual(LibcameraCamera.timestamp(0, now: now), now)
        XCTAssertEqual(LibcameraCamera.timestamp(6_000_000_000, now: now), now)
        XCTAssertEqual(LibcameraCamera.timestamp(UInt64.max, now: now), now)
    }
}
