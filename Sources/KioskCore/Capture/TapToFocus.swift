/// A point in a picture as fractions of its width and height: (0, 0) top-left, (1, 1)
/// bottom-right, in the picture's own way up.
public struct PicturePoint: Sendable, Equatable, Codable {
    public var x: Double
    public var y: Double

    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }
}

/// Where a tap on the live preview lands in the camera's own frame, for tap-to-focus.
///
/// The preview is the camera frame cut to the digital zoom's centre, turned upright by
/// `camera.rotation`/`camera.mirror`, fitted into the preview area with its aspect kept
/// and centred (black bars around it). A tap is taken back through each step: off the
/// letter-box bars it is nothing; on the picture it becomes a point of the frame as the
/// sensor reads it out.
public struct PreviewTapMapping: Sendable, Equatable {
    /// The preview area on screen (`ScreenLayout.preview`).
    public var area: ScreenRect
    /// The camera's frames as they arrive (before turning).
    public var frame: FrameSize
    public var orientation: PictureOrientation
    /// The digital zoom shown (1: none): the preview shows the centre 1/zoom of the frame.
    public var digitalZoom: Double

    public init(area: ScreenRect, frame: FrameSize, orientation: PictureOrientation = .upright, digitalZoom: Double = 1) {
        self.area = area
        self.frame = frame
        self.orientation = orientation
        self.digitalZoom = digitalZoom.isFinite ? max(1, digitalZoom) : 1
    }

    /// The largest size with the frame's aspect ratio inside `area`, width a multiple of 8
    /// (rows of 32 bytes, which libswscale writes fastest), height even: the preview's size.
    public static func fittedSize(_ frame: FrameSize, in area: ScreenSize) -> ScreenSize {
        guard frame.width > 0, frame.height > 0, area.width > 0, area.height > 0 else { return ScreenSize(width: 0, height: 0) }
        var width = area.width
        var height = width * frame.height / frame.width
        if height > area.height {
            height = area.height
            width = height * frame.width / frame.height
        }
        return ScreenSize(width: max(8, width & ~7), height: max(2, height & ~1))
    }

    /// Where the picture is drawn: fitted and centred in `area` (as the renderer draws it).
    public var picture: ScreenRect {
        let size = Self.fittedSize(orientation.turnedSize(frame), in: ScreenSize(width: area.width, height: area.height))
        return ScreenRect(x: area.x + (area.width - size.width) / 2, y: area.y + (area.height - size.height) / 2,
                          width: size.width, height: size.height)
    }

    /// The tap as a point of the camera's whole frame; nil off the picture (on the bars,
    /// outside the preview) or without a frame size yet.
    public func framePoint(_ tap: ScreenPoint) -> PicturePoint? {
        let shown = picture
        guard !shown.isEmpty, shown.contains(tap) else { return nil }
        // The pixel's centre, as a fraction of the upright picture.
        let upright = PicturePoint(x: (Double(tap.x - shown.x) + 0.5) / Double(shown.width),
                                   y: (Double(tap.y - shown.y) + 0.5) / Double(shown.height))
        let zoomed = orientation.unturned(upright)
        return PicturePoint(x: 0.5 + (zoomed.x - 0.5) / digitalZoom, y: 0.5 + (zoomed.y - 0.5) / digitalZoom)
    }
}

extension PictureOrientation {
    /// A point of the upright (turned, mirrored) picture as a point of the camera's frame:
    /// the inverse of what `turn(plane:…)` does to pixels.
    public func unturned(_ point: PicturePoint) -> PicturePoint {
        let u = mirror ? 1 - point.x : point.x, v = point.y
        return switch rotation {
        case .none: PicturePoint(x: u, y: v)
        case .quarter: PicturePoint(x: v, y: 1 - u)
        case .half: PicturePoint(x: 1 - u, y: 1 - v)
        case .threeQuarters: PicturePoint(x: 1 - v, y: u)
        }
    }
}

/// The metering window of a tap-to-focus, in sensor pixels (libcamera's AfWindows).
public enum FocusWindow {
    /// The window's share of the visible field, each way: small enough to pick a subject,
    /// large enough for the AF statistics to have contrast to work on.
    public static let fraction = 0.2

    /// A window of `fraction` of `field` each way centred on `point`, moved (not shrunk)
    /// to lie inside `bounds`; even numbers, at least 2x2.
    /// - Parameters:
    ///   - point: Where in the frame (`PreviewTapMapping.framePoint`); clamped to 0…1.
    ///   - field: The sensor area the frame shows: the ScalerCrop in use (the camera's
    ///     zoom), or `bounds` when it has none.
    ///   - bounds: The largest ScalerCrop (the usable sensor area).
    public static func window(at point: PicturePoint, field: CropRectangle, bounds: CropRectangle,
                              fraction: Double = Self.fraction) -> CropRectangle {
        let share = fraction.isFinite ? min(max(fraction, 0.01), 1) : Self.fraction
        let px = point.x.isFinite ? min(max(point.x, 0), 1) : 0.5
        let py = point.y.isFinite ? min(max(point.y, 0), 1) : 0.5
        let width = min(max(2, Int(Double(max(0, field.width)) * share) & ~1), max(2, bounds.width))
        let height = min(max(2, Int(Double(max(0, field.height)) * share) & ~1), max(2, bounds.height))
        let centreX = Double(field.x) + px * Double(field.width)
        let centreY = Double(field.y) + py * Double(field.height)
        let x = min(max(Int(centreX) - width / 2, bounds.x), bounds.x + max(0, bounds.width) - width) & ~1
        let y = min(max(Int(centreY) - height / 2, bounds.y), bounds.y + max(0, bounds.height) - height) & ~1
        return CropRectangle(x: max(x, bounds.x), y: max(y, bounds.y), width: width, height: height)
    }
}

/// What a tap-to-focus asks of a libcamera camera, from the controls it lists (pure, so
/// it is tested without one).
///
/// - AfMode, AfMetering, AfWindows: the window from `FocusWindow`, AfMetering windows (1).
///   With `camera.focus = "auto"` (continuous AF, AfMode 2) the camera keeps focusing
///   continuously, now on the window; otherwise AfMode auto (1) and AfTrigger start (0)
///   focus once, there.
/// - Exposure: libcamera's controls have no metering window (AeMeteringMode chooses
///   centre-weighted, spot — at the centre — or matrix), so a tap does not meter on
///   the point; `exposureNote` says so once.
/// - A camera without AfMode, AfMetering or AfWindows: nothing (`settings` empty,
///   `missing` names what it lacks) — the caller logs that once, not per tap.
public struct LibcameraFocusPlan: Equatable, Sendable, Codable {
    public var settings: [LibcameraControlPlan.Setting] = []
    /// The AfWindows rectangle, nil when nothing is set.
    public var window: CropRectangle?
    /// The controls the camera lacks for tap-to-focus (empty when it has them all).
    public var missing: [String] = []

    public static let afModeAuto = 1.0, afMeteringWindows = 1.0, afTriggerStart = 0.0
    public static let exposureNote = "tap to expose: libcamera has no metering window control; exposure stays as configured"

    /// - Parameters:
    ///   - point: Where in the frame.
    ///   - offered: The camera's control names.
    ///   - cropMaximum: Its largest ScalerCrop (AfWindows are in its coordinates); nil: none.
    ///   - crop: The ScalerCrop in use for the camera's zoom, nil for the whole area.
    ///   - continuous: `camera.focus` is "auto" (continuous AF).
    public init(point: PicturePoint, offered: Set<String>, cropMaximum: CropRectangle?, crop: CropRectangle?, continuous: Bool) {
        var needed = ["AfMode", "AfMetering", "AfWindows"]
        if !continuous { needed.append("AfTrigger") }
        missing = needed.filter { !offered.contains($0) }
        if cropMaximum == nil { missing.append("ScalerCropMaximum (the sensor area AfWindows refer to)") }
        guard missing.isEmpty, let bounds = cropMaximum else { return }
        window = FocusWindow.window(at: point, field: crop ?? bounds, bounds: bounds)
        settings = [.init("AfMode", continuous ? LibcameraControlPlan.afModeContinuous : Self.afModeAuto),
                    .init("AfMetering", Self.afMeteringWindows)]
        if !continuous { settings.append(.init("AfTrigger", Self.afTriggerStart)) }
    }
}
