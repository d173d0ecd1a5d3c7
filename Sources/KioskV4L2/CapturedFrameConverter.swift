import KioskCore
import KioskMedia

/// Turns the bytes of one dequeued V4L2 buffer into a pipeline frame, in two steps around
/// giving the buffer back to the driver: `copyOut` (while the driver's buffer is held:
/// raw frames copied without row padding, JPEGs copied into the decoder) and `finish`
/// (after it went back: JPEGs decoded). Kept apart from the ioctls so the same code runs
/// on recorded frames in tests.
// @unchecked: it holds FFmpeg's MJPEG decoder (C pointers); only the capture thread uses
// it, one run after another (`V4L2Camera` joins one before starting the next).
// `package`: the libcamera source hands its frames on through the same two steps.
package final class CapturedFrameConverter: @unchecked Sendable {
    /// Why a frame was not delivered.
    package enum Drop: Error, Equatable {
        /// Every pooled buffer is still on its way to the encoder.
        case noBuffer
        /// Flagged as erroneous by the driver, shorter than its format, or an undecodable JPEG.
        case corrupt
    }

    /// A frame between the two steps.
    package enum Staged {
        case ready(MediaBuffer)
        case jpeg(MediaBuffer)
        case dropped(Drop)
    }

    private let packing: FramePacking?
    private let decoder: MJPEGDecoder?
    package let pool: BufferPool

    /// - Parameters:
    ///   - delivery: Raw layout or MJPEG.
    ///   - size: The size the driver set.
    ///   - bytesPerLine: The driver's row stride (raw layouts).
    ///   - maximumFrameBytes: The driver's `sizeimage` (JPEG buffer sizing).
    ///   - bufferCount: Pooled output frames.
    /// - Throws: `MediaError` when the MJPEG decoder cannot be opened.
    package init(delivery: CameraDelivery, size: FrameSize, bytesPerLine: Int, maximumFrameBytes: Int, bufferCount: Int) throws(MediaError) {
        switch delivery {
        case .raw(let layout):
            packing = FramePacking(format: layout, size: size, bytesPerLine: bytesPerLine)
            decoder = nil
        case .mjpeg:
            packing = nil
            decoder = try MJPEGDecoder(size: size, maximumFrameBytes: maximumFrameBytes)
        }
        pool = BufferPool(bufferCapacity: delivery.pixelFormat.frameByteCount(size), count: max(bufferCount, 2))
    }

    /// The frame's size when the driver's buffer already is the frame, byte for byte (a
    /// raw layout without row padding): it can be handed on without a copy. Nil otherwise.
    package var packedByteCountWithoutCopy: Int? {
        guard let packing, packing.isTight else { return nil }
        return packing.packedByteCount
    }

    /// Step 1, while the driver's buffer is held.
    /// - Parameters:
    ///   - source: The buffer's used bytes.
    ///   - flaggedError: The driver set V4L2_BUF_FLAG_ERROR.
    package func copyOut(_ source: UnsafeRawBufferPointer, flaggedError: Bool) -> Staged {
        if flaggedError { return .dropped(.corrupt) }
        guard let buffer = pool.take() else { return .dropped(.noBuffer) }
        if let packing {
            guard let copied = packing.copy(from: source, to: buffer.mutableBytes) else { return .dropped(.corrupt) }
            buffer.byteCount = copied
            return .ready(buffer)
        }
        guard let decoder, (try? decoder.stage(source)) != nil else { return .dropped(.corrupt) }
        return .jpeg(buffer)
    }

    /// Step 2, after the driver's buffer went back.
    /// - Returns: The filled, tightly packed frame, or why it was dropped.
    package func finish(_ staged: Staged) -> Result<MediaBuffer, Drop> {
        switch staged {
        case .ready(let buffer):
            return .success(buffer)
        case .dropped(let drop):
            return .failure(drop)
        case .jpeg(let buffer):
            guard let decoder, let count = try? decoder.decodeStaged(into: buffer.mutableBytes) else { return .failure(.corrupt) }
            buffer.byteCount = count
            return .success(buffer)
        }
    }

}
