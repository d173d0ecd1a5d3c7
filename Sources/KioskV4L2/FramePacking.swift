import KioskCore

/// How to copy one raw frame out of a V4L2 buffer whose rows may be padded
/// (`bytesperline` > the pixels' bytes) into a tightly packed `PixelFormat` frame.
///
/// Single-planar V4L2 layouts: the first plane's rows are `bytesPerLine` apart; YU12's two
/// chroma planes follow with half that stride; NV12's interleaved chroma plane follows
/// with the full stride.
struct FramePacking: Sendable, Equatable {
    /// One run of rows: `rows` rows of `rowBytes`, `sourceStride` apart in the buffer.
    struct Plane: Sendable, Equatable {
        var sourceOffset: Int
        var sourceStride: Int
        var destinationOffset: Int
        var rowBytes: Int
        var rows: Int
    }

    let format: PixelFormat
    let size: FrameSize
    let planes: [Plane]
    /// Bytes the driver's buffer must hold for the copy to stay inside it.
    let requiredSourceBytes: Int
    /// True when the source has no padding at all: one `memcpy` does.
    let isTight: Bool

    /// - Parameter bytesPerLine: The driver's `bytesperline` (0 or too small: taken as unpadded).
    init(format: PixelFormat, size: FrameSize, bytesPerLine: Int) {
        self.format = format
        self.size = size
        let w = size.width, h = size.height, cw = (w + 1) / 2, ch = (h + 1) / 2
        let lumaRow = format == .yuyv || format == .uyvy ? w * 2 : w
        let stride = max(bytesPerLine, lumaRow)
        var planes = [Plane(sourceOffset: 0, sourceStride: stride, destinationOffset: 0, rowBytes: lumaRow, rows: h)]
        switch format {
        case .yuyv, .uyvy:
            break
        case .yuv420:
            let chromaStride = max(stride / 2, cw)
            planes.append(Plane(sourceOffset: stride * h, sourceStride: chromaStride,
                                destinationOffset: w * h, rowBytes: cw, rows: ch))
            planes.append(Plane(sourceOffset: stride * h + chromaStride * ch, sourceStride: chromaStride,
                                destinationOffset: w * h + cw * ch, rowBytes: cw, rows: ch))
        case .nv12:
            planes.append(Plane(sourceOffset: stride * h, sourceStride: max(stride, cw * 2),
                                destinationOffset: w * h, rowBytes: cw * 2, rows: ch))
        }
        self.planes = planes
        requiredSourceBytes = planes.map { $0.rows == 0 ? $0.sourceOffset : $0.sourceOffset + $0.sourceStride * ($0.rows - 1) + $0.rowBytes }.max() ?? 0
        isTight = planes.allSatisfy { $0.sourceStride == $0.rowBytes }
            && zip(planes, planes.dropFirst()).allSatisfy { $0.sourceOffset + $0.sourceStride * $0.rows == $1.sourceOffset }
    }

    /// Bytes of the packed frame.
    var packedByteCount: Int { format.frameByteCount(size) }

    /// Copies one frame, dropping the padding.
    /// - Returns: Bytes written, or nil when `source` is too short (a frame the driver cut
    ///   short) or `destination` too small — the caller drops the frame.
    func copy(from source: UnsafeRawBufferPointer, to destination: UnsafeMutableRawBufferPointer) -> Int? {
        guard let from = source.baseAddress, let to = destination.baseAddress,
              source.count >= requiredSourceBytes, destination.count >= packedByteCount else { return nil }
        if isTight {
            to.copyMemory(from: from, byteCount: packedByteCount)
            return packedByteCount
        }
        for plane in planes {
            for row in 0..<plane.rows {
                (to + plane.destinationOffset + row * plane.rowBytes)
                    .copyMemory(from: from + plane.sourceOffset + row * plane.sourceStride, byteCount: plane.rowBytes)
            }
        }
        return packedByteCount
    }
}
