import Glibc
import XCTest

@testable import KioskMedia

/// How a salvage re-mux's muxer errors are classed: found by FuzzSalvage (scripts/fuzz).
final class MediaSalvageMuxingErrorTests: XCTestCase {
    /// AVERROR_INVALIDDATA, FFERRTAG('I','N','D','A').
    let invalidData: Int32 = -0x4144_4E49

    private func code(_ result: Int32) -> MediaError.Code? {
        do {
            try MediaSalvage.checkMuxing(result, .io, "salvage: write packet", input: "in.mp4.part", output: "in.mp4.part.salvage")
            return nil
        } catch {
            return error.code
        }
    }

    /// A malformed packet in a damaged file made the muxer answer INVALIDDATA, which was
    /// taken for a write error that may pass: the file stayed in the temp area and was
    /// salvaged again at the next two starts. Only what the storage or the machine says
    /// may pass; every other refusal is about the file, and quarantines it at once.
    func testOnlyTheStoragesAndTheMachinesErrorsMayPass() {
        XCTAssertEqual(MediaError.describe(invalidData), "Invalid data found when processing input")
        XCTAssertEqual(code(invalidData), .invalidInput)
        XCTAssertEqual(code(-EINVAL), .invalidInput)
        XCTAssertEqual(code(-ENOSPC), .diskFull)
        for errno in [EIO, EDQUOT, EROFS, EFBIG, ENOMEM, EINTR, EAGAIN, ENODEV, ENXIO] {
            XCTAssertEqual(code(-errno), .io, "errno \(errno)")
        }
        XCTAssertNil(code(0))
    }
}
