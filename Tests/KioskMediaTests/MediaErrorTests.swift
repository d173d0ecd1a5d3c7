import Glibc
import KioskCore
import XCTest
@testable import KioskMedia

/// FFmpeg's error codes in the one error shape (`DeviceError`): an `AVERROR(errno)` keeps
/// its errno and name, FFmpeg's own codes keep their words.
final class MediaErrorTests: XCTestCase {
    /// AVERROR_INVALIDDATA, FFERRTAG('I','N','D','A').
    let invalidData: Int32 = -0x4144_4E49

    private func error(_ averror: Int32, _ code: MediaError.Code = .io) -> MediaError? {
        do {
            try check(averror, code, "write packet", path: "/media/video/x.mp4")
            return nil
        } catch {
            return error
        }
    }

    /// EBUSY, EACCES and ENOENT keep the code the caller gave (FFmpeg's failures are
    /// classed by the step, not the errno); only ENOSPC is classed by the errno.
    func testBusyDeniedAndMissingKeepTheCallersCodeAndGainTheirName() throws {
        for (errno, name) in [(EBUSY, "EBUSY"), (EACCES, "EACCES"), (ENOENT, "ENOENT")] {
            let error = try XCTUnwrap(self.error(-errno))
            XCTAssertEqual(error.code, .io)
            XCTAssertNil(error.hint)
            XCTAssertEqual(error.errno, errno)
            XCTAssertEqual(error.description,
                           "write packet failed for /media/video/x.mp4: \(String(cString: strerror(errno))) (\(name)).")
        }
        let full = try XCTUnwrap(error(-ENOSPC))
        XCTAssertEqual(full.code, .diskFull)
        XCTAssertEqual(full.errno, ENOSPC)
        XCTAssertEqual(full.description, "write packet failed for /media/video/x.mp4: No space left on device (ENOSPC). "
                       + "The storage is full: free space or lower storage.retention/segment settings.")
        XCTAssertNil(error(0))
    }

    func testFFmpegsOwnCodesKeepTheirWordsWithoutAnErrno() throws {
        let error = try XCTUnwrap(self.error(invalidData, .invalidInput))
        XCTAssertNil(error.errno)
        XCTAssertEqual(error.systemMessage, "Invalid data found when processing input")
        XCTAssertEqual(error.description, "write packet failed for /media/video/x.mp4: Invalid data found when processing input.")
        XCTAssertEqual(MediaError.errno(of: -EIO), EIO)
        XCTAssertNil(MediaError.errno(of: invalidData))
        XCTAssertNil(MediaError.errno(of: 0))
    }
}
