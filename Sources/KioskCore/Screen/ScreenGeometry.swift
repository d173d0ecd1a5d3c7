/// A point on the logical screen, in pixels from the top-left corner as the user sees it
/// (after rotation), so hit testing never has to think about how the panel is mounted.
public struct ScreenPoint: Sendable, Equatable, Hashable, CustomStringConvertible {
    public var x: Int
    public var y: Int

    public init(x: Int, y: Int) {
        self.x = x
        self.y = y
    }

    public var description: String { "(\(x), \(y))" }
}

/// A width and height in pixels.
public struct ScreenSize: Sendable, Equatable, Hashable, CustomStringConvertible {
    public var width: Int
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    public var isPortrait: Bool { height > width }
    /// The same screen turned a quarter: width and height swapped.
    public var swapped: ScreenSize { ScreenSize(width: height, height: width) }
    public var description: String { "\(width)x\(height)" }
}

/// An axis-aligned rectangle in logical screen pixels.
public struct ScreenRect: Sendable, Equatable, Hashable, CustomStringConvertible {
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

    public var maxX: Int { x + width }
    public var maxY: Int { y + height }
    public var isEmpty: Bool { width <= 0 || height <= 0 }

    public func contains(_ point: ScreenPoint) -> Bool {
        point.x >= x && point.x < maxX && point.y >= y && point.y < maxY
    }

    /// The smallest rectangle holding both (damage tracking merges rectangles this way).
    public func union(_ other: ScreenRect) -> ScreenRect {
        if isEmpty { return other }
        if other.isEmpty { return self }
        let left = min(x, other.x), top = min(y, other.y)
        return ScreenRect(x: left, y: top, width: max(maxX, other.maxX) - left, height: max(maxY, other.maxY) - top)
    }

    /// The overlap, or an empty rectangle.
    public func intersection(_ other: ScreenRect) -> ScreenRect {
        let left = max(x, other.x), top = max(y, other.y)
        let right = min(maxX, other.maxX), bottom = min(maxY, other.maxY)
        guard right > left, bottom > top else { return ScreenRect(x: 0, y: 0, width: 0, height: 0) }
        return ScreenRect(x: left, y: top, width: right - left, height: bottom - top)
    }

    /// Shrunk by `amount` on every side.
    public func inset(by amount: Int) -> ScreenRect {
        ScreenRect(x: x + amount, y: y + amount, width: max(0, width - 2 * amount), height: max(0, height - 2 * amount))
    }

    public var description: String { "\(width)x\(height)+\(x)+\(y)" }
}

/// How the panel is turned relative to the picture the user should see, clockwise.
public enum ScreenRotation: Int, Sendable, Equatable, CaseIterable {
    case none = 0
    case quarter = 90
    case half = 180
    case threeQuarters = 270

    public init?(degrees: Int) {
        self.init(rawValue: ((degrees % 360) + 360) % 360)
    }

    public var degrees: Int { rawValue }
    /// Whether width and height swap between the panel and the logical screen.
    public var swapsAxes: Bool { self == .quarter || self == .threeQuarters }
}
