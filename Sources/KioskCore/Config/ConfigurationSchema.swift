/// One settable key: its dotted name, what values it accepts (in words, for errors
/// and the example file) and how it applies a value.
struct ConfigKey {
    let path: String
    let allowed: String
    /// Applies a value; returns false when the value is not allowed.
    let apply: (inout Configuration, TOMLValue) -> Bool

    static func integer(_ path: String, _ range: ClosedRange<Int>, unit: String = "",
                        _ set: @escaping (inout Configuration, Int) -> Void) -> ConfigKey {
        ConfigKey(path: path, allowed: "a whole number from \(range.lowerBound) to \(range.upperBound)\(unit)") { config, value in
            guard case .integer(let raw) = value, let int = Int(exactly: raw), range.contains(int) else { return false }
            set(&config, int)
            return true
        }
    }

    static func number(_ path: String, _ range: ClosedRange<Double>, unit: String = "",
                       _ set: @escaping (inout Configuration, Double) -> Void) -> ConfigKey {
        ConfigKey(path: path, allowed: "a number from \(format(range.lowerBound)) to \(format(range.upperBound))\(unit)") { config, value in
            let number: Double
            switch value {
            case .integer(let raw): number = Double(raw)
            case .float(let raw): number = raw
            default: return false
            }
            guard range.contains(number) else { return false }
            set(&config, number)
            return true
        }
    }

    static func string(_ path: String, allowed: String,
                       _ set: @escaping (inout Configuration, String) -> Bool) -> ConfigKey {
        ConfigKey(path: path, allowed: allowed) { config, value in
            guard case .string(let text) = value else { return false }
            return set(&config, text)
        }
    }

    static func bool(_ path: String, _ set: @escaping (inout Configuration, Bool) -> Void) -> ConfigKey {
        ConfigKey(path: path, allowed: "true or false") { config, value in
            guard case .boolean(let flag) = value else { return false }
            set(&config, flag)
            return true
        }
    }

    /// A camera control: "auto" or a whole number.
    static func control(_ path: String, _ set: @escaping (inout Configuration, Configuration.ControlSetting) -> Void) -> ConfigKey {
        ConfigKey(path: path, allowed: "\"auto\" or a whole number (clamped to the camera's range)") { config, value in
            switch value {
            case .string("auto"): set(&config, .automatic)
            case .integer(let raw):
                guard let int = Int(exactly: raw) else { return false }
                set(&config, .value(int))
            default: return false
            }
            return true
        }
    }

    static func choice<Choice: RawRepresentable & CaseIterable>(
        _ path: String, _ type: Choice.Type, _ set: @escaping (inout Configuration, Choice) -> Void
    ) -> ConfigKey where Choice.RawValue == String {
        let names = Choice.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
        return string(path, allowed: "one of \(names)") { config, text in
            guard let choice = Choice(rawValue: text) else { return false }
            set(&config, choice)
            return true
        }
    }

    private static func format(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}

extension Configuration {
    /// Every key the file may contain. Adding a setting means adding a line to one of
    /// these lists and to `rootfs/etc/kioskcam/kioskcam.toml` (a test checks the two agree).
    static var schema: [ConfigKey] {
        captureSchema + eventsSchema + buttonsSchema + touchSchema + screenSchema + lockSchema + controlSchema + mqttSchema + uploadSchema
            + webSchema + rtspSchema + onvifSchema + pictureSchema
    }

    /// Storage, camera, microphone, encoder, snapshot and logging.
    static var captureSchema: [ConfigKey] {
        [
            .string("storage.media_root", allowed: "an absolute path such as \"/var/lib/kioskcam/media\"") { c, text in
                guard text.hasPrefix("/"), text.count > 1 else { return false }
                c.storage.mediaRoot = text
                return true
            },
            .number("storage.segment_seconds", 1...86_400, unit: " seconds") { c, v in c.storage.segmentSeconds = v },
            .integer("storage.segment_max_megabytes", 0...1_048_576, unit: " (0: no limit)") { c, v in
                c.storage.segmentMaxBytes = v == 0 ? nil : Int64(v) * 1_048_576
            },
            .number("storage.sync_interval_seconds", 0.2...60, unit: " seconds") { c, v in c.storage.syncIntervalSeconds = v },
            .integer("storage.retention_days", 1...3650, unit: " days") { c, v in c.storage.retentionDays = v },
            .integer("storage.event_retention_days", 0...3650, unit: " days (0: as retention_days)") { c, v in
                c.storage.eventRetentionDays = v == 0 ? nil : v
            },
            .integer("storage.min_free_megabytes", 0...16_777_216, unit: " (0: the larger of 1 GiB and one hour of recording)") { c, v in
                c.storage.minFreeBytes = v == 0 ? nil : Int64(v) * 1_048_576
            },
            .number("storage.min_free_percent", 0...50, unit: " percent (0: no percentage floor)") { c, v in
                c.storage.minFreePercent = v == 0 ? nil : v
            },

            .string("camera.source", allowed: "\"auto\", \"test\", a device such as \"/dev/video0\", \"libcamera\" or \"libcamera:ID\" (a camera `kioskcam probe` lists), or \"file:/path/to/frames.raw\"") { c, text in
                guard let source = CameraSource(parsing: text) else { return false }
                c.camera.source = source
                return true
            },
            .string("camera.size", allowed: "WIDTHxHEIGHT with even numbers from 64x64 to 4096x2160, such as \"1280x720\"") { c, text in
                guard let size = FrameSize(parsing: text), Self.isValidFrameSize(size) else { return false }
                c.camera.size = size
                return true
            },
            .integer("camera.fps", 1...120) { c, v in c.camera.framesPerSecond = v },
            .bool("camera.test_clock") { c, v in c.camera.testClock = v },
            // Every raw layout kioskcam records, in the negotiation's order. MJPEG is not a
            // choice here: the test pattern and raw files cannot deliver it, and a camera's
            // MJPEG is taken by itself when it serves the size and rate best.
            .string("camera.pixel_format", allowed: "\"auto\" or a raw camera layout: "
                    + CameraFormatNegotiation.usableFourCCs.compactMap { PixelFormat(rawValue: $0).map { "\"\($0.rawValue)\"" } }
                        .joined(separator: ", ")) { c, text in
                if text == "auto" { c.camera.pixelFormat = nil; return true }
                guard let format = PixelFormat(rawValue: text) else { return false }
                c.camera.pixelFormat = format
                return true
            },
            .number("camera.lost_after_seconds", 1...60, unit: " seconds") { c, v in c.camera.lostAfterSeconds = v },
            .integer("camera.zoom", -1_000_000...1_000_000, unit: " (clamped to the camera's range)") { c, v in c.camera.zoom = v },
            .control("camera.focus") { c, v in c.camera.focus = v },
            .control("camera.exposure") { c, v in c.camera.exposure = v },
            .control("camera.white_balance") { c, v in c.camera.whiteBalance = v },
            .integer("camera.brightness", -1_000_000...1_000_000, unit: " (clamped to the camera's range)") { c, v in c.camera.brightness = v },
            .integer("camera.contrast", -1_000_000...1_000_000, unit: " (clamped to the camera's range)") { c, v in c.camera.contrast = v },
            ConfigKey(path: "camera.rotation", allowed: "0, 90, 180 or 270 (degrees clockwise that turn the camera's picture upright)") { c, value in
                guard case .integer(let raw) = value, let degrees = Int(exactly: raw), let rotation = ScreenRotation(rawValue: degrees) else {
                    return false
                }
                c.camera.orientation.rotation = rotation
                return true
            },
            .bool("camera.mirror") { c, v in c.camera.orientation.mirror = v },

            .string("microphone.source", allowed: "\"auto\", an ALSA device such as \"alsa:default\" or \"alsa:hw:1,0\", \"tone\", \"silence\", \"none\" or \"file:/path/to/audio.wav\"") { c, text in
                guard let source = MicrophoneSource(parsing: text) else { return false }
                c.microphone.source = source
                return true
            },
            .integer("microphone.sample_rate", 8_000...96_000, unit: " Hz") { c, v in c.microphone.sampleRate = v },
            .integer("microphone.channels", 1...2) { c, v in c.microphone.channels = v },
            .number("microphone.tone_hz", 20...20_000, unit: " Hz") { c, v in c.microphone.toneFrequency = v },

            .string("encoder.video_codec", allowed: "\"auto\", \"null\" or a libavcodec H.264 encoder name such as \"libx264\" or \"h264_v4l2m2m\"") { c, text in
                guard !text.isEmpty, text.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else { return false }
                c.encoder.videoCodec = text
                return true
            },
            .string("encoder.preset", allowed: "a libx264 preset: " + Self.x264Presets.joined(separator: ", ")) { c, text in
                guard Self.x264Presets.contains(text) else { return false }
                c.encoder.preset = text
                return true
            },
            .string("encoder.tune", allowed: "a libx264 tune: none, " + Self.x264Tunes.joined(separator: ", ")) { c, text in
                guard text == "none" || Self.x264Tunes.contains(text) else { return false }
                c.encoder.tune = text
                return true
            },
            .integer("encoder.video_bitrate_kbps", 0...100_000, unit: " (0: the default from the frame size)") { c, v in
                c.encoder.videoBitrate = v == 0 ? nil : v * 1000
            },
            .integer("encoder.keyframe_interval", 1...EncodingPolicy.maximumKeyframeInterval, unit: " frames") { c, v in
                c.encoder.keyframeInterval = v
            },
            .integer("encoder.audio_bitrate_kbps", 16...320) { c, v in c.encoder.audioBitrate = v * 1000 },
            .integer("encoder.threads", 0...16, unit: " (0: automatic)") { c, v in c.encoder.threads = v },

            .string("stream.url", allowed: "\"\" (off), an rtmp://, rtsp:// or srt:// URL, or an absolute HLS folder (index.m3u8 goes in it) or playlist path ending in .m3u8") { c, text in
                let schemes = ["rtmp://", "rtmps://", "rtsp://", "srt://"]
                guard text.isEmpty || schemes.contains(where: text.hasPrefix) || (text.hasPrefix("/") && text.count > 1 && !text.contains("/../")),
                      !text.contains(where: { $0.isNewline || $0 == "\0" }) else { return false }
                c.stream.url = text
                return true
            },
            .bool("stream.audio") { c, v in c.stream.audio = v },
            ConfigKey(path: "broadcast.to",
                      allowed: "a list of up to 8 destinations: \"library\", rtmp://, rtsp:// or srt:// URLs, or absolute HLS folders, "
                        + "such as [\"library\", \"rtmp://192.168.1.10/live/kiosk\"]") { c, value in
                guard case .array(let items) = value, items.count <= 8 else { return false }
                var destinations: [String] = []
                for item in items {
                    guard case .string(let text) = item, (try? BroadcastDestination(parsing: text)) != nil else { return false }
                    destinations.append(text)
                }
                c.broadcast.destinations = destinations
                return true
            },
            .string("broadcast.size", allowed: "\"\" (the largest that fits the broadcast's memory budget) or WIDTHxHEIGHT, "
                        + "each even from 16 to 8192, no larger than the screen and of its shape, such as \"960x540\"") { c, text in
                guard text.isEmpty || FrameSize(broadcastSize: text) != nil else { return false }
                c.broadcast.size = FrameSize(broadcastSize: text)
                return true
            },

            .integer("snapshot.jpeg_quality", 1...100) { c, v in c.snapshot.jpegQuality = v },

            .choice("logging.level", LogLevel.self) { c, v in c.logging.level = v },
        ]
    }

    /// libx264's tunes.
    static let x264Tunes = ["zerolatency", "film", "animation", "grain", "stillimage", "fastdecode", "psnr", "ssim"]

    /// libx264's presets, fastest first.
    static let x264Presets = ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow"]

    public static func isValidFrameSize(_ size: FrameSize) -> Bool {
        (64...4096).contains(size.width) && (64...2160).contains(size.height)
            && size.width % 2 == 0 && size.height % 2 == 0
    }

    /// The dotted names of every key, for documentation checks.
    public static var knownKeys: [String] { schema.map(\.path) }

    /// Reads a configuration file's text on top of the defaults.
    /// - Parameters:
    ///   - text: The TOML text.
    ///   - file: The file's path, used in error messages.
    /// - Throws: `ConfigurationError` naming the line and key of the first problem:
    ///   a syntax error, an unknown key, or a value that is not allowed.
    public init(toml text: String, file: String? = nil) throws(ConfigurationError) {
        self.init()
        let document: TOMLDocument
        do {
            document = try TOMLDocument(parsing: text)
        } catch {
            throw ConfigurationError(file: file, line: error.line, message: error.message)
        }
        let keys = Dictionary(Self.schema.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        for entry in document.entries {
            let path = entry.dottedPath
            guard let key = keys[path] else {
                throw ConfigurationError(file: file, line: entry.line, key: path,
                                         message: Self.unknownKeyMessage(path, known: keys.keys.sorted()))
            }
            guard key.apply(&self, entry.value) else {
                throw ConfigurationError(file: file, line: entry.line, key: path,
                                         message: "\(entry.value.shortDescription) is not allowed here; use \(key.allowed)")
            }
        }
    }

    private static func unknownKeyMessage(_ path: String, known: [String]) -> String {
        let section = path.split(separator: ".").dropLast().joined(separator: ".")
        let siblings = known.filter { $0.hasPrefix(section + ".") }
        if siblings.isEmpty {
            let sections = Set(known.compactMap { $0.split(separator: ".").first.map(String.init) }).sorted()
            return "unknown key; the sections are [\(sections.joined(separator: "], ["))]"
        }
        let names = siblings.map { String($0.dropFirst(section.count + 1)) }
        return "unknown key; [\(section)] knows: \(names.joined(separator: ", "))"
    }
}

extension TOMLValue {
    /// The value as it would appear in the file, for error messages.
    var shortDescription: String {
        switch self {
        case .string(let s): "\"\(s)\""
        case .integer(let i): String(i)
        case .float(let f): String(f)
        case .boolean(let b): String(b)
        case .array(let values): "[" + values.map(\.shortDescription).joined(separator: ", ") + "]"
        }
    }
}

extension Configuration {
    /// Sets one key from outside the file (a command-line option), with the same
    /// checks and messages as the file.
    /// - Parameters:
    ///   - key: Dotted key name, e.g. `camera.size`.
    ///   - value: The value as TOML would hold it.
    ///   - origin: What to call the source in errors, e.g. `--size`.
    /// - Throws: `ConfigurationError` for an unknown key or a value that is not allowed.
    public mutating func set(_ key: String, _ value: TOMLValue, origin: String) throws(ConfigurationError) {
        guard let spec = Self.schema.first(where: { $0.path == key }) else {
            throw ConfigurationError(file: origin, key: key, message: "unknown key")
        }
        guard spec.apply(&self, value) else {
            throw ConfigurationError(file: origin, key: key,
                                     message: "\(value.shortDescription) is not allowed here; use \(spec.allowed)")
        }
    }
}
