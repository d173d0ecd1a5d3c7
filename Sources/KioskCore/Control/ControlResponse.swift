import Foundation

/// What a handler returns for one request: result fields, or an error.
public typealias ControlOutcome = Result<[String: JSONValue], ControlError>

extension Result where Success == [String: JSONValue], Failure == ControlError {
    /// A success carrying an `Encodable` value's fields (e.g. a `StatusReport`).
    public static func encoding(_ value: some Encodable) -> ControlOutcome {
        do {
            guard case .object(let fields) = try JSONValue(encoding: value) else {
                return .failure(ControlError(.failed, "internal error: the result is not a JSON object"))
            }
            return .success(fields)
        } catch {
            return .failure(ControlError(.failed, "internal error: the result cannot be encoded: \(error)"))
        }
    }
}

/// The answer to one request, echoing its id.
public struct ControlResponse: Sendable, Equatable {
    public var id: Int64?
    public var outcome: ControlOutcome

    public init(id: Int64?, outcome: ControlOutcome) {
        self.id = id
        self.outcome = outcome
    }

    public init(id: Int64?, result: [String: JSONValue]) { self.init(id: id, outcome: .success(result)) }
    public init(id: Int64?, failure: ControlError) { self.init(id: id, outcome: .failure(failure)) }

    public var result: [String: JSONValue]? { if case .success(let r) = outcome { r } else { nil } }
    public var error: ControlError? { if case .failure(let e) = outcome { e } else { nil } }

    /// The response as one line (no newline).
    public func line() -> String {
        var object: [String: JSONValue] = ["v": .integer(Int64(ControlProtocol.version)), "id": id.map(JSONValue.integer) ?? .null]
        switch outcome {
        case .success(let result):
            object["ok"] = true
            object["result"] = .object(result)
        case .failure(let error):
            object["ok"] = false
            object["error"] = ["code": .string(error.code.rawValue), "message": .string(error.message)]
        }
        return JSONValue.object(object).description
    }

    /// The result decoded as a type, e.g. `StatusReport`.
    /// - Throws: the response's `ControlError`, or a `DecodingError` when the result has another shape.
    public func decode<T: Decodable>(_ type: T.Type) throws -> T {
        switch outcome {
        case .success(let result): return try JSONValue.object(result).decode(as: T.self)
        case .failure(let error): throw error
        }
    }
}

/// One line from the server: a response or an event.
public enum ControlServerLine: Sendable, Equatable {
    case response(ControlResponse)
    case event(ControlEvent)

    /// Parses a line the server sent.
    /// - Throws: `ControlError` (`malformed_json`, `unsupported_version`) when the line is neither.
    public static func parse(_ line: some Collection<UInt8>) throws(ControlError) -> ControlServerLine {
        guard let value = try? JSONDecoder().decode(JSONValue.self, from: Data(line)), case .object(let object) = value else {
            throw ControlError(.malformedJSON, "the daemon sent a line that is not a JSON object")
        }
        guard object["v"]?.intValue == ControlProtocol.version else {
            throw ControlError(.unsupportedVersion, "the daemon speaks another protocol version (\(object["v"]?.description ?? "none")); this client speaks \(ControlProtocol.version): update kioskcam so both match")
        }
        if case .string(let name)? = object["event"] {
            return .event(ControlEvent(ControlEventKind(rawValue: name), object["data"]?.objectValue ?? [:]))
        }
        let id: Int64? = if case .integer(let number)? = object["id"] { number } else { nil }
        switch object["ok"] {
        case .bool(true)?:
            return .response(ControlResponse(id: id, result: object["result"]?.objectValue ?? [:]))
        case .bool(false)?:
            let error = object["error"]?.objectValue ?? [:]
            let code = error["code"]?.stringValue.flatMap(ControlErrorCode.init(rawValue:)) ?? .failed
            return .response(ControlResponse(id: id, failure: ControlError(code, error["message"]?.stringValue ?? "no message")))
        default:
            throw ControlError(.malformedJSON, "the daemon sent a line that is neither a response nor an event")
        }
    }
}
