import XCTest
@testable import KioskCore

/// Every layout's geometry: planes, byte counts (odd sizes too), V4L2's chroma strides.
/// KioskMediaTests checks the same numbers against FFmpeg's own `av_image_get_buffer_size`.
final class PixelFormatTests: XCTestCase {
    func size(_ w: Int, _ h: Int) -> FrameSize { FrameSize(width: w, height: h) }

    /// The expected planes as (rowBytes, rows) at `size`.
    func expectedPlanes(_ format: PixelFormat, _ size: FrameSize) -> [(Int, Int)] {
        let w = size.width, h = size.height, cw = (w + 1) / 2, ch = (h + 1) / 2
        switch format {
        case .yuv420, .yvu420: return [(w, h), (cw, ch), (cw, ch)]
        case .nv12, .nv21: return [(w, h), (2 * cw, ch)]
        case .yuyv, .uyvy, .yvyu, .vyuy: return [(4 * cw, h)]
        case .nv16, .nv61: return [(w, h), (2 * cw, h)]
        case .yuv422p: return [(w, h), (cw, h), (cw, h)]
        case .grey, .sbggr8, .sgbrg8, .sgrbg8, .srggb8: return [(w, h)]
        case .rgb24, .bgr24: return [(3 * w, h)]
        case .rgb565, .rgb565x: return [(2 * w, h)]
        case .xbgr32, .abgr32, .rgbx32, .rgba32, .xrgb32, .argb32, .bgrx32, .bgra32, .bgr32, .rgb32: return [(4 * w, h)]
        }
    }

    func testPlanesOfEveryLayout() {
        for format in PixelFormat.allCases {
            for frame in [size(640, 480), size(7, 5), size(2, 2), size(1, 1), size(1280, 721)] {
                let planes = format.planes(for: frame)
                let expected = expectedPlanes(format, frame)
                XCTAssertEqual(planes.map(\.rowBytes), expected.map(\.0), "\(format) \(frame)")
                XCTAssertEqual(planes.map(\.rows), expected.map(\.1), "\(format) \(frame)")
                // Planes follow one another with no gap, in memory order.
                var offset = 0
                for plane in planes {
                    XCTAssertEqual(plane.offset, offset, "\(format) \(frame)")
                    offset += plane.byteCount
                }
                XCTAssertEqual(format.frameByteCount(frame), offset, "\(format) \(frame)")
                XCTAssertEqual(format.geometry.planes.count, planes.count)
            }
        }
    }

    func testFrameByteCounts() {
        let vga = size(640, 480)
        let table: [(PixelFormat, Int)] = [
            (.yuv420, 460_800), (.yvu420, 460_800), (.nv12, 460_800), (.nv21, 460_800),
            (.yuyv, 614_400), (.uyvy, 614_400), (.yvyu, 614_400), (.vyuy, 614_400),
            (.nv16, 614_400), (.nv61, 614_400), (.yuv422p, 614_400),
            (.grey, 307_200), (.sbggr8, 307_200), (.srggb8, 307_200),
            (.rgb24, 921_600), (.bgr24, 921_600), (.rgb565, 614_400), (.rgb565x, 614_400),
            (.xbgr32, 1_228_800), (.abgr32, 1_228_800), (.rgb32, 1_228_800),
        ]
        for (format, bytes) in table { XCTAssertEqual(format.frameByteCount(vga), bytes, "\(format)") }
        // Odd sizes: exact, subsampled planes rounded up as FFmpeg does (its numbers).
        let odd = size(7, 5)
        let oddTable: [(PixelFormat, Int)] = [
            (.yuv420, 59), (.nv21, 59), (.yuyv, 80), (.yuv422p, 75), (.nv16, 75),
            (.grey, 35), (.rgb24, 105), (.rgb565, 70), (.xrgb32, 140), (.sgrbg8, 35),
        ]
        for (format, bytes) in oddTable { XCTAssertEqual(format.frameByteCount(odd), bytes, "\(format)") }
        XCTAssertEqual(PixelFormat.yuv420.frameByteCount(size(0, 0)), 0)
    }

    func testOnlySubsampledLayoutsNeedAnEvenSize() {
        for format in PixelFormat.allCases {
            let subsampled: Bool
            switch format.geometry.sampling {
            case .chroma420, .chroma422, .bayer: subsampled = true
            case .full: subsampled = false
            }
            XCTAssertEqual(format.needsEvenSize, subsampled, "\(format)")
        }
        XCTAssertTrue(PixelFormat.yuyv.needsEvenSize)
        XCTAssertTrue(PixelFormat.nv61.needsEvenSize)
        XCTAssertTrue(PixelFormat.sbggr8.needsEvenSize, "a 2×2 mosaic")
        XCTAssertFalse(PixelFormat.grey.needsEvenSize)
        XCTAssertFalse(PixelFormat.rgb24.needsEvenSize)
        XCTAssertFalse(PixelFormat.abgr32.needsEvenSize)
    }

    /// V4L2's single-planar rule: chroma rows are padded in proportion to the luma's.
    func testChromaStrideFollowsTheLumaStride() {
        func strides(_ format: PixelFormat, _ luma: Int) -> [Int] {
            let planes = format.geometry.planes
            return planes.map { $0.stride(whenFirstPlaneStride: luma, first: planes[0]) }
        }
        XCTAssertEqual(strides(.yuv420, 704), [704, 352, 352])
        XCTAssertEqual(strides(.yvu420, 704), [704, 352, 352])
        XCTAssertEqual(strides(.yuv422p, 704), [704, 352, 352])
        XCTAssertEqual(strides(.nv12, 704), [704, 704])
        XCTAssertEqual(strides(.nv61, 704), [704, 704])
        XCTAssertEqual(strides(.yuyv, 1408), [1408])
        XCTAssertEqual(strides(.rgb24, 1920), [1920])
    }

    func testRawValuesAreV4L2FourCCs() {
        XCTAssertEqual(PixelFormat.allCases.count, 30)
        XCTAssertEqual(Set(PixelFormat.allCases.map(\.rawValue)).count, PixelFormat.allCases.count)
        for format in PixelFormat.allCases {
            XCTAssertEqual(format.rawValue.utf8.count, 4, "\(format)")
        }
        XCTAssertEqual(PixelFormat(rawValue: "AR24"), .abgr32, "V4L2_PIX_FMT_ABGR32: B, G, R, A in memory")
        XCTAssertEqual(PixelFormat(rawValue: "XR24"), .xbgr32)
        XCTAssertEqual(PixelFormat(rawValue: "RGBP"), .rgb565)
        XCTAssertEqual(PixelFormat(rawValue: "BA81"), .sbggr8)
        XCTAssertEqual(PixelFormat(rawValue: "422P"), .yuv422p)
    }
}
