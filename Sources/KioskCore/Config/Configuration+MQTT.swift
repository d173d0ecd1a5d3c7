extension Configuration {
    /// The user's MQTT broker (`[mqtt]`): state, events and snapshots out, commands in,
    /// and Home Assistant discovery. Off while `url` is empty.
    public struct MQTT: Sendable, Equatable {
        public var broker: MQTTBrokerAddress?
        public var username = ""
        /// A file holding the password (never the password in the config).
        public var passwordFile: String?
        /// The CA certificate(s) an `mqtts://` broker is checked against; nil: the system's.
        public var caFile: String?
        public var topicPrefix = "kioskcam"
        public var discoveryPrefix = "homeassistant"
        /// Whether `set/record`, `set/snapshot` and `set/stream` are obeyed.
        public var commands = true
        /// How often the retained state is re-published even when nothing changed.
        public var stateIntervalSeconds = 30
        /// Messages held while the broker is away; beyond it the oldest are dropped.
        public var queueMessages = 256
        /// How often the retained still (Home Assistant's camera picture) is renewed from
        /// the camera, besides on a snapshot or an event; 0: only then.
        public var stillIntervalSeconds = 60
        /// The device's name in Home Assistant; empty: "KioskCam" and the id's start.
        public var deviceName = ""

        public init() {}
    }

    /// The keys of the `[mqtt]` section.
    static var mqttSchema: [ConfigKey] {
        [
            .string("mqtt.url", allowed: "\"\" (off) or mqtt://host[:port] or mqtts://host[:port]") { c, text in
                if text.isEmpty {
                    c.mqtt.broker = nil
                    return true
                }
                guard let broker = MQTTBrokerAddress(url: text) else { return false }
                c.mqtt.broker = broker
                return true
            },
            .string("mqtt.username", allowed: "a user name without control characters") { c, text in
                guard !text.contains(where: { $0.isNewline || $0 == "\0" }) else { return false }
                c.mqtt.username = text
                return true
            },
            .string("mqtt.password_file", allowed: "\"\" or the absolute path of a file holding the password") { c, text in
                guard let path = Self.optionalAbsolutePath(text) else { return false }
                c.mqtt.passwordFile = path.isEmpty ? nil : path
                return true
            },
            .string("mqtt.ca_file", allowed: "\"\" (the system's CAs) or the absolute path of a PEM file") { c, text in
                guard let path = Self.optionalAbsolutePath(text) else { return false }
                c.mqtt.caFile = path.isEmpty ? nil : path
                return true
            },
            .string("mqtt.topic_prefix", allowed: "one or more topic levels without +, # or a leading/trailing /") { c, text in
                guard FleetTopics.isValidPrefix(text) else { return false }
                c.mqtt.topicPrefix = text
                return true
            },
            .string("mqtt.discovery_prefix", allowed: "one or more topic levels without +, # or a leading/trailing /") { c, text in
                guard FleetTopics.isValidPrefix(text) else { return false }
                c.mqtt.discoveryPrefix = text
                return true
            },
            .bool("mqtt.commands") { c, v in c.mqtt.commands = v },
            .integer("mqtt.state_interval_seconds", 5...3600, unit: " seconds") { c, v in c.mqtt.stateIntervalSeconds = v },
            .integer("mqtt.queue_messages", 16...100_000, unit: " messages") { c, v in c.mqtt.queueMessages = v },
            ConfigKey(path: "mqtt.still_interval_seconds", allowed: "0 (only on a snapshot or an event) or a whole number from 10 to 86400 seconds") { c, value in
                guard case .integer(let raw) = value, let seconds = Int(exactly: raw), seconds == 0 || (10...86_400).contains(seconds) else { return false }
                c.mqtt.stillIntervalSeconds = seconds
                return true
            },
            .string("mqtt.device_name", allowed: "up to 64 characters without control characters") { c, text in
                guard text.count <= 64, !text.contains(where: { $0.isNewline || $0.asciiValue.map { $0 < 32 || $0 == 127 } == true }) else { return false }
                c.mqtt.deviceName = text
                return true
            },
        ]
    }

    /// "" or an absolute path without control characters; nil when neither.
    static func optionalAbsolutePath(_ text: String) -> String? {
        guard text.isEmpty || (text.hasPrefix("/") && !text.contains(where: { $0.isNewline || $0 == "\0" })) else { return nil }
        return text
    }
}

/// Where the broker is: `mqtt://host[:port]` (1883) or `mqtts://host[:port]` (8883).
public struct MQTTBrokerAddress: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var tls: Bool

    public init(host: String, port: Int, tls: Bool) {
        self.host = host
        self.port = port
        self.tls = tls
    }

    /// Nil for anything else: another scheme, an empty host, a port outside 1…65535, a
    /// path, user info (credentials belong in `username` / `password_file`).
    public init?(url: String) {
        let tls: Bool
        let rest: Substring
        if url.hasPrefix("mqtt://") {
            tls = false
            rest = url.dropFirst("mqtt://".count)
        } else if url.hasPrefix("mqtts://") {
            tls = true
            rest = url.dropFirst("mqtts://".count)
        } else {
            return nil
        }
        let authority = rest.hasSuffix("/") ? rest.dropLast() : rest
        guard !authority.isEmpty, !authority.contains(where: { "/@?# \t\r\n\0".contains($0) }) else { return nil }
        var host = authority
        var port = tls ? 8883 : 1883
        if authority.hasPrefix("[") {
            // [IPv6]:port
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":"), let number = Int(after.dropFirst()), (1...65_535).contains(number) else { return nil }
                port = number
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            guard let number = Int(authority[authority.index(after: colon)...]), (1...65_535).contains(number) else { return nil }
            port = number
        }
        guard !host.isEmpty, !host.contains(":") || authority.hasPrefix("[") else { return nil }
        self.init(host: String(host), port: port, tls: tls)
    }

    public var description: String {
        (tls ? "mqtts://" : "mqtt://") + (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
    }
}
