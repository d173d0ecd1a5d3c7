/// Areas blacked out of the camera's picture before anything else sees it (`[privacy]`):
/// the recording, clips, the stream, the web's live view, RTSP, stills, the screen and
/// motion detection all get the masked frame. Given as the picture is shown (after
/// `camera.rotation` and `camera.mirror`, at 1× zoom) and applied in the camera's own
/// pixels, before digital zoom: a mask stays on the same part of the scene at any zoom
/// and rotation.
public struct PrivacyMask: Sendable, Equatable {
    /// The masked areas as the picture is shown: rectangles in fractions, and a grey
    /// picture whose pixels darker than 128 are masked (the motion mask's shape).
    public var shown: MotionMask

    public init(regions: [MotionRegion] = [], picture: (width: Int, height: Int, pixels: [UInt8])? = nil) {
        shown = MotionMask(ignoredRegions: regions, picture: picture)
    }

    public var isEmpty: Bool { shown.ignoredRegions.isEmpty && shown.picture == nil }

    /// What to black out of frames of `size` from a camera mounted as `orientation`.
    public func plan(for size: FrameSize, orientation: PictureOrientation) -> PrivacyMaskPlan {
        var sensorPicture: (width: Int, height: Int, pixels: [UInt8])?
        if let picture = shown.picture, picture.width > 0, picture.height > 0, picture.pixels.count >= picture.width * picture.height {
            // The picture is drawn as shown: turned back into the camera's orientation.
            let turned = orientation.inverse.turnedSize(FrameSize(width: picture.width, height: picture.height))
            var pixels = [UInt8](repeating: 255, count: turned.width * turned.height)
            let done = picture.pixels.withUnsafeBytes { source in
                pixels.withUnsafeMutableBytes { destination in
                    orientation.inverse.turn(plane: source, width: picture.width, height: picture.height, sourceStride: picture.width,
                                             into: destination, destinationStride: turned.width)
                }
            }
            if done { sensorPicture = (turned.width, turned.height, pixels) }
        }
        let hidden = MotionMask(ignoredRegions: shown.ignoredRegions.map { orientation.sensorRegion(ofShown: $0) }, picture: sensorPicture)
            .watched(width: size.width, height: size.height)
        return PrivacyMaskPlan(size: size, watched: hidden)
    }
}

/// The rectangles of one frame size to black out, whole 2×2 blocks (a block with one
/// masked pixel is masked), so that a subsampled layout's chroma is neutral throughout.
public struct PrivacyMaskPlan: Sendable, Equatable {
    public let size: FrameSize
    /// One rectangle per run of masked blocks in a block row, two pixel rows high.
    public let rects: [PixelRect]

    /// - Parameter watched: One flag per pixel, row by row: false where the picture is masked.
    init(size: FrameSize, watched: [Bool]) {
        self.size = size
        var rects: [PixelRect] = []
        guard size.width > 0, size.height > 0, watched.count >= size.width * size.height else {
            self.rects = []
            return
        }
        for top in stride(from: 0, to: size.height, by: 2) {
            let rows = min(2, size.height - top)
            var runStart: Int?
            for left in stride(from: 0, through: size.width, by: 2) {
                var masked = false
                if left < size.width {
                    for y in top..<(top + rows) {
                        for x in left..<min(left + 2, size.width) where !watched[y * size.width + x] { masked = true }
                    }
                }
                if masked, runStart == nil { runStart = left }
                if !masked, let start = runStart {
                    rects.append(PixelRect(x: start, y: top, width: min(left, size.width) - start, height: rows))
                    runStart = nil
                }
            }
        }
        // Runs of the same columns in consecutive block rows become one rectangle.
        var merged: [PixelRect] = []
        for rect in rects {
            if let index = merged.lastIndex(where: { $0.x == rect.x && $0.width == rect.width && $0.y + $0.height == rect.y }) {
                merged[index].height += rect.height
            } else {
                merged.append(rect)
            }
        }
        self.rects = merged
    }

    public var isEmpty: Bool { rects.isEmpty }

    /// Pixels masked.
    public var maskedPixels: Int { rects.reduce(0) { $0 + $1.width * $1.height } }

    /// Blacks out the masked rectangles of `picture` (which must be of this plan's size).
    public func apply(to picture: PicturePlanes) {
        guard picture.size == size else { return }
        picture.fillBlack(rects)
    }
}
