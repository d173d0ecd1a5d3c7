import KioskCore
import XCTest
@testable import KioskV4L2

/// Copying frames out of padded V4L2 buffers into tightly packed ones.
final class FramePackingTests: XCTestCase {
    /// A source buffer whose byte at (plane, row, column) is recognisable, with padding
    /// bytes set to 0xEE so that any padding leaking into the output shows.
    func paddedSource(_ packing: FramePacking) -> [UInt8] {
        var bytes = [UInt8](repeating: 0xEE, count: packing.requiredSourceBytes)
        for (p, plane) in packing.planes.enumerated() {
            for row in 0..<plane.rows {
                for column in 0..<plane.rowBytes {
                    bytes[plane.sourceOffset + row * plane.sourceStride + column] = UInt8((p * 64 + row * 8 + column) % 0xE0)
                }
            }
        }
        return bytes
    }

    func packed(_ packing: FramePacking, _ source: [UInt8]) -> [UInt8]? {
        var output = [UInt8](repeating: 0, count: packing.packedByteCount)
        let written = source.withUnsafeBytes { src in output.withUnsafeMutableBytes { packing.copy(from: src, to: $0) } }
        return written.map { output.prefix($0).map { $0 } }
    }

    func testYUYVRowsLoseTheirPadding() throws {
        let packing = FramePacking(format: .yuyv, size: FrameSize(width: 6, height: 3), bytesPerLine: 16)
        XCTAssertFalse(packing.isTight)
        XCTAssertEqual(packing.planes.count, 1)
        XCTAssertEqual(packing.requiredSourceBytes, 16 * 2 + 12)
        let output = try XCTUnwrap(packed(packing, paddedSource(packing)))
        XCTAssertEqual(output.count, 6 * 3 * 2)
        XCTAssertFalse(output.contains(0xEE), "padding leaked: \(output)")
        XCTAssertEqual(Array(output[12..<14]), [8, 9])  // row 1 starts right after row 0's 12 bytes
    }

    func testYU12PlanesUseHalfTheStride() throws {
        let packing = FramePacking(format: .yuv420, size: FrameSize(width: 8, height: 4), bytesPerLine: 32)
        XCTAssertEqual(packing.planes.map(\.sourceOffset), [0, 128, 128 + 32])
        XCTAssertEqual(packing.planes.map(\.sourceStride), [32, 16, 16])
        XCTAssertEqual(packing.planes.map(\.destinationOffset), [0, 32, 40])
        let output = try XCTUnwrap(packed(packing, paddedSource(packing)))
        XCTAssertEqual(output.count, PixelFormat.yuv420.frameByteCount(FrameSize(width: 8, height: 4)))
        XCTAssertFalse(output.contains(0xEE))
        XCTAssertEqual(output[32], 64)   // first U byte
        XCTAssertEqual(output[40], 128)  // first V byte
    }

    func testNV12ChromaKeepsTheFullStride() throws {
        let packing = FramePacking(format: .nv12, size: FrameSize(width: 8, height: 4), bytesPerLine: 16)
        XCTAssertEqual(packing.planes.map(\.sourceStride), [16, 16])
        XCTAssertEqual(packing.planes[1].rowBytes, 8)
        let output = try XCTUnwrap(packed(packing, paddedSource(packing)))
        XCTAssertEqual(output.count, 8 * 4 + 8 * 2)
        XCTAssertFalse(output.contains(0xEE))
    }

    func testTightFramesAreOneCopy() throws {
        for format in PixelFormat.allCases {
            let size = FrameSize(width: 16, height: 8)
            let rowBytes = format.planes(for: size)[0].rowBytes
            for bytesPerLine in [0, rowBytes] {
                let packing = FramePacking(format: format, size: size, bytesPerLine: bytesPerLine)
                XCTAssertTrue(packing.isTight, "\(format) bytesPerLine \(bytesPerLine)")
                XCTAssertEqual(packing.requiredSourceBytes, format.frameByteCount(size), "\(format)")
                let source = (0..<format.frameByteCount(size)).map { UInt8($0 % 251) }
                XCTAssertEqual(packed(packing, source), source)
            }
        }
    }

    /// Every layout from a padded single-planar V4L2 buffer, laid out here by the kernel's
    /// rule written out per layout (not by `FramePacking`'s own arithmetic): the padding is
    /// dropped and every pixel byte lands where `PixelFormat.planes(for:)` says.
    func testEveryLayoutFromPaddedRows() throws {
        for format in PixelFormat.allCases {
            for size in [FrameSize(width: 16, height: 8), FrameSize(width: 10, height: 6)] {
                let extents = format.planes(for: size)
                let bytesPerLine = extents[0].rowBytes + 24
                let chromaStride: Int
                switch format {
                case .yuv420, .yvu420, .yuv422p: chromaStride = bytesPerLine / 2
                case .nv12, .nv21, .nv16, .nv61: chromaStride = bytesPerLine
                default: chromaStride = 0  // one plane only
                }
                var source: [UInt8] = []
                var expected: [UInt8] = []
                for (index, extent) in extents.enumerated() {
                    let stride = index == 0 ? bytesPerLine : chromaStride
                    for row in 0..<extent.rows {
                        let pixels = (0..<extent.rowBytes).map { UInt8((index * 71 + row * 13 + $0) % 0xE0) }
                        source += pixels + [UInt8](repeating: 0xEE, count: stride - extent.rowBytes)
                        expected += pixels
                    }
                }
                let packing = FramePacking(format: format, size: size, bytesPerLine: bytesPerLine)
                XCTAssertFalse(packing.isTight, "\(format)")
                XCTAssertLessThanOrEqual(packing.requiredSourceBytes, source.count, "\(format) \(size)")
                XCTAssertEqual(packed(packing, source), expected, "\(format) \(size)")
                XCTAssertEqual(expected.count, format.frameByteCount(size), "\(format) \(size)")
            }
        }
    }

    func testShortSourceIsRefusedNotOverread() {
        let packing = FramePacking(format: .yuyv, size: FrameSize(width: 64, height: 48), bytesPerLine: 256)
        let short = [UInt8](repeating: 1, count: packing.requiredSourceBytes - 1)
        XCTAssertNil(packed(packing, short))
        // And a destination that is too small.
        let source = [UInt8](repeating: 1, count: packing.requiredSourceBytes)
        var small = [UInt8](repeating: 0, count: 10)
        XCTAssertNil(source.withUnsafeBytes { src in small.withUnsafeMutableBytes { packing.copy(from: src, to: $0) } })
    }

    func testOddWidthChroma() {
        let packing = FramePacking(format: .yuv420, size: FrameSize(width: 7, height: 5), bytesPerLine: 8)
        XCTAssertEqual(packing.planes[1].rowBytes, 4)
        XCTAssertEqual(packing.planes[1].rows, 3)
        XCTAssertEqual(packing.packedByteCount, 35 + 2 * 12)
    }
}
