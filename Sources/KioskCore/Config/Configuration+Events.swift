extension Configuration {
    /// What the camera records: everything, event clips only, or both.
    public enum RecordingMode: String, Sendable, Equatable, CaseIterable {
        case continuous
        case events
        case both
    }

    /// Event clips (`[events]`): what triggers them and how long they are.
    public struct Events: Sendable, Equatable {
        public var mode: RecordingMode = .continuous
        public var timing = EventTiming()
        /// Motion on the luma branch triggers a clip.
        public var motion = true
        /// Sound at or above `soundDBFS` for `soundMilliseconds` triggers a clip.
        public var sound = false
        public var soundDBFS = -20.0
        public var soundMilliseconds = 500

        public init() {}

        /// The sound trigger these settings describe.
        public var soundTrigger: SoundTrigger {
            SoundTrigger(thresholdDBFS: soundDBFS, minimumMilliseconds: soundMilliseconds)
        }
    }

    /// Motion detection (`[motion]`).
    public struct Motion: Sendable, Equatable {
        public var thresholdPercent = 1.5
        public var minimumFrames = 2
        public var lightSwitchPercent = 50.0
        /// Luma frames a second the detector reads.
        public var framesPerSecond = 8
        /// Rectangles where motion is not looked for, as fractions of the frame.
        public var ignoredRegions: [MotionRegion] = []
        /// A PNG the size of (or scaled to) the frame: its dark pixels are ignored.
        public var maskPicture: String?

        public init() {}

        /// The detector settings these describe.
        public var detectorSettings: MotionDetector.Settings {
            MotionDetector.Settings(thresholdPercent: thresholdPercent, minimumFrames: minimumFrames,
                                    lightSwitchPercent: lightSwitchPercent)
        }
    }

    /// The keys of the `[events]` and `[motion]` sections.
    static var eventsSchema: [ConfigKey] {
        [
            .choice("events.mode", RecordingMode.self) { c, v in c.events.mode = v },
            .number("events.pre_seconds", 0...60, unit: " seconds") { c, v in c.events.timing.preSeconds = v },
            .number("events.post_seconds", 0...600, unit: " seconds") { c, v in c.events.timing.postSeconds = v },
            .number("events.gap_seconds", 0...600, unit: " seconds") { c, v in c.events.timing.gapSeconds = v },
            .number("events.max_seconds", 10...3600, unit: " seconds") { c, v in c.events.timing.maxSeconds = v },
            .bool("events.motion") { c, v in c.events.motion = v },
            .bool("events.sound") { c, v in c.events.sound = v },
            .number("events.sound_dbfs", -90...0, unit: " dBFS") { c, v in c.events.soundDBFS = v },
            .integer("events.sound_ms", 20...60_000, unit: " ms") { c, v in c.events.soundMilliseconds = v },

            .number("motion.threshold_percent", 0.01...100, unit: " percent of the watched area") { c, v in
                c.motion.thresholdPercent = v
            },
            .integer("motion.min_frames", 1...100, unit: " frames") { c, v in c.motion.minimumFrames = v },
            .number("motion.lightswitch_percent", 1...100, unit: " percent of the watched area") { c, v in
                c.motion.lightSwitchPercent = v
            },
            .integer("motion.fps", 1...15, unit: " luma frames a second") { c, v in c.motion.framesPerSecond = v },
            ConfigKey(path: "motion.mask",
                      allowed: "a list of rectangles \"left,top,width,height\" in percent of the frame, such as [\"0,0,100,20\"]") { c, value in
                guard case .array(let items) = value else { return false }
                var regions: [MotionRegion] = []
                for item in items {
                    guard case .string(let text) = item, let region = Self.percentRectangle(text) else { return false }
                    regions.append(region)
                }
                c.motion.ignoredRegions = regions
                return true
            },
            .string("motion.mask_png", allowed: "\"\" (none) or the absolute path of a PNG whose black pixels are not watched") { c, text in
                guard Self.isMaskPNGPath(text) else { return false }
                c.motion.maskPicture = text.isEmpty ? nil : text
                return true
            },
        ]
    }

    /// A mask PNG's setting: "" (none) or an absolute path ending in .png, on one line.
    static func isMaskPNGPath(_ text: String) -> Bool {
        (text.isEmpty || (text.hasPrefix("/") && text.lowercased().hasSuffix(".png"))) && !text.contains(where: { $0.isNewline || $0 == "\0" })
    }

    /// "left,top,width,height" in percent (0…100, the rectangle inside the frame) as
    /// fractions; nil for anything else.
    static func percentRectangle(_ text: String) -> MotionRegion? {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
            .map { Double(String($0.filter { $0 != " " && $0 != "\t" })) }
        guard parts.count == 4, let left = parts[0], let top = parts[1], let width = parts[2], let height = parts[3],
              [left, top, width, height].allSatisfy({ $0.isFinite && $0 >= 0 && $0 <= 100 }),
              width > 0, height > 0, left + width <= 100, top + height <= 100 else { return nil }
        return MotionRegion(x: left / 100, y: top / 100, width: width / 100, height: height / 100)
    }
}
