import KioskCore
import XCTest

/// The luma branch's downscaler on every luma layout.
final class LumaDownscalerTests: XCTestCase {
    private let size = FrameSize(width: 1280, height: 720)

    /// A frame whose luma is x / 5 (a horizontal ramp), chroma 128.
    private func frame(_ layout: PixelFormat) -> [UInt8] {
        var bytes = [UInt8](repeating: 128, count: layout.frameByteCount(size))
        for y in 0..<size.height {
            for x in 0..<size.width {
                let luma = UInt8(x / 5)
                switch layout {
                case .yuyv: bytes[y * size.width * 2 + x * 2] = luma
                case .uyvy: bytes[y * size.width * 2 + x * 2 + 1] = luma
                default: bytes[y * size.width + x] = luma
                }
            }
        }
        return bytes
    }

    func testEveryLumaLayoutGivesTheSameSmallPicture() throws {
        var pictures: [LumaFrame] = []
        for layout in [PixelFormat.yuyv, .uyvy, .yuv420, .nv12] {
            let bytes = frame(layout)
            let luma = try XCTUnwrap(bytes.withUnsafeBytes {
                LumaDownscaler.downscale($0, format: VideoFormat(size: size, pixelFormat: layout, framesPerSecond: 30),
                                         time: MonotonicInstant(nanoseconds: 7))
            })
            XCTAssertEqual(luma.width, 320)
            XCTAssertEqual(luma.height, 180)
            XCTAssertEqual(luma.time, MonotonicInstant(nanoseconds: 7))
            pictures.append(luma)
        }
        XCTAssertTrue(pictures.allSatisfy { $0.pixels == pictures[0].pixels })
        // The ramp survives: left dark, right bright, monotone along a row.
        let row = Array(pictures[0].pixels.prefix(320))
        XCTAssertLessThan(row.first!, 5)
        XCTAssertGreaterThan(row.last!, 245)
        XCTAssertEqual(row, row.sorted())
    }

    func testSmallFramesAndShortBuffersAreHandled() {
        let tiny = VideoFormat(size: FrameSize(width: 64, height: 48), pixelFormat: .yuv420, framesPerSecond: 30)
        let bytes = [UInt8](repeating: 90, count: tiny.frameByteCount)
        let luma = bytes.withUnsafeBytes { LumaDownscaler.downscale($0, format: tiny, time: MonotonicInstant(nanoseconds: 0)) }
        XCTAssertEqual(luma?.width, 64, "never upscaled")
        XCTAssertEqual(luma?.pixels.allSatisfy { $0 == 90 }, true)
        let short = [UInt8](repeating: 0, count: 100)
        XCTAssertNil(short.withUnsafeBytes { LumaDownscaler.downscale($0, format: tiny, time: MonotonicInstant(nanoseconds: 0)) })
        XCTAssertEqual(LumaDownscaler.outputSize(for: FrameSize(width: 1920, height: 1080), targetWidth: 320), FrameSize(width: 320, height: 180))
    }
}
