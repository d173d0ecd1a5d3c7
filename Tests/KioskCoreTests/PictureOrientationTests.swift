import KioskCore
import XCTest

/// Turning a plane for a camera mounted on its side: each rotation and mirror puts the
/// right pixel in each place, and bad sizes write nothing.
final class PictureOrientationTests: XCTestCase {
    // 3 wide, 2 high:  a b c
    //                  d e f
    private let plane: [UInt8] = Array("abcdef".utf8)

    private func turned(_ orientation: PictureOrientation) -> String? {
        let size = orientation.turnedSize(FrameSize(width: 3, height: 2))
        var out = [UInt8](repeating: 0, count: size.width * size.height)
        let ok = plane.withUnsafeBytes { source in
            out.withUnsafeMutableBytes { orientation.turn(plane: source, width: 3, height: 2, sourceStride: 3, into: $0, destinationStride: size.width) }
        }
        guard ok else { return nil }
        return stride(from: 0, to: out.count, by: size.width).map { String(decoding: out[$0..<$0 + size.width], as: UTF8.self) }
            .joined(separator: "/")
    }

    func testEachRotationClockwiseAndMirrored() {
        XCTAssertEqual(turned(.upright), "abc/def")
        XCTAssertEqual(turned(PictureOrientation(rotation: .quarter)), "da/eb/fc")
        XCTAssertEqual(turned(PictureOrientation(rotation: .half)), "fed/cba")
        XCTAssertEqual(turned(PictureOrientation(rotation: .threeQuarters)), "cf/be/ad")
        XCTAssertEqual(turned(PictureOrientation(mirror: true)), "cba/fed")
        // Turned first, then flipped left to right as the display matrix does.
        XCTAssertEqual(turned(PictureOrientation(rotation: .quarter, mirror: true)), "ad/be/cf")
        XCTAssertEqual(PictureOrientation(rotation: .threeQuarters).turnedSize(FrameSize(width: 640, height: 480)),
                       FrameSize(width: 480, height: 640))
        XCTAssertTrue(PictureOrientation.upright.isUpright)
        XCTAssertFalse(PictureOrientation(mirror: true).isUpright)
    }

    func testFourBytePixelsMoveWhole() {
        // 2 wide, 1 high, BGRA: pixel A then pixel B; a quarter turn stands them on end.
        let pixels: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8]
        var out = [UInt8](repeating: 0, count: 8)
        let ok = pixels.withUnsafeBytes { source in
            out.withUnsafeMutableBytes {
                PictureOrientation(rotation: .quarter).turn(plane: source, width: 2, height: 1, sourceStride: 8, into: $0,
                                                            destinationStride: 4, bytesPerPixel: 4)
            }
        }
        XCTAssertTrue(ok)
        XCTAssertEqual(out, [1, 2, 3, 4, 5, 6, 7, 8], "A on top of B")
        let mirrored = pixels.withUnsafeBytes { source -> [UInt8] in
            var out = [UInt8](repeating: 0, count: 8)
            out.withUnsafeMutableBytes {
                _ = PictureOrientation(mirror: true).turn(plane: source, width: 2, height: 1, sourceStride: 8, into: $0,
                                                          destinationStride: 8, bytesPerPixel: 4)
            }
            return out
        }
        XCTAssertEqual(mirrored, [5, 6, 7, 8, 1, 2, 3, 4])
        XCTAssertFalse(pixels.withUnsafeBytes { source in
            out.withUnsafeMutableBytes { PictureOrientation.upright.turn(plane: source, width: 2, height: 1, sourceStride: 8, into: $0,
                                                                          destinationStride: 8, bytesPerPixel: 3) }
        })
    }

    func testStridesAndShortBuffersAreRefused() {
        let orientation = PictureOrientation(rotation: .quarter)
        var out = [UInt8](repeating: 0, count: 6)
        plane.withUnsafeBytes { source in
            out.withUnsafeMutableBytes { destination in
                XCTAssertFalse(orientation.turn(plane: source, width: 3, height: 2, sourceStride: 2, into: destination, destinationStride: 2))
                XCTAssertFalse(orientation.turn(plane: source, width: 3, height: 3, sourceStride: 3, into: destination, destinationStride: 3))
                XCTAssertFalse(orientation.turn(plane: source, width: 3, height: 2, sourceStride: 3, into: destination, destinationStride: 1))
                XCTAssertFalse(orientation.turn(plane: source, width: 0, height: 2, sourceStride: 3, into: destination, destinationStride: 2))
            }
        }
        XCTAssertEqual(out, [0, 0, 0, 0, 0, 0], "nothing written")
    }
}
