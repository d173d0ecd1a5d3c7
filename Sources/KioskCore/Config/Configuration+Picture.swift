extension Configuration {
    /// `[overlay]`: the date, time and a label burned into every picture the encoder gets.
    public struct Overlay: Sendable, Equatable {
        /// The template (`OverlayText`); "" for none.
        public var text = ""
        public var position = OverlayPosition.topLeft
        /// The text's height in percent of the picture's.
        public var sizePercent = 4.0
        /// Also on the screen's preview (off: the screen shows the time in its status line).
        public var onPreview = false

        public init() {}

        /// The parsed template, nil when there is none.
        public var template: OverlayText? {
            guard let parsed = try? OverlayText(text), !parsed.isEmpty else { return nil }
            return parsed
        }
    }

    /// `[privacy]`: areas blacked out of every picture (`PrivacyMask`).
    public struct Privacy: Sendable, Equatable {
        /// Rectangles of the picture as shown, in fractions.
        public var masks: [MotionRegion] = []
        /// A PNG as shown whose black pixels are masked.
        public var maskPicture: String?

        public init() {}

        public var isEmpty: Bool { masks.isEmpty && maskPicture == nil }
    }

    /// `[timelapse]`: one frame every `intervalSeconds` into a movie a day
    /// (`timelapse/YYYYMMDD.mp4`), played at `framesPerSecond`.
    public struct Timelapse: Sendable, Equatable {
        /// Seconds between two frames; 0 (the default): no timelapse.
        public var intervalSeconds = 0
        /// The movie's frame rate: 30 plays an hour of one-second frames in two minutes.
        public var framesPerSecond = 30

        public init() {}

        public var isEnabled: Bool { intervalSeconds > 0 }
    }

    /// The keys of the `[overlay]`, `[privacy]` and `[timelapse]` sections.
    static var pictureSchema: [ConfigKey] {
        [
            .string("overlay.text", allowed: "\"\" (none) or one line of text with strftime conversions (%Y %m %d %H %M %S …) and the fields {device_name}, {device_id}, {frame}, {event}") { c, text in
                guard text.count <= 120, (try? OverlayText(text)) != nil else { return false }
                c.overlay.text = text
                return true
            },
            .choice("overlay.position", OverlayPosition.self) { c, v in c.overlay.position = v },
            .number("overlay.size_percent", 1...20, unit: " percent of the picture's height") { c, v in c.overlay.sizePercent = v },
            .bool("overlay.preview") { c, v in c.overlay.onPreview = v },
            ConfigKey(path: "privacy.masks",
                      allowed: "a list of rectangles of the picture as shown: \"left,top,width,height\" in percent, such as [\"60,0,40,30\"], or [left, top, width, height] in fractions, such as [[0.6, 0, 0.4, 0.3]]") { c, value in
                guard case .array(let items) = value else { return false }
                var regions: [MotionRegion] = []
                for item in items {
                    switch item {
                    case .string(let text):
                        guard let region = Self.percentRectangle(text) else { return false }
                        regions.append(region)
                    case .array(let numbers):
                        guard let region = Self.fractionRectangle(numbers) else { return false }
                        regions.append(region)
                    default:
                        return false
                    }
                }
                c.privacy.masks = regions
                return true
            },
            .integer("timelapse.interval_seconds", 0...86_400, unit: " seconds (0: no timelapse)") { c, v in c.timelapse.intervalSeconds = v },
            .integer("timelapse.fps", 1...60, unit: " frames a second") { c, v in c.timelapse.framesPerSecond = v },
            .string("privacy.mask_png", allowed: "\"\" (none) or the absolute path of a PNG of the picture as shown whose black pixels are masked") { c, text in
                guard Self.isMaskPNGPath(text) else { return false }
                c.privacy.maskPicture = text.isEmpty ? nil : text
                return true
            },
        ]
    }

    /// [left, top, width, height] in fractions (the rectangle inside the frame); nil for anything else.
    static func fractionRectangle(_ numbers: [TOMLValue]) -> MotionRegion? {
        let values = numbers.map { value -> Double? in
            switch value {
            case .integer(let raw): Double(raw)
            case .float(let raw): raw
            default: nil
            }
        }
        guard values.count == 4, let left = values[0], let top = values[1], let width = values[2], let height = values[3],
              [left, top, width, height].allSatisfy({ $0.isFinite && $0 >= 0 && $0 <= 1 }),
              width > 0, height > 0, left + width <= 1 + 1e-9, top + height <= 1 + 1e-9 else { return nil }
        return MotionRegion(x: left, y: top, width: width, height: height)
    }
}
