/// Our camera settings (`camera.zoom`, `focus`, `exposure`, `white_balance`,
/// `brightness`, `contrast`) as libcamera controls — pure, so the mapping is tested
/// without a camera. V4L2 takes these numbers in each device's own units; libcamera's
/// controls have fixed units, so the numbers mean:
///
/// - `exposure` N: ExposureTime of N × 100 µs (V4L2's exposure_time_absolute unit), AE off;
///   `auto`: AeEnable.
/// - `analogue_gain` has no setting of ours; the camera's AE keeps it.
/// - `white_balance` N: ColourTemperature N kelvin, AWB off; `auto`: AwbEnable.
/// - `focus` N: LensPosition N / 100 dioptres (100 = 1 m), AfMode manual; `auto`:
///   AfMode continuous.
/// - `zoom` N: percent, 100 = the whole picture, 200 = twice as close, through ScalerCrop.
/// - `brightness` N: Brightness N / 100 (−100…100 → −1…1); `contrast` N: Contrast N / 100
///   (100 = normal).
///
/// Each only where the camera offers the control; the others are named in `outcomes`.
public struct LibcameraControlPlan: Equatable, Sendable {
    public struct Setting: Equatable, Sendable, Codable {
        public var name: String
        public var value: Double
        public init(_ name: String, _ value: Double) {
            self.name = name
            self.value = value
        }
    }

    /// Controls to set, in order (the mode before its value).
    public var settings: [Setting] = []
    /// The ScalerCrop for the zoom, nil for none.
    public var crop: CropRectangle?
    /// How one of our settings came out: what is set, or which control the camera lacks.
    public struct Outcome: Equatable, Sendable, Codable {
        public init(setting: String, applied: String? = nil, problem: String? = nil) {
            self.setting = setting
            self.applied = applied
            self.problem = problem
        }

        /// Our setting's name ("focus", "white_balance").
        public var setting: String
        /// What is set, in libcamera's units ("lens at 0.5 dioptres"); nil when not set.
        public var applied: String?
        /// Why not ("the camera has no AfMode control").
        public var problem: String?

        public var line: String { "\(setting): " + (applied ?? problem ?? "") }
    }

    /// One per configured setting, in order.
    public var outcomes: [Outcome] = []
    /// `outcomes` as log lines.
    public var notes: [String] { outcomes.map(\.line) }

    /// libcamera's AfMode values.
    public static let afModeManual = 0.0, afModeContinuous = 2.0

    /// - Parameters:
    ///   - offered: The camera's control names.
    ///   - cropMaximum: Its largest ScalerCrop, nil when it has none.
    ///   - aspect: The stream's size: the crop keeps its shape.
    public init(zoom: Int?, focus: Configuration.ControlSetting?, exposure: Configuration.ControlSetting?,
                whiteBalance: Configuration.ControlSetting?, brightness: Int?, contrast: Int?,
                offered: Set<String>, cropMaximum: CropRectangle?, aspect: FrameSize) {
        func add(_ setting: String, _ controls: [Setting], text: String) {
            let missing = controls.map(\.name).filter { !offered.contains($0) }
            if missing.isEmpty {
                settings += controls
                outcomes.append(Outcome(setting: setting, applied: text))
            } else {
                outcomes.append(Outcome(setting: setting, problem: "the camera has no \(missing.joined(separator: "/")) control"))
            }
        }
        switch exposure {
        case .automatic?: add("exposure", [Setting("AeEnable", 1)], text: "automatic")
        case .value(let v)?:
            add("exposure", [Setting("AeEnable", 0), Setting("ExposureTime", Double(max(v, 1)) * 100)],
                text: "\(max(v, 1) * 100) µs")
        case nil: break
        }
        switch whiteBalance {
        case .automatic?: add("white_balance", [Setting("AwbEnable", 1)], text: "automatic")
        case .value(let v)?:
            add("white_balance", [Setting("AwbEnable", 0), Setting("ColourTemperature", Double(v))], text: "\(v) K")
        case nil: break
        }
        switch focus {
        case .automatic?: add("focus", [Setting("AfMode", Self.afModeContinuous)], text: "continuous autofocus")
        case .value(let v)?:
            add("focus", [Setting("AfMode", Self.afModeManual), Setting("LensPosition", Double(max(v, 0)) / 100)],
                text: "lens at \(Double(max(v, 0)) / 100) dioptres")
        case nil: break
        }
        if let brightness { add("brightness", [Setting("Brightness", Double(brightness) / 100)], text: "\(Double(brightness) / 100)") }
        if let contrast { add("contrast", [Setting("Contrast", Double(contrast) / 100)], text: "\(Double(contrast) / 100)") }
        if let zoom {
            if let cropMaximum {
                let crop = Self.crop(zoomPercent: zoom, within: cropMaximum, aspect: aspect)
                self.crop = crop
                outcomes.append(Outcome(setting: "zoom", applied: "\(max(zoom, 100)) % (ScalerCrop \(crop))"))
            } else {
                outcomes.append(Outcome(setting: "zoom", problem: "the camera has no ScalerCrop control"))
            }
        }
    }

    /// The centred crop for a zoom, with the stream's shape, inside `maximum`; even
    /// numbers, at least 2x2. Zoom below 100 % is the whole area.
    public static func crop(zoomPercent: Int, within maximum: CropRectangle, aspect: FrameSize) -> CropRectangle {
        let zoom = Double(max(zoomPercent, 100)) / 100
        var width = Double(maximum.width) / zoom
        var height = Double(maximum.height) / zoom
        // The stream's shape, inside the zoomed area.
        if aspect.width > 0, aspect.height > 0 {
            let shape = Double(aspect.width) / Double(aspect.height)
            if width / height > shape { width = height * shape } else { height = width / shape }
        }
        let w = max(Int(width) & ~1, 2), h = max(Int(height) & ~1, 2)
        let cropWidth = min(w, maximum.width), cropHeight = min(h, maximum.height)
        return CropRectangle(x: maximum.x + (((maximum.width - cropWidth) / 2) & ~1),
                             y: maximum.y + (((maximum.height - cropHeight) / 2) & ~1),
                             width: cropWidth, height: cropHeight)
    }
}

/// A rectangle of sensor pixels (libcamera's Rectangle).
public struct CropRectangle: Hashable, Sendable, Codable, CustomStringConvertible {
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

    public var description: String { "\(width)x\(height)+\(x)+\(y)" }
}

/// A libcamera control's limits as the camera gives them, in libcamera's units.
public struct LibcameraControlLimits: Sendable, Equatable, Codable {
    public var minimum: Double
    public var maximum: Double
    public var defaultValue: Double

    public init(minimum: Double, maximum: Double, defaultValue: Double) {
        self.minimum = minimum
        self.maximum = maximum
        self.defaultValue = defaultValue
    }
}

extension LibcameraControlPlan {
    /// Which libcamera control carries each of our settings, and how many of its units
    /// make one of ours (the inverse of the mapping at the top of this file).
    static let carriers: [CameraSettingName: (control: String, perUnit: Double, unit: String)] = [
        .exposure: ("ExposureTime", 100, "× 100 µs"),
        .whiteBalance: ("ColourTemperature", 1, "K"),
        .focus: ("LensPosition", 0.01, "× 0.01 dioptre"),
        .brightness: ("Brightness", 0.01, "%"),
        .contrast: ("Contrast", 0.01, "%"),
    ]

    /// One of our settings on a libcamera camera, for `camera.get`: the value asked for
    /// (libcamera reads nothing back before a frame's metadata), the control's range and
    /// default in our units, and which control applies it. Zoom is the digital zoom's and
    /// torch has no libcamera control: both are left to the caller.
    /// - Parameters:
    ///   - asked: What the config or `camera.set` asked for; nil: the camera's own.
    ///   - controls: The camera's controls by libcamera name.
    /// - Returns: nil for zoom and torch.
    public static func describe(_ name: CameraSettingName, asked: CameraSettingValue?,
                                controls: [String: LibcameraControlLimits]) -> [String: JSONValue]? {
        guard let carrier = carriers[name] else { return nil }
        guard let limits = controls[carrier.control] else {
            return ["how": .string("none"), "message": .string("the camera has no \(carrier.control) control")]
        }
        func ours(_ value: Double) -> JSONValue {
            let scaled = value / carrier.perUnit
            // A driver's huge or broken limit must not trap the conversion.
            guard scaled.isFinite, abs(scaled) < 1e15 else { return .null }
            return .integer(Int64(scaled.rounded()))
        }
        let value: JSONValue = switch asked {
        case .automatic?: .string("auto")
        case .value(let number)?: .integer(Int64(min(max(number, -1e15), 1e15).rounded()))
        case nil: .string("unchanged")
        }
        return ["how": .string("libcamera"), "control": .string(carrier.control), "unit": .string(carrier.unit),
                "value": value, "minimum": ours(limits.minimum), "maximum": ours(limits.maximum),
                "default": ours(limits.defaultValue)]
    }
}
