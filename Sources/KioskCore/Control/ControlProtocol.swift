import Foundation

/// The control socket's wire format: one JSON object per line (UTF-8, `\n`-terminated).
///
/// Request:  `{"v":1,"id":7,"cmd":"record.start","args":{"audio_only":true}}`
/// Response: `{"v":1,"id":7,"ok":true,"result":{…}}` or
///           `{"v":1,"id":7,"ok":false,"error":{"code":"unknown_command","message":"…"}}`
/// Event:    `{"v":1,"event":"state","data":{…}}` (only after `subscribe`)
///
/// `id` is the client's own number, echoed so it can match answers to questions; it may
/// be left out (the answer then has `"id":null`).
public enum ControlProtocol {
    /// Bumped when a request or response changes meaning; a request for another version
    /// gets `unsupported_version` rather than a guess.
    public static let version = 1
    /// The longest line (without its newline) either side accepts; a longer request is
    /// answered with `too_large` and skipped up to its newline.
    public static let maximumLineBytes = 64 * 1024
}

/// Why a request failed, as a stable machine-readable code.
public enum ControlErrorCode: String, Sendable, Codable, CaseIterable {
    /// The line is not a JSON object.
    case malformedJSON = "malformed_json"
    /// The line is longer than `ControlProtocol.maximumLineBytes`.
    case tooLarge = "too_large"
    /// `v` is missing or another version.
    case unsupportedVersion = "unsupported_version"
    /// `cmd` names no command.
    case unknownCommand = "unknown_command"
    /// An argument (or `id`, `cmd`, `args` itself) is missing, of the wrong type or out of range.
    case badArgument = "bad_argument"
    /// The server has as many clients as it takes.
    case busy
    /// The command was understood but the daemon could not do it (already recording, disk full …).
    case failed
    /// The command is known but this daemon does not offer it (e.g. no screen for a screenshot).
    case unavailable
    /// The caller may use the socket but not this command (`pin.set` from outside root).
    case forbidden
}

/// An error answer: a code for scripts and a message for people.
public struct ControlError: Error, Sendable, Equatable, Codable, CustomStringConvertible {
    public var code: ControlErrorCode
    public var message: String

    public init(_ code: ControlErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(message) (\(code.rawValue))" }

    /// A bad argument, named.
    public static func badArgument(_ name: String, _ problem: String) -> ControlError {
        ControlError(.badArgument, "\(name): \(problem)")
    }
}

/// A parsed request line: the client's id and what it asks for.
public struct ControlCall: Sendable, Equatable {
    public var id: Int64?
    public var request: ControlRequest

    public init(id: Int64?, request: ControlRequest) {
        self.id = id
        self.request = request
    }
}

/// A request that could not be parsed, with whatever id could be read so the answer
/// still reaches the right caller.
public struct ControlParseFailure: Error, Sendable, Equatable {
    public var id: Int64?
    public var error: ControlError

    public init(id: Int64?, error: ControlError) {
        self.id = id
        self.error = error
    }

    /// The response the server sends back.
    public var response: ControlResponse { ControlResponse(id: id, failure: error) }
}
