import KioskCore
import KioskMedia
import XCTest

/// Digital zoom: the centre cut out and scaled back, in every layout.
final class FrameCropScalerTests: XCTestCase {
    /// A frame black at its border and white in its centre half: zoomed 2×, all white.
    private func frame(_ layout: PixelFormat, _ size: FrameSize) -> [UInt8] {
        let format = VideoFormat(size: size, pixelFormat: layout, framesPerSecond: 30)
        var bytes = [UInt8](repeating: 0, count: format.frameByteCount)
        bytes.withUnsafeMutableBytes { raw in
            // Fill with black, then a white centre, in this layout.
            var canvas = YCbCrCanvas(base: raw.baseAddress!, format: format)
            canvas.fill(x: 0, y: 0, width: size.width, height: size.height, .black)
            canvas.fill(x: size.width / 4, y: size.height / 4, width: size.width / 2, height: size.height / 2, .white)
        }
        return bytes
    }

    func testZoomTwoShowsOnlyTheCentre() throws {
        let size = FrameSize(width: 160, height: 120)
        for layout in [PixelFormat.yuyv, .uyvy, .yuv420, .nv12] {
            let format = VideoFormat(size: size, pixelFormat: layout, framesPerSecond: 30)
            let source = frame(layout, size)
            var target = [UInt8](repeating: 0, count: format.frameByteCount)
            let scaler = FrameCropScaler(format: format)
            let done = source.withUnsafeBytes { s in target.withUnsafeMutableBytes { scaler.zoom(s.baseAddress!, by: 2, into: $0.baseAddress!) } }
            XCTAssertTrue(done, "\(layout)")
            // The luma of every pixel: white (235) across the frame, edges included.
            let luma = lumaValues(target, format)
            XCTAssertGreaterThan(luma.min() ?? 0, 200, "\(layout): the zoomed frame is the white centre only")
            // Unzoomed (1×), the corners stay black.
            XCTAssertLessThan(lumaValues(source, format).first ?? 255, 40)
        }
    }

    func testTheCropIsCentredAndEven() {
        let crop = FrameCropScaler.crop(for: FrameSize(width: 1280, height: 720), zoom: 3)
        XCTAssertEqual(crop.size, FrameSize(width: 426, height: 240))
        XCTAssertEqual(crop.x, 426)
        XCTAssertEqual(crop.y, 240)
        XCTAssertEqual(FrameCropScaler.crop(for: FrameSize(width: 640, height: 480), zoom: 1).size, FrameSize(width: 640, height: 480))
        XCTAssertEqual(FrameCropScaler.crop(for: FrameSize(width: 640, height: 480), zoom: .nan).x, 0)
    }

    private func lumaValues(_ bytes: [UInt8], _ format: VideoFormat) -> [UInt8] {
        let pixels = format.size.pixelCount
        switch format.pixelFormat {
        case .yuyv: return stride(from: 0, to: pixels * 2, by: 2).map { bytes[$0] }
        case .uyvy: return stride(from: 1, to: pixels * 2, by: 2).map { bytes[$0] }
        default: return Array(bytes.prefix(pixels))
        }
    }
}
