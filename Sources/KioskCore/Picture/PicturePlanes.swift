/// A rectangle of whole pixels.
public struct PixelRect: Sendable, Equatable, CustomStringConvertible {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public var isEmpty: Bool { width <= 0 || height <= 0 }
    public var description: String { "\(width)x\(height)+\(x)+\(y)" }

    /// The part inside a picture of `size` (empty when none is).
    public func clamped(to size: FrameSize) -> PixelRect {
        let left = min(max(x, 0), size.width), top = min(max(y, 0), size.height)
        let right = min(max(x + width, left), size.width), bottom = min(max(y + height, top), size.height)
        return PixelRect(x: left, y: top, width: right - left, height: bottom - top)
    }
}

/// Writable planes of one picture: where each starts and its row stride. Made from a
/// tightly packed frame (`init(packed:…)`) or, in KioskMedia, from an `AVFrame` — so the
/// privacy mask and the overlay are written by the same code into a camera's buffer, the
/// encoder's picture and a still's.
public struct PicturePlanes {
    public let size: FrameSize
    public let format: PixelFormat
    public let bases: [UnsafeMutableRawPointer]
    public let strides: [Int]
    /// Full-range YUV (a JPEG's): black is luma 0, white 255; else 16 and 235.
    public let fullRange: Bool

    /// - Returns: nil unless there is one base and one stride (at least a row long) per plane of `format`.
    public init?(size: FrameSize, format: PixelFormat, bases: [UnsafeMutableRawPointer], strides: [Int], fullRange: Bool = false) {
        let planes = format.geometry.planes
        guard bases.count == planes.count, strides.count == planes.count, size.width > 0, size.height > 0,
              zip(planes, strides).allSatisfy({ $0.rowBytes(forWidth: size.width) <= $1 }) else { return nil }
        self.size = size
        self.format = format
        self.bases = bases
        self.strides = strides
        self.fullRange = fullRange
    }

    /// The planes of a tightly packed frame in `byteCount` bytes at `base`.
    /// - Returns: nil when the bytes are fewer than the frame needs.
    public init?(packed base: UnsafeMutableRawPointer, byteCount: Int, format: VideoFormat) {
        let extents = format.pixelFormat.planes(for: format.size)
        guard let last = extents.last, last.offset + last.byteCount <= byteCount else { return nil }
        self.init(size: format.size, format: format.pixelFormat, bases: extents.map { base + $0.offset },
                  strides: extents.map(\.rowBytes))
    }

    /// Writes `pattern` (one group of plane `plane`'s bytes, repeated) over the pixels of
    /// `rect`, which should start and end on the layout's chroma grid (even numbers).
    public func fill(_ rect: PixelRect, plane: Int, pattern: [UInt8]) {
        let area = rect.clamped(to: size)
        let geometry = format.geometry.planes
        guard !area.isEmpty, plane < geometry.count, !pattern.isEmpty else { return }
        let layout = geometry[plane]
        let firstRow = area.y / layout.rowsPerRow, endRow = (area.y + area.height + layout.rowsPerRow - 1) / layout.rowsPerRow
        let firstGroup = area.x / layout.groupWidth, endGroup = (area.x + area.width + layout.groupWidth - 1) / layout.groupWidth
        let start = firstGroup * layout.bytesPerGroup, length = (endGroup - firstGroup) * layout.bytesPerGroup
        let uniform = pattern.allSatisfy { $0 == pattern[0] }
        for row in firstRow..<endRow {
            let line = bases[plane] + row * strides[plane] + start
            if uniform {
                line.initializeMemory(as: UInt8.self, repeating: pattern[0], count: length)
            } else {
                let bytes = line.assumingMemoryBound(to: UInt8.self)
                for index in 0..<length { bytes[index] = pattern[index % pattern.count] }
            }
        }
    }

    /// Blacks out each of `rects` in every plane.
    public func fillBlack(_ rects: [PixelRect]) {
        let groups = format.blackGroups(fullRange: fullRange)
        for rect in rects {
            for (plane, pattern) in groups.enumerated() { fill(rect, plane: plane, pattern: pattern) }
        }
    }
}

extension PixelFormat {
    /// One group of bytes of each plane that together make black: luma at black, chroma
    /// neutral (128), RGB and Bayer all zero.
    public func blackGroups(fullRange: Bool = false) -> [[UInt8]] {
        let black: UInt8 = fullRange ? 0 : 16
        return switch self {
        case .yuv420, .yvu420, .yuv422p: [[black], [128], [128]]
        case .nv12, .nv21, .nv16, .nv61: [[black], [128, 128]]
        case .yuyv, .yvyu: [[black, 128, black, 128]]
        case .uyvy, .vyuy: [[128, black, 128, black]]
        case .grey: [[black]]
        default: geometry.planes.map { [UInt8](repeating: 0, count: $0.bytesPerGroup) }
        }
    }

    /// Whether the first plane is luma alone and every other plane chroma alone (planar
    /// and semi-planar YUV): the overlay writes such pictures (after the one conversion).
    public var hasLumaPlane: Bool {
        switch self {
        case .yuv420, .yvu420, .nv12, .nv21, .nv16, .nv61, .yuv422p: true
        default: false
        }
    }
}

extension PictureOrientation {
    /// The orientation that undoes this one: a mirrored one is its own inverse (it is a
    /// reflection); a plain turn is undone by the opposite turn.
    public var inverse: PictureOrientation {
        if mirror { return self }
        return switch rotation {
        case .quarter: PictureOrientation(rotation: .threeQuarters)
        case .threeQuarters: PictureOrientation(rotation: .quarter)
        default: self
        }
    }

    /// The camera's pixel that is shown at pixel (`x`, `y`) of the turned picture, for a
    /// camera picture of `sensor` size (the same mapping as `turn(plane:…)`).
    public func sensorPixel(x: Int, y: Int, sensor: FrameSize) -> (x: Int, y: Int) {
        let turned = turnedSize(sensor)
        let unmirrored = mirror ? turned.width - 1 - x : x
        return switch rotation {
        case .none: (unmirrored, y)
        case .quarter: (y, sensor.height - 1 - unmirrored)
        case .half: (sensor.width - 1 - unmirrored, sensor.height - 1 - y)
        case .threeQuarters: (sensor.width - 1 - y, unmirrored)
        }
    }

    /// Where a rectangle of the picture as shown lies in the camera's own pixels.
    public func sensorRect(ofShown rect: PixelRect, sensor: FrameSize) -> PixelRect {
        guard !rect.isEmpty else { return PixelRect(x: 0, y: 0, width: 0, height: 0) }
        let a = sensorPixel(x: rect.x, y: rect.y, sensor: sensor)
        let b = sensorPixel(x: rect.x + rect.width - 1, y: rect.y + rect.height - 1, sensor: sensor)
        return PixelRect(x: min(a.x, b.x), y: min(a.y, b.y), width: abs(a.x - b.x) + 1, height: abs(a.y - b.y) + 1)
    }

    /// Where a region of the picture as shown (fractions) lies in the camera's own picture.
    public func sensorRegion(ofShown region: MotionRegion) -> MotionRegion {
        func map(_ u: Double, _ v: Double) -> (Double, Double) {
            let unmirrored = mirror ? 1 - u : u
            return switch rotation {
            case .none: (unmirrored, v)
            case .quarter: (v, 1 - unmirrored)
            case .half: (1 - unmirrored, 1 - v)
            case .threeQuarters: (1 - v, unmirrored)
            }
        }
        let a = map(region.x, region.y), b = map(region.x + region.width, region.y + region.height)
        return MotionRegion(x: min(a.0, b.0), y: min(a.1, b.1), width: abs(a.0 - b.0), height: abs(a.1 - b.1))
    }
}
