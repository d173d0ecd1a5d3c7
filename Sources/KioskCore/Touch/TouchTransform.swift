/// Min/max per axis that replace what the device reports, for panels whose usable area
/// is smaller than their axis ranges (resistive panels). A minimum larger than the
/// maximum flips that axis.
public struct TouchCalibration: Sendable, Equatable {
    public var x: AxisRange
    public var y: AxisRange

    public init(x: AxisRange, y: AxisRange) {
        self.x = x
        self.y = y
    }
}

/// Maps a touch device's coordinates to logical screen pixels.
///
/// In order: the device's axis ranges (or the calibration) scale X and Y to 0…1 across
/// the panel, clamped; `swapAxes`, `flipX` and `flipY` correct a touch sensor mounted
/// differently from the display, in the display panel's own orientation; then `rotation`
/// turns panel positions into logical ones exactly as the screen does (KioskScreen's
/// `PanelMapping.logicalPoint`: a touch lands on the logical pixel the panel shows
/// under the finger), and the result is scaled to the logical screen's pixels
/// (0…width-1, 0…height-1).
///
/// With rotation 90 the picture is drawn turned a quarter clockwise on the panel: the
/// panel's top-left pixel shows the picture's bottom-left, its top-right the picture's
/// top-left.
public struct TouchTransform: Sendable, Equatable {
    public var xRange: AxisRange
    public var yRange: AxisRange
    /// The logical screen (after rotation), e.g. 480x800 for an 800x480 panel turned 90°.
    public var screen: ScreenSize
    public var rotation: ScreenRotation
    public var swapAxes: Bool
    public var flipX: Bool
    public var flipY: Bool

    /// - Parameters:
    ///   - xRange, yRange: The device's axis ranges (`InputDeviceCapabilities.positionRanges`).
    ///   - screen: The logical screen size (what hit testing uses).
    ///   - rotation: How the panel is turned relative to the picture, clockwise.
    ///   - calibration: Replaces the device's ranges when set.
    public init(xRange: AxisRange, yRange: AxisRange, screen: ScreenSize, rotation: ScreenRotation = .none,
                swapAxes: Bool = false, flipX: Bool = false, flipY: Bool = false, calibration: TouchCalibration? = nil) {
        self.xRange = calibration?.x ?? xRange
        self.yRange = calibration?.y ?? yRange
        self.screen = screen
        self.rotation = rotation
        self.swapAxes = swapAxes
        self.flipX = flipX
        self.flipY = flipY
    }

    /// A transform from the `[touch]` settings for a device with these ranges.
    /// - Parameters:
    ///   - screenRotation: The screen's rotation, used when `touch.rotation` is "auto".
    public init(settings: Configuration.Touch, xRange: AxisRange, yRange: AxisRange, screen: ScreenSize,
                screenRotation: ScreenRotation = .none) {
        self.init(xRange: xRange, yRange: yRange, screen: screen, rotation: settings.rotation ?? screenRotation,
                  swapAxes: settings.swapAxes, flipX: settings.flipX, flipY: settings.flipY,
                  calibration: settings.calibration)
    }

    /// The physical panel's size in pixels: the logical screen, turned back.
    public var panel: ScreenSize { rotation.swapsAxes ? screen.swapped : screen }

    /// The logical screen point for device coordinates.
    public func point(x: Int32, y: Int32) -> ScreenPoint {
        var u = Self.fraction(x, of: xRange)
        var v = Self.fraction(y, of: yRange)
        if swapAxes { swap(&u, &v) }
        if flipX { u = 1 - u }
        if flipY { v = 1 - v }
        let (lx, ly): (Double, Double)
        switch rotation {
        case .none: (lx, ly) = (u, v)
        case .quarter: (lx, ly) = (v, 1 - u)
        case .half: (lx, ly) = (1 - u, 1 - v)
        case .threeQuarters: (lx, ly) = (1 - v, u)
        }
        return ScreenPoint(x: Self.pixel(lx, across: screen.width), y: Self.pixel(ly, across: screen.height))
    }

    /// A decoded contact change as a touch event on the logical screen.
    /// - Parameter device: The device node, e.g. "/dev/input/event2".
    public func event(_ change: ContactChange, device: String) -> TouchEvent {
        TouchEvent(phase: change.phase, point: point(x: change.x, y: change.y), slot: change.slot,
                   time: change.time, device: device)
    }

    /// Position along an axis as 0…1 (clamped); an empty range gives 0.
    static func fraction(_ value: Int32, of range: AxisRange) -> Double {
        let span = Double(range.maximum) - Double(range.minimum)
        guard span != 0 else { return 0 }
        return min(1, max(0, (Double(value) - Double(range.minimum)) / span))
    }

    static func pixel(_ fraction: Double, across pixels: Int) -> Int {
        guard pixels > 1 else { return 0 }
        return Int((fraction * Double(pixels - 1)).rounded())
    }
}
