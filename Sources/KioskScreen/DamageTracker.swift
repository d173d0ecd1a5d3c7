import Glibc
import KioskCore

/// Finds what changed between the picture just drawn and the one on the panel, so only
/// those pixels are copied (a PIN digit touches a few thousand pixels, not 384 000).
///
/// Comparing pixels rather than tracking which model fields changed cannot miss
/// anything a drawing routine touched, and costs about one memcmp of the screen.
enum DamageTracker {
    /// Rows compared together; a band's changed columns become one rectangle.
    static let bandHeight = 16

    /// The rectangles where `current` differs from `previous` (same size and stride,
    /// 32-bit pixels), bands with overlapping columns merged.
    static func damage(current: PixelPlane, previous: PixelPlane) -> [ScreenRect] {
        let width = current.size.width, height = current.size.height
        var rects: [ScreenRect] = []
        var bandTop = 0
        while bandTop < height {
            let bandBottom = min(height, bandTop + bandHeight)
            var left = width, right = -1
            for row in bandTop..<bandBottom {
                let a = (current.base + row * current.stride).assumingMemoryBound(to: UInt32.self)
                let b = (previous.base + row * previous.stride).assumingMemoryBound(to: UInt32.self)
                if memcmp(a, b, width * 4) == 0 { continue }
                var first = 0
                while first < width && a[first] == b[first] { first += 1 }
                var last = width - 1
                while last > first && a[last] == b[last] { last -= 1 }
                left = min(left, first)
                right = max(right, last)
            }
            if right >= left {
                let rect = ScreenRect(x: left, y: bandTop, width: right - left + 1, height: bandBottom - bandTop)
                if let previousRect = rects.last, previousRect.maxY == rect.y,
                   previousRect.x < rect.maxX, rect.x < previousRect.maxX {
                    rects[rects.count - 1] = previousRect.union(rect)
                } else {
                    rects.append(rect)
                }
            }
            bandTop = bandBottom
        }
        return rects
    }
}
