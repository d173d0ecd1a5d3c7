import Foundation

/// The MQTT topics of one board: everything under `<topic_prefix>/<device-id>/`, and its
/// Home Assistant discovery configs under `<discovery_prefix>/<component>/kioskcam_<id>/`.
public struct FleetTopics: Sendable, Equatable {
    public let base: String
    public let discoveryPrefix: String
    /// The device id as used in topics and Home Assistant ids (only [A-Za-z0-9_-]).
    public let node: String

    public init(topicPrefix: String, discoveryPrefix: String, deviceID: String) {
        node = Self.sanitized(deviceID)
        base = topicPrefix + "/" + node
        self.discoveryPrefix = discoveryPrefix
    }

    /// `online`/`offline`, retained; `offline` is also the broker-held last will.
    public var availability: String { base + "/availability" }
    /// Retained JSON: what is recording, free space, devices, uptime.
    public var state: String { base + "/state" }
    /// Event clips' new/update/end messages.
    public var events: String { base + "/events" }
    /// When the last event started (ISO 8601, retained), published only once there is
    /// one: Home Assistant's timestamp sensor warns on anything that is not a time.
    public var lastEvent: String { base + "/last_event" }
    /// The latest still, a JPEG, retained (Home Assistant's MQTT camera shows it).
    public var snapshot: String { base + "/snapshot" }
    public var commandPrefix: String { base + "/set/" }
    /// What the daemon subscribes to for commands.
    public var commandFilter: String { base + "/set/+" }
    /// Home Assistant announces `online` here when it (re)starts.
    public var homeAssistantStatus: String { discoveryPrefix + "/status" }

    public func command(_ command: FleetCommand.Name) -> String { commandPrefix + command.rawValue }

    /// `<discovery_prefix>/<component>/kioskcam_<id>/<object>/config`.
    public func discoveryConfig(component: String, object: String) -> String {
        "\(discoveryPrefix)/\(component)/kioskcam_\(node)/\(object)/config"
    }

    /// One or more topic levels, none empty, without wildcards or control characters.
    public static func isValidPrefix(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 200
            && !text.split(separator: "/", omittingEmptySubsequences: false).contains(where: \.isEmpty)
            && !text.contains(where: { $0 == "+" || $0 == "#" || $0.isNewline || $0 == "\0" || $0 == " " })
    }

    static func sanitized(_ id: String) -> String {
        let kept = String(id.unicodeScalars.filter { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == "_") }.map(Character.init))
        return kept.isEmpty ? "unknown" : String(kept.prefix(64))
    }
}

/// A command received on `<base>/set/<name>`. Anything else is `nil` with a reason, to
/// be logged and ignored: the broker is not trusted to send well-formed commands.
public enum FleetCommand: Sendable, Equatable {
    case record(Bool)
    case snapshot
    case stream(Bool)

    public enum Name: String, Sendable, CaseIterable {
        case record, snapshot, stream
    }

    /// Payloads are short words; a longer one is malformed, whatever it holds.
    public static let maximumPayloadBytes = 64

    /// The command, or why the message is ignored.
    public static func parse(topic: String, payload: [UInt8], topics: FleetTopics) -> Result<FleetCommand, FleetCommandRejection> {
        guard topic.hasPrefix(topics.commandPrefix) else { return .failure(.unknownTopic(Self.printable(topic, limit: 120))) }
        let nameText = topic.dropFirst(topics.commandPrefix.count)
        guard let name = Name(rawValue: String(nameText)) else { return .failure(.unknownCommand(Self.printable(nameText, limit: 40))) }
        guard payload.count <= maximumPayloadBytes else { return .failure(.malformed(name, "\(payload.count) bytes")) }
        guard let text = String(validating: payload, as: UTF8.self) else { return .failure(.malformed(name, "not UTF-8")) }
        let word = text.trimmingCharacters(in: .whitespacesAndNewlines).uppercased()
        switch name {
        case .record, .stream:
            let on: Bool
            switch word {
            case "ON", "1", "TRUE": on = true
            case "OFF", "0", "FALSE": on = false
            default: return .failure(.malformed(name, "\"" + Self.printable(text, limit: 24) + "\""))
            }
            return .success(name == .record ? .record(on) : .stream(on))
        case .snapshot:
            // Home Assistant's button sends PRESS.
            guard ["", "PRESS", "ON", "1"].contains(word) else { return .failure(.malformed(name, "\"" + Self.printable(text, limit: 24) + "\"")) }
            return .success(.snapshot)
        }
    }

    /// What a log line may show of text from the broker: printable ASCII, `?` for the rest.
    static func printable(_ text: some StringProtocol, limit: Int) -> String {
        String(text.unicodeScalars.prefix(limit).map { $0.isASCII && $0.value >= 32 && $0.value < 127 ? Character($0) : "?" })
    }
}

/// Why a command message was ignored (logged, never acted on).
public enum FleetCommandRejection: Error, Sendable, Equatable, CustomStringConvertible {
    case unknownTopic(String)
    case unknownCommand(String)
    case malformed(FleetCommand.Name, String)

    public var description: String {
        switch self {
        case .unknownTopic(let topic): "a message on \(topic), which is not a command topic"
        case .unknownCommand(let name): "unknown command set/\(name) (known: record, snapshot, stream)"
        case .malformed(let name, let detail):
            switch name {
            case .snapshot: "set/snapshot wants PRESS (or nothing), not \(detail)"
            case .record, .stream: "set/\(name.rawValue) wants ON or OFF, not \(detail)"
            }
        }
    }
}
