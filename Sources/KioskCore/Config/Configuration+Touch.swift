extension Configuration {
    /// Which input device is the touch screen.
    public enum TouchDeviceSetting: Sendable, Equatable, CustomStringConvertible {
        /// The best touch screen found among `/dev/input/event*`, re-checked as devices come and go.
        case automatic
        /// No touch input.
        case none
        /// This device node, e.g. `/dev/input/event2` or a stable `/dev/input/by-path/…` link.
        case path(String)

        public init?(parsing text: String) {
            switch text {
            case "auto": self = .automatic
            case "none": self = .none
            default:
                guard text.hasPrefix("/dev/"), text.count > 5 else { return nil }
                self = .path(text)
            }
        }

        public var description: String {
            switch self {
            case .automatic: "auto"
            case .none: "none"
            case .path(let path): path
            }
        }
    }

    /// The touch screen (libevdev).
    public struct Touch: Sendable, Equatable {
        public var device: TouchDeviceSetting = .automatic
        /// How the touch panel is turned relative to the picture, clockwise; nil follows the screen.
        public var rotation: ScreenRotation? = nil
        /// Corrections for a touch sensor mounted differently from the display, applied
        /// before the rotation: exchange X and Y, then mirror each.
        public var swapAxes = false
        public var flipX = false
        public var flipY = false
        /// Replaces the device's axis ranges (nil: use what the device reports).
        public var calibration: TouchCalibration? = nil
        /// A contact with no event this long gets a release, so a panel that never sends
        /// one cannot keep the screen awake.
        public var releaseAfterSeconds: Double = 10

        public init() {}
    }

    /// The keys of the `[touch]` section.
    static var touchSchema: [ConfigKey] {
        [
            .string("touch.device", allowed: "\"auto\", \"none\" or a device such as \"/dev/input/event2\"") { c, text in
                guard let setting = TouchDeviceSetting(parsing: text) else { return false }
                c.touch.device = setting
                return true
            },
            ConfigKey(path: "touch.rotation", allowed: "\"auto\" (follow the screen) or 0, 90, 180 or 270") { c, value in
                switch value {
                case .string("auto"):
                    c.touch.rotation = nil
                case .integer(let degrees):
                    guard [0, 90, 180, 270].contains(degrees), let rotation = ScreenRotation(degrees: Int(degrees)) else { return false }
                    c.touch.rotation = rotation
                default:
                    return false
                }
                return true
            },
            boolean("touch.swap_axes") { c, v in c.touch.swapAxes = v },
            boolean("touch.flip_x") { c, v in c.touch.flipX = v },
            boolean("touch.flip_y") { c, v in c.touch.flipY = v },
            ConfigKey(path: "touch.calibration",
                      allowed: "\"auto\" (the device's ranges) or [min_x, max_x, min_y, max_y] in device units, such as [200, 3900, 150, 3950]") { c, value in
                switch value {
                case .string("auto"):
                    c.touch.calibration = nil
                case .array(let items):
                    let numbers = items.compactMap { item -> Int32? in
                        guard case .integer(let raw) = item else { return nil }
                        return Int32(exactly: raw)
                    }
                    guard items.count == 4, numbers.count == 4, numbers[0] != numbers[1], numbers[2] != numbers[3] else { return false }
                    c.touch.calibration = TouchCalibration(x: AxisRange(minimum: numbers[0], maximum: numbers[1]),
                                                           y: AxisRange(minimum: numbers[2], maximum: numbers[3]))
                default:
                    return false
                }
                return true
            },
            .number("touch.release_after_seconds", 1...3600, unit: " seconds") { c, v in c.touch.releaseAfterSeconds = v },
        ]
    }

    private static func boolean(_ path: String, _ set: @escaping (inout Configuration, Bool) -> Void) -> ConfigKey {
        ConfigKey(path: path, allowed: "true or false") { config, value in
            guard case .boolean(let flag) = value else { return false }
            set(&config, flag)
            return true
        }
    }
}
