/// How a camera is mounted: the picture is turned `rotation` clockwise and then, with
/// `mirror`, flipped left to right to look upright (`camera.rotation`, `camera.mirror`).
///
/// Recordings keep the camera's pixels and say this in the MP4's display matrix (players
/// turn them, and nothing is re-encoded for it); stills and the preview turn the pixels
/// themselves with `turn(plane:…)`, as a JPEG viewer or a panel cannot be told.
public struct PictureOrientation: Sendable, Equatable {
    public var rotation: ScreenRotation
    public var mirror: Bool

    public init(rotation: ScreenRotation = .none, mirror: Bool = false) {
        self.rotation = rotation
        self.mirror = mirror
    }

    public static let upright = PictureOrientation()

    public var isUpright: Bool { rotation == .none && !mirror }

    /// The picture's size once turned.
    public func turnedSize(_ size: FrameSize) -> FrameSize {
        rotation.swapsAxes ? FrameSize(width: size.height, height: size.width) : size
    }

    /// Turns one plane: 8-bit (luma, or a chroma plane of 4:2:0 with its own size) or
    /// 32-bit (the preview's BGRA).
    /// - Parameters:
    ///   - source: `height` rows of `width` pixels, `sourceStride` bytes apart.
    ///   - destination: Room for the turned plane: `turnedSize` rows, `destinationStride` bytes apart.
    ///   - bytesPerPixel: 1 or 4.
    /// - Returns: False (nothing written) when a stride is shorter than a row, a buffer
    ///   is too small for the rows it must hold, or `bytesPerPixel` is neither 1 nor 4.
    @discardableResult
    public func turn(plane source: UnsafeRawBufferPointer, width: Int, height: Int, sourceStride: Int,
                     into destination: UnsafeMutableRawBufferPointer, destinationStride: Int, bytesPerPixel: Int = 1) -> Bool {
        let turned = turnedSize(FrameSize(width: width, height: height))
        let step = bytesPerPixel
        guard step == 1 || step == 4, width > 0, height > 0, sourceStride >= width * step, destinationStride >= turned.width * step,
              source.count >= sourceStride * (height - 1) + width * step,
              destination.count >= destinationStride * (turned.height - 1) + turned.width * step else { return false }
        for y in 0..<turned.height {
            let row = y * destinationStride
            for x in 0..<turned.width {
                // Undo the mirror, then the clockwise turn: which source pixel lands here.
                let unmirrored = mirror ? turned.width - 1 - x : x
                let (sx, sy): (Int, Int) = switch rotation {
                case .none: (unmirrored, y)
                case .quarter: (y, height - 1 - unmirrored)
                case .half: (width - 1 - unmirrored, height - 1 - y)
                case .threeQuarters: (width - 1 - y, unmirrored)
                }
                if step == 4 {
                    let pixel = source.loadUnaligned(fromByteOffset: sy * sourceStride + sx * 4, as: UInt32.self)
                    destination.storeBytes(of: pixel, toByteOffset: row + x * 4, as: UInt32.self)
                } else {
                    destination[row + x] = source[sy * sourceStride + sx]
                }
            }
        }
        return true
    }
}
