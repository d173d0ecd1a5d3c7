import KioskCore

/// How to copy one raw frame out of a V4L2 buffer whose rows may be padded
/// (`bytesperline` > the pixels' bytes) into a tightly packed `PixelFormat` frame.
///
/// The planes come from `PixelFormat.planes(for:)` — the same description the FFmpeg side
/// builds its plane pointers from. In V4L2's single-planar buffers the first plane's rows
/// are `bytesPerLine` apart and every further plane follows the previous one, its rows
/// padded in proportion (`PixelGeometry.Plane.stride`): YU12's and 422P's chroma strides
/// are half the luma's, NV12's and NV16's equal it.
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
        let geometry = format.geometry.planes
        let extents = format.planes(for: size)
        var planes: [Plane] = []
        var sourceOffset = 0
        for (index, (plane, extent)) in zip(geometry, extents).enumerated() {
            let stride = index == 0
                ? max(bytesPerLine, extent.rowBytes)
                : max(plane.stride(whenFirstPlaneStride: planes[0].sourceStride, first: geometry[0]), extent.rowBytes)
            planes.append(Plane(sourceOffset: sourceOffset, sourceStride: stride, destinationOffset: extent.offset,
                                rowBytes: extent.rowBytes, rows: extent.rows))
            sourceOffset += stride * extent.rows
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
