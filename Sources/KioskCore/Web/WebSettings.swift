/// The small, safe subset of the configuration the web app's settings page shows: what
/// each key holds now, and what it accepts (the schema's own words, as `config check`
/// says them).
public enum WebSettings {
    public static let keys = ["camera.rotation", "camera.mirror", "motion.threshold_percent", "motion.mask", "events.mode",
                              "events.pre_seconds", "events.post_seconds", "storage.retention_days", "stream.url",
                              "overlay.text", "overlay.position", "privacy.masks",
                              "timelapse.interval_seconds", "timelapse.fps"]

    /// The keys' values in `configuration`, as JSON.
    public static func values(of configuration: Configuration) -> [String: JSONValue] {
        let timing = configuration.events.timing
        return [
            "camera.rotation": .integer(Int64(configuration.camera.orientation.rotation.rawValue)),
            "camera.mirror": .bool(configuration.camera.orientation.mirror),
            "motion.threshold_percent": .number(configuration.motion.thresholdPercent),
            "motion.mask": .array(configuration.motion.ignoredRegions.map { .array([.number($0.x), .number($0.y), .number($0.width), .number($0.height)]) }),
            "events.mode": .string(configuration.events.mode.rawValue),
            "events.pre_seconds": .number(timing.preSeconds),
            "events.post_seconds": .number(timing.postSeconds),
            "storage.retention_days": .integer(Int64(configuration.storage.retentionDays)),
            "stream.url": .string(configuration.stream.url),
            "overlay.text": .string(configuration.overlay.text),
            "overlay.position": .string(configuration.overlay.position.rawValue),
            "privacy.masks": .array(configuration.privacy.masks.map { .array([.number($0.x), .number($0.y), .number($0.width), .number($0.height)]) }),
            "timelapse.interval_seconds": .integer(Int64(configuration.timelapse.intervalSeconds)),
            "timelapse.fps": .integer(Int64(configuration.timelapse.framesPerSecond)),
        ]
    }

    /// What each key accepts.
    public static var schema: [String: JSONValue] {
        Dictionary(uniqueKeysWithValues: keys.map { key in
            (key, JSONValue.object(["allowed": .string(Configuration.allowedValues(forKey: key) ?? "")]))
        })
    }
}

extension Configuration {
    /// What a key accepts, in words (nil for an unknown key).
    public static func allowedValues(forKey key: String) -> String? { schema.first { $0.path == key }?.allowed }
}
