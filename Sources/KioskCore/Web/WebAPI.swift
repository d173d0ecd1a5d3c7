import Foundation

/// The web API is the control protocol over HTTPS: each state-changing call becomes the
/// control request the socket, the buttons and MQTT send, parsed by the same parser
/// (`ControlCall.parse`), so both front doors accept exactly the same things.
public enum WebAPI {
    /// The largest JSON body a call may have.
    public static let maximumBodyBytes = 16 * 1024

    /// The control request for `route` with the JSON `body`.
    /// - Returns: The request, or a `bad_argument`/`malformed_json` error naming the field.
    public static func controlRequest(for route: WebRoute, body: [UInt8]) -> Result<ControlRequest, ControlError> {
        let object: [String: JSONValue]
        switch parseObject(body) {
        case .success(let value): object = value
        case .failure(let error): return .failure(error)
        }
        func string(_ key: String, _ allowed: [String]) throws(ControlError) -> String {
            guard case .string(let text)? = object[key], allowed.contains(text) else {
                throw ControlError.badArgument(key, "must be one of \(allowed.map { "\"\($0)\"" }.joined(separator: ", "))")
            }
            return text
        }
        do {
            switch route {
            case .recording:
                try rejectStray(object, allowed: ["action", "kind", "duration"])
                if try string("action", ["start", "stop"]) == "stop" { return call("record.stop", [:]) }
                var arguments: [String: JSONValue] = [:]
                if object["kind"] != nil { arguments["audio_only"] = .bool(try string("kind", ["video", "audio"]) == "audio") }
                if let duration = object["duration"] { arguments["duration"] = duration }
                return call("record.start", arguments)
            case .snapshot:
                try rejectStray(object, allowed: [])
                return call("snapshot", [:])
            case .event:
                try rejectStray(object, allowed: ["action"])
                return call(try string("action", ["start", "stop"]) == "start" ? "event.start" : "event.stop", [:])
            case .export:
                return call("clip.export", object)
            default:
                return .failure(ControlError(.unknownCommand, "\(route) is not a control request"))
            }
        } catch {
            return .failure(error)
        }
    }

    /// A JSON object from a body; an empty body is an empty object.
    public static func parseObject(_ body: [UInt8]) -> Result<[String: JSONValue], ControlError> {
        guard body.count <= maximumBodyBytes else {
            return .failure(ControlError(.tooLarge, "the body is \(body.count) bytes; the limit is \(maximumBodyBytes)"))
        }
        if body.allSatisfy({ $0 == 32 || $0 == 9 || $0 == 10 || $0 == 13 }) { return .success([:]) }
        guard let value = try? JSONDecoder().decode(JSONValue.self, from: Data(body)), case .object(let object) = value else {
            return .failure(ControlError(.malformedJSON, "the body is not a JSON object"))
        }
        return .success(object)
    }

    /// A `date` query value: `YYYYMMDD`, a real day.
    public static func day(_ text: String?) -> Result<String?, ControlError> {
        guard let text else { return .success(nil) }
        guard CalendarDate(folderName: text) != nil else {
            return .failure(ControlError.badArgument("date", "must be a day as YYYYMMDD, such as 20261128"))
        }
        return .success(text)
    }

    private static func rejectStray(_ object: [String: JSONValue], allowed: Set<String>) throws(ControlError) {
        if let stray = object.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw ControlError.badArgument(String(stray.prefix(40)), "unknown field"
                + (allowed.isEmpty ? "; this call takes no fields" : "; allowed: \(allowed.sorted().joined(separator: ", "))"))
        }
    }

    private static func call(_ command: String, _ arguments: [String: JSONValue]) -> Result<ControlRequest, ControlError> {
        let line = JSONValue.object(["v": .integer(Int64(ControlProtocol.version)), "cmd": .string(command), "args": .object(arguments)])
        return ControlCall.parse(line.description).map(\.request).mapError(\.error)
    }
}
