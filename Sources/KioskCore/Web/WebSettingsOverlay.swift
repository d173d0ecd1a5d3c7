/// The settings an admin saved from the web app: a few keys of `WebSettings.keys`, kept in
/// a small TOML file in the state directory and applied on top of
/// `/etc/kioskcam/kioskcam.toml` wherever the configuration is read.
///
/// Why a second file rather than rewriting /etc: the daemon runs as `kioskcam` under
/// `ProtectSystem=strict`, so /etc stays root's and read-only to it; the web can change
/// only these keys, and the owner's comments and layout in the main file stay as written.
/// `kioskcam config check` and `kioskcam status` name the file when it exists, so a value
/// that differs from /etc is never a mystery.
public struct WebSettingsOverlay: Sendable, Equatable {
    /// The file's name in the state directory.
    public static let fileName = "web-settings.toml"

    /// Saved keys and their values, as the main file would hold them.
    public private(set) var values: [String: TOMLValue] = [:]

    public init() {}

    /// Reads the overlay file's text.
    /// - Throws: `ConfigurationError` naming `file` and the line for a syntax error, a key the
    ///   web cannot set, or a value the schema refuses.
    public init(toml text: String, file: String) throws(ConfigurationError) {
        let document: TOMLDocument
        do {
            document = try TOMLDocument(parsing: text)
        } catch {
            throw ConfigurationError(file: file, line: error.line, message: error.message)
        }
        var probe = Configuration()
        for entry in document.entries {
            let key = entry.dottedPath
            guard WebSettings.keys.contains(key) else {
                throw ConfigurationError(file: file, line: entry.line, key: key,
                                         message: "not a key the web app saves; it belongs in /etc/kioskcam/kioskcam.toml (remove it here)")
            }
            do {
                try probe.set(key, entry.value, origin: file)
            } catch {
                throw ConfigurationError(file: file, line: entry.line, key: key, message: error.message)
            }
            values[key] = entry.value
        }
    }

    /// Applies the saved keys to `configuration`, with the schema's checks.
    public func apply(to configuration: inout Configuration, file: String) throws(ConfigurationError) {
        for key in values.keys.sorted() {
            if let value = values[key] { try configuration.set(key, value, origin: file) }
        }
    }

    /// Why a change from the web was refused: the key and what it accepts.
    public struct Refusal: Error, Sendable, Equatable {
        public var key: String
        public var message: String
    }

    /// Takes the changes a PUT /api/settings carries (the JSON of `WebSettings.values`),
    /// each checked against the schema on top of `configuration` (the one in effect, so the
    /// same rules as `config check`). Nothing is taken unless every change is valid.
    /// - Throws: `Refusal` for the first key that is unknown, of the wrong type or refused.
    public mutating func take(_ changes: [String: JSONValue], onTopOf configuration: Configuration) throws(Refusal) {
        guard !changes.isEmpty else { throw Refusal(key: "", message: "no settings in the request: send {\"settings\": {\"key\": value}}") }
        var probe = configuration
        var taken = values
        for key in changes.keys.sorted() {
            guard WebSettings.keys.contains(key), let json = changes[key] else {
                throw Refusal(key: key, message: "not a setting the web app changes; the settings are \(WebSettings.keys.joined(separator: ", "))")
            }
            guard let value = Self.tomlValue(key, json) else {
                throw Refusal(key: key, message: "\(json) is not allowed; use \(Configuration.allowedValues(forKey: key) ?? "a valid value")"
                                + (key == "motion.mask" || key == "privacy.masks" ? " (from the web: a list of [x, y, width, height] fractions of the frame)" : ""))
            }
            if key == "stream.url", case .string(let url) = value, url.hasPrefix("/") {
                throw Refusal(key: key, message: "an HLS path on the board is set in /etc/kioskcam/kioskcam.toml only; from the web use \"\" or an rtmp://, rtmps://, rtsp:// or srt:// URL")
            }
            do {
                try probe.set(key, value, origin: "web")
            } catch {
                throw Refusal(key: key, message: error.message)
            }
            taken[key] = value
        }
        values = taken
    }

    /// The JSON the web app sends, as TOML holds it; nil when the type cannot be the key's.
    /// `motion.mask` and `privacy.masks` arrive as [x, y, width, height] fractions (as GET shows them) and are kept
    /// as the file's "left,top,width,height" percent strings.
    static func tomlValue(_ key: String, _ json: JSONValue) -> TOMLValue? {
        switch (key, json) {
        case ("motion.mask", .array(let rectangles)), ("privacy.masks", .array(let rectangles)):
            var strings: [TOMLValue] = []
            for rectangle in rectangles {
                guard case .array(let numbers) = rectangle, numbers.count == 4 else { return nil }
                var parts: [String] = []
                for number in numbers {
                    let fraction: Double
                    switch number {
                    case .integer(let whole): fraction = Double(whole)
                    case .number(let real): fraction = real
                    default: return nil
                    }
                    guard fraction.isFinite, (0...1).contains(fraction) else { return nil }
                    parts.append(Self.percent(fraction))
                }
                strings.append(.string(parts.joined(separator: ",")))
            }
            return .array(strings)
        case ("motion.mask", _), ("privacy.masks", _): return nil
        case (_, .bool(let flag)): return .boolean(flag)
        case (_, .integer(let whole)): return .integer(whole)
        case (_, .number(let real)):
            guard real.isFinite else { return nil }
            // 30.0 from a number field is the whole number 30 where the key wants one.
            if real == real.rounded(), abs(real) < 1e15, Self.wantsInteger(key) { return .integer(Int64(real)) }
            return .float(real)
        case (_, .string(let text)):
            guard !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else { return nil }
            return .string(text)
        default: return nil
        }
    }

    private static func wantsInteger(_ key: String) -> Bool { key == "camera.rotation" || key == "storage.retention_days" }

    /// A fraction as a percent with at most 4 decimals, no trailing zeros.
    private static func percent(_ fraction: Double) -> String {
        let scaled = (fraction * 1_000_000).rounded() / 10_000
        if scaled == scaled.rounded() { return String(Int(scaled)) }
        var text = String(scaled)
        if text.contains("e") { text = "0" }
        return text
    }

    /// The file's text: a header that says what it is, then one table per section.
    public var toml: String {
        var lines = ["# Saved by kioskcam's web app (Settings). These keys override /etc/kioskcam/kioskcam.toml.",
                     "# Remove a line (or this file) to go back to the main file's value; then systemctl reload kioskcam."]
        var sections: [String: [(String, TOMLValue)]] = [:]
        for (key, value) in values {
            let parts = key.split(separator: ".", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { continue }
            sections[parts[0], default: []].append((parts[1], value))
        }
        for section in sections.keys.sorted() {
            lines.append("")
            lines.append("[\(section)]")
            for (name, value) in (sections[section] ?? []).sorted(by: { $0.0 < $1.0 }) {
                lines.append("\(name) = \(Self.render(value))")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A value as the TOML reader reads it back (strings escaped).
    public static func render(_ value: TOMLValue) -> String {
        switch value {
        case .string(let text):
            var escaped = ""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\"": escaped += "\\\""
                case "\\": escaped += "\\\\"
                case _ where scalar.properties.generalCategory == .control:
                    let hex = String(scalar.value, radix: 16, uppercase: true)
                    escaped += "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
                default: escaped.unicodeScalars.append(scalar)
                }
            }
            return "\"\(escaped)\""
        case .integer(let whole): return String(whole)
        case .float(let real): return real.isFinite ? "\(real)" : "0.0"
        case .boolean(let flag): return flag ? "true" : "false"
        case .array(let items): return "[" + items.map(render).joined(separator: ", ") + "]"
        }
    }
}
