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

    /// Turns one 8-bit plane (luma, or a chroma plane of 4:2:0 with its own size).
    /// - Parameters:
    ///   - source: `height` rows of `width` bytes, `sourceStride` apart.
    ///   - destination: Room for the turned plane: `turnedSize` rows, `destinationStride` apart.
    /// - Returns: False (nothing written) when a stride is shorter than a row or a buffer
    ///   is too small for the rows it must hold.
    @discardableResult
    public func turn(plane source: UnsafeRawBufferPointer, width: Int, height: Int, sourceStride: Int,
                     into destination: UnsafeMutableRawBufferPointer, destinationStride: Int) -> Bool {
        let turned = turnedSize(FrameSize(width: width, height: height))
        guard width > 0, height > 0, sourceStride >= width, destinationStride >= turned.width,
              source.count >= sourceStride * (height - 1) + width,
              destination.count >= destinationStride * (turned.height - 1) + turned.width else { return false }
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
                destination[row + x] = source[sy * sourceStride + sx]
            }
        }
        return true
    }
}
