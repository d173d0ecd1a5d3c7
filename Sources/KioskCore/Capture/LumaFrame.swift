/// A small greyscale picture (about 320 pixels wide) of a camera frame: what motion
/// detection reads. Made a few times a second from the frame's luma, by reference to the
/// frame, on the luma branch's own thread.
public struct LumaFrame: Sendable, Equatable {
    public var width: Int
    public var height: Int
    /// `width × height` luma samples, row by row.
    public var pixels: [UInt8]
    /// The capture time of the frame it was made from.
    public var time: MonotonicInstant

    public init(width: Int, height: Int, pixels: [UInt8], time: MonotonicInstant) {
        self.width = width
        self.height = height
        self.pixels = pixels
        self.time = time
    }
}

/// Makes `LumaFrame`s: each output pixel is the mean of a 2×2 sample grid inside its box
/// of source pixels — a cheap box filter (a quarter of the reads of a full one), enough
/// for motion detection, which only compares coarse areas.
public enum LumaDownscaler {
    /// Where the luma samples of a tightly packed frame lie: the first at `offset`, the
    /// next `step` bytes on, rows `rowBytes` apart. For 8-bit RGB the green byte stands in
    /// (most of luma, and enough to see motion), for Bayer the mosaic itself; nil for
    /// RGB565, whose green straddles two bytes.
    public static func lumaLayout(_ format: PixelFormat, _ size: FrameSize) -> (offset: Int, step: Int, rowBytes: Int)? {
        let rowBytes = format.planes(for: size).first?.rowBytes ?? 0
        switch format {
        case .yuyv, .yvyu: return (0, 2, rowBytes)
        case .uyvy, .vyuy: return (1, 2, rowBytes)
        case .yuv420, .yvu420, .nv12, .nv21, .nv16, .nv61, .yuv422p, .grey,
             .sbggr8, .sgbrg8, .sgrbg8, .srggb8: return (0, 1, rowBytes)
        case .rgb24, .bgr24: return (1, 3, rowBytes)
        case .xbgr32, .abgr32, .rgbx32, .rgba32, .bgr32: return (1, 4, rowBytes)
        case .xrgb32, .argb32, .bgrx32, .bgra32, .rgb32: return (2, 4, rowBytes)
        case .rgb565, .rgb565x: return nil
        }
    }

    /// The output size for a source: `targetWidth` wide (or the source's width if
    /// smaller), the height in proportion, both at least 1.
    public static func outputSize(for size: FrameSize, targetWidth: Int) -> FrameSize {
        let width = max(1, min(targetWidth, size.width))
        let height = max(1, (size.height * width + size.width / 2) / max(size.width, 1))
        return FrameSize(width: width, height: height)
    }

    /// Downscales the luma of a tightly packed frame; nil when its layout has no luma
    /// plane or the bytes are too few.
    public static func downscale(_ bytes: UnsafeRawBufferPointer, format: VideoFormat, targetWidth: Int = 320,
                                 time: MonotonicInstant) -> LumaFrame? {
        let size = format.size
        guard size.width > 0, size.height > 0, let layout = lumaLayout(format.pixelFormat, size),
              bytes.count >= layout.offset + (size.height - 1) * layout.rowBytes + (size.width - 1) * layout.step + 1 else { return nil }
        let out = outputSize(for: size, targetWidth: targetWidth)
        var pixels = [UInt8](repeating: 0, count: out.width * out.height)
        // Sample columns and rows: two per box, a quarter and three quarters in.
        let columns = (0..<out.width).map { x -> (Int, Int) in
            let left = x * size.width / out.width, right = max(left + 1, (x + 1) * size.width / out.width)
            let a = left + (right - left) / 4, b = left + (right - left) * 3 / 4
            return (layout.offset + a * layout.step, layout.offset + b * layout.step)
        }
        pixels.withUnsafeMutableBufferPointer { target in
            for y in 0..<out.height {
                let top = y * size.height / out.height, bottom = max(top + 1, (y + 1) * size.height / out.height)
                let rowA = (top + (bottom - top) / 4) * layout.rowBytes
                let rowB = (top + (bottom - top) * 3 / 4) * layout.rowBytes
                for x in 0..<out.width {
                    let (a, b) = columns[x]
                    let sum = Int(bytes[rowA + a]) + Int(bytes[rowA + b]) + Int(bytes[rowB + a]) + Int(bytes[rowB + b])
                    target[y * out.width + x] = UInt8(truncatingIfNeeded: (sum + 2) / 4)
                }
            }
        }
        return LumaFrame(width: out.width, height: out.height, pixels: pixels, time: time)
    }
}
