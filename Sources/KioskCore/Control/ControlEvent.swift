import Foundation

/// The kind of an event line. A struct rather than an enum so a client can show kinds a
/// newer daemon sends without failing.
public struct ControlEventKind: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The recorder's state changed (`state`, plus `file`, `error` when known).
    public static let state = ControlEventKind(rawValue: "state")
    /// A physical button was pressed (`button`, `press`: short/long).
    public static let button = ControlEventKind(rawValue: "button")
    /// The touch screen was pressed or released (`phase`, `x`, `y`).
    public static let touch = ControlEventKind(rawValue: "touch")
    /// Sound levels, about ten a second (`rms_dbfs`, `peak_dbfs`).
    public static let levels = ControlEventKind(rawValue: "levels")
    /// Live progress of a recording (`bytes`, `seconds`, `segment`, `dropped_frames`).
    public static let progress = ControlEventKind(rawValue: "progress")
    /// An event clip's new/update/end message (the event log's line, as an object).
    public static let event = ControlEventKind(rawValue: "event")
    /// A `kioskcam broadcast` changed state (`state`: starting, live, reconnecting,
    /// stopped, error; `bytes`, `dropped_gops`, `source`, `error`).
    public static let broadcast = ControlEventKind(rawValue: "broadcast")
    /// Sent by the server, not subscribable: this client read too slowly and `count`
    /// events were dropped since the last line it received.
    public static let dropped = ControlEventKind(rawValue: "dropped")

    /// What `subscribe` accepts.
    public static let subscribable: [ControlEventKind] = [.state, .button, .touch, .levels, .progress, .event, .broadcast]

    public var description: String { rawValue }
}

/// One event line: `{"v":1,"event":"state","data":{…}}`.
public struct ControlEvent: Sendable, Equatable {
    public var kind: ControlEventKind
    public var data: [String: JSONValue]

    public init(_ kind: ControlEventKind, _ data: [String: JSONValue] = [:]) {
        self.kind = kind
        self.data = data
    }

    /// The event as one line (no newline).
    public func line() -> String {
        JSONValue.object(["v": .integer(Int64(ControlProtocol.version)), "event": .string(kind.rawValue), "data": .object(data)]).description
    }

    /// The recorder's state; `file` and `error` when there is one.
    public static func state(_ state: RecordingState, file: String? = nil, error: String? = nil) -> ControlEvent {
        var data: [String: JSONValue] = ["state": .string(state.rawValue)]
        if let file { data["file"] = .string(file) }
        if let error { data["error"] = .string(error) }
        return ControlEvent(.state, data)
    }

    /// Sound levels per channel.
    public static func levels(_ levels: AudioLevels) -> ControlEvent {
        ControlEvent(.levels, ["rms_dbfs": .array(levels.rmsDBFS.map(JSONValue.number)),
                               "peak_dbfs": .array(levels.peakHoldDBFS.map(JSONValue.number))])
    }

    /// A touch press or release (moves are too many to be worth sending).
    public static func touch(_ event: TouchEvent) -> ControlEvent {
        ControlEvent(.touch, ["phase": .string(event.phase.rawValue), "x": .integer(Int64(event.point.x)),
                              "y": .integer(Int64(event.point.y)), "slot": .integer(Int64(event.slot))])
    }

    /// A button: its configured name and `press` ("short", "long", …).
    public static func button(_ name: String, press: String) -> ControlEvent {
        ControlEvent(.button, ["button": .string(name), "press": .string(press)])
    }

    /// An event clip's message, with the same fields as its event-log line.
    public static func event(_ message: EventMessage) -> ControlEvent {
        guard case .object(let data)? = try? JSONValue(encoding: message) else { return ControlEvent(.event, ["id": .string(message.id)]) }
        return ControlEvent(.event, data)
    }

    /// A human-readable one-line rendering for `kioskcam watch`.
    public var summary: String {
        let fields = data.sorted { $0.key < $1.key }.map { key, value -> String in
            if case .string(let text) = value { return "\(key)=\(text)" }
            if case .number(let number) = value { return "\(key)=\(String(format: "%.1f", number))" }
            let numbers = (value.arrayValue ?? []).compactMap(\.doubleValue)
            if let items = value.arrayValue, !items.isEmpty, numbers.count == items.count {
                return "\(key)=" + numbers.map { String(format: "%.1f", $0) }.joined(separator: ",")
            }
            return "\(key)=\(value)"
        }
        return ([kind.rawValue] + fields).joined(separator: " ")
    }
}
