import Foundation

/// What a client can ask the daemon. Parsed from one line by `ControlCall.parse`.
///
/// `description` never shows a PIN: requests end up in logs.
public enum ControlRequest: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `status`: a `StatusReport`.
    case status
    /// `record.start {"audio_only": Bool, "duration": seconds}`: both optional.
    case recordStart(audioOnly: Bool, duration: Double?)
    /// `record.stop`.
    case recordStop
    /// `snapshot`: a JPEG still now.
    case snapshot
    /// `list {"date": "YYYYMMDD"}`: one day, or every day when left out.
    case list(date: String?)
    /// `purge {"dry_run": Bool}`: retention and disk guard now (`dry_run` false when left out).
    case purge(dryRun: Bool)
    /// `pin.set {"pin": "1234"}`: four digits.
    case pinSet(pin: String)
    /// `screenshot`: a PNG of what the screen shows.
    case screenshot
    /// `camera.set {"zoom": 2.0, "focus": "auto", "torch": true}`: change camera settings
    /// now (the camera's own controls where it has them; zoom falls back to digital).
    case cameraSet(CameraAdjustment)
    /// `camera.get`: every setting's value, range and how it is applied.
    case cameraGet
    /// `subscribe {"events": ["state", …]}`: from now on this connection also receives
    /// event lines (every kind when `events` is left out). Handled by the server itself.
    case subscribe(events: Set<ControlEventKind>?)
    /// `event.start`: a manual trigger goes on (an event clip starts, or the one going
    /// on gains the trigger); it lasts until `event.stop`.
    case eventStart
    /// `event.stop`: the manual trigger goes off; the clip ends after its post time.
    case eventStop
    /// `upload.status`: the upload queue and the uploader's figures.
    case uploadStatus
    /// `upload.now`: every queued file is due now, whatever its wait after failures.
    case uploadNow
    /// `broadcast.start {"to": ["library", "rtmp://…"], "duration": seconds, "size": "960x540"}`:
    /// the daemon starts a screen broadcast process (the camera it holds itself: its live
    /// stream is `[stream] url`). `duration` and `size` (the picture sent; default the
    /// largest that fits the memory budget) optional.
    case broadcastStart(destinations: [String], duration: Double?, size: FrameSize? = nil)
    /// `broadcast.stop`: ends the broadcast the daemon started (its library file finished).
    case broadcastStop
    /// `clip.export {"file": "video/20261124/101455.mp4", "from": 1.5, "to": 4}`: cuts a
    /// clip into the library's `exports/tmp` and answers its path (see `ClipExportRequest`).
    case clipExport(ClipExportRequest)

    /// Every command name, for help and error messages.
    public static let commands = ["status", "record.start", "record.stop", "snapshot", "list", "purge", "pin.set", "screenshot",
                                  "camera.set", "camera.get", "subscribe", "event.start", "event.stop", "upload.status", "upload.now",
                                  "broadcast.start", "broadcast.stop", "clip.export"]

    /// The wire name.
    public var command: String {
        switch self {
        case .status: "status"
        case .recordStart: "record.start"
        case .recordStop: "record.stop"
        case .snapshot: "snapshot"
        case .list: "list"
        case .purge: "purge"
        case .pinSet: "pin.set"
        case .screenshot: "screenshot"
        case .cameraSet: "camera.set"
        case .cameraGet: "camera.get"
        case .subscribe: "subscribe"
        case .eventStart: "event.start"
        case .eventStop: "event.stop"
        case .uploadStatus: "upload.status"
        case .uploadNow: "upload.now"
        case .broadcastStart: "broadcast.start"
        case .broadcastStop: "broadcast.stop"
        case .clipExport: "clip.export"
        }
    }

    /// The wire arguments (the PIN included: this is what the client sends).
    public var arguments: [String: JSONValue] {
        switch self {
        case .status, .recordStop, .snapshot, .screenshot, .cameraGet, .eventStart, .eventStop, .uploadStatus, .uploadNow,
             .broadcastStop: [:]
        case .broadcastStart(let destinations, let duration, let size):
            ["to": .array(destinations.map(JSONValue.string))]
                .merging(duration.map { ["duration": .number($0)] } ?? [:]) { a, _ in a }
                .merging(size.map { ["size": .string($0.description)] } ?? [:]) { a, _ in a }
        case .cameraSet(let adjustment):
            Dictionary(uniqueKeysWithValues: adjustment.settings.map { name, value -> (String, JSONValue) in
                switch value {
                case .automatic: return (name.rawValue, .string("auto"))
                case .value(let number): return (name.rawValue, name == .torch ? .bool(number != 0) : .number(number))
                }
            })
        case .recordStart(let audioOnly, let duration):
            ["audio_only": .bool(audioOnly)].merging(duration.map { ["duration": .number($0)] } ?? [:]) { a, _ in a }
        case .list(let date): date.map { ["date": .string($0)] } ?? [:]
        case .purge(let dryRun): ["dry_run": .bool(dryRun)]
        case .pinSet(let pin): ["pin": .string(pin)]
        case .clipExport(let export): export.arguments
        case .subscribe(let events): events.map { ["events": .array($0.map(\.rawValue).sorted().map(JSONValue.string))] } ?? [:]
        }
    }

    /// Only root or the daemon's user may send it: `kioskcam pin set` needs root, and the
    /// socket's group (which may send the rest) must not be a way around that.
    public var needsRoot: Bool { if case .pinSet = self { true } else { false } }

    public var description: String {
        switch self {
        case .pinSet: return "pin.set (pin redacted)"
        default:
            let arguments = self.arguments
            return arguments.isEmpty ? command : "\(command) \(JSONValue.object(arguments))"
        }
    }

    public var debugDescription: String { description }

    /// `dump()` and the debugger show the redacted description, not the PIN.
    public var customMirror: Mirror { Mirror(self, children: ["request": description]) }
}

extension ControlCall {
    /// The request as one line (no newline), as the client sends it.
    public func line() -> String {
        var object: [String: JSONValue] = ["v": .integer(Int64(ControlProtocol.version)), "cmd": .string(request.command)]
        if let id { object["id"] = .integer(id) }
        let arguments = request.arguments
        if !arguments.isEmpty { object["args"] = .object(arguments) }
        return JSONValue.object(object).description
    }

    /// Parses one request line (without its newline).
    ///
    /// Error messages name the field at fault but never repeat an argument's value, so a
    /// PIN sent with a typo does not end up in a log or on someone else's screen.
    /// - Parameter line: The line's bytes; a trailing `\r` is ignored.
    /// - Returns: The call, or a failure with the id (when readable) and one of
    ///   `malformed_json`, `too_large`, `unsupported_version`, `unknown_command`, `bad_argument`.
    public static func parse(_ line: some Collection<UInt8>) -> Result<ControlCall, ControlParseFailure> {
        guard line.count <= ControlProtocol.maximumLineBytes else {
            return .failure(ControlParseFailure(id: nil, error: ControlError(.tooLarge,
                "the request is \(line.count) bytes; the limit is \(ControlProtocol.maximumLineBytes) bytes per line")))
        }
        let value: JSONValue
        do {
            value = try JSONDecoder().decode(JSONValue.self, from: Data(line))
        } catch {
            return .failure(ControlParseFailure(id: nil, error: ControlError(.malformedJSON,
                #"not a JSON object: send one JSON object per line, such as {"v":1,"id":1,"cmd":"status"}"#)))
        }
        guard case .object(let object) = value else {
            return .failure(ControlParseFailure(id: nil, error: ControlError(.malformedJSON,
                "the line is \(value.typeName), not a JSON object: send one object per line, such as {\"v\":1,\"id\":1,\"cmd\":\"status\"}")))
        }
        var id: Int64?
        switch object["id"] {
        case nil, .null?: id = nil
        case .integer(let number)?: id = number
        case let other?:
            return .failure(ControlParseFailure(id: nil, error: .badArgument("id", "must be a whole number, not \(other.typeName)")))
        }
        do {
            return .success(ControlCall(id: id, request: try parseRequest(object)))
        } catch {
            return .failure(ControlParseFailure(id: id, error: error))
        }
    }

    /// Parses a request from text (tests, tools).
    public static func parse(_ text: String) -> Result<ControlCall, ControlParseFailure> {
        parse(Array(text.utf8))
    }

    private static let envelopeFields: Set<String> = ["v", "id", "cmd", "args"]

    private static func parseRequest(_ object: [String: JSONValue]) throws(ControlError) -> ControlRequest {
        switch object["v"] {
        case nil:
            throw ControlError(.unsupportedVersion, "v: missing; this daemon speaks protocol version \(ControlProtocol.version), send \"v\":\(ControlProtocol.version)")
        case .integer(let version)? where version == ControlProtocol.version:
            break
        case .integer(let version)?:
            throw ControlError(.unsupportedVersion, "protocol version \(version) is not supported; this daemon speaks version \(ControlProtocol.version) (update the client or the daemon so they match)")
        case let other?:
            throw ControlError(.unsupportedVersion, "v: must be the number \(ControlProtocol.version), not \(other.typeName)")
        }
        if let stray = object.keys.sorted().first(where: { !envelopeFields.contains($0) }) {
            throw ControlError.badArgument(printable(stray), "unknown field; a request has v, id, cmd and args")
        }
        guard let commandValue = object["cmd"] else {
            throw ControlError.badArgument("cmd", "missing; commands: \(ControlRequest.commands.joined(separator: ", "))")
        }
        guard case .string(let command) = commandValue else {
            throw ControlError.badArgument("cmd", "must be a string, not \(commandValue.typeName)")
        }
        var arguments: [String: JSONValue] = [:]
        switch object["args"] {
        case nil, .null?: break
        case .object(let value)?: arguments = value
        case let other?: throw ControlError.badArgument("args", "must be an object, not \(other.typeName)")
        }
        var reader = ArgumentReader(command: command, arguments: arguments)
        let request: ControlRequest
        switch command {
        case "status": request = .status
        case "record.start":
            let audioOnly = try reader.bool("audio_only") ?? false
            let duration = try reader.number("duration", 0.1...86_400, unit: "seconds")
            request = .recordStart(audioOnly: audioOnly, duration: duration)
        case "record.stop": request = .recordStop
        case "snapshot": request = .snapshot
        case "list":
            let date = try reader.string("date", expected: "a date as YYYYMMDD, such as \"20261122\"") { CalendarDate(folderName: $0) != nil }
            request = .list(date: date)
        case "purge": request = .purge(dryRun: try reader.bool("dry_run") ?? false)
        case "pin.set":
            guard let pin = try reader.string("pin", expected: "a string of exactly 4 digits 0-9 (the value is not shown)", validate: Self.isValidPIN) else {
                throw ControlError.badArgument("pin", "missing; send the new PIN as a string of 4 digits")
            }
            request = .pinSet(pin: pin)
        case "screenshot": request = .screenshot
        case "camera.get": request = .cameraGet
        case "camera.set":
            request = .cameraSet(try reader.cameraAdjustment())
        case "subscribe":
            request = .subscribe(events: try reader.eventKinds("events"))
        case "event.start": request = .eventStart
        case "event.stop": request = .eventStop
        case "upload.status": request = .uploadStatus
        case "upload.now": request = .uploadNow
        case "broadcast.start":
            let destinations = try reader.destinations("to")
            let duration = try reader.number("duration", 1...604_800, unit: "seconds")
            let size = try reader.string("size", expected: "WIDTHxHEIGHT, each even from 16 to 8192, such as \"960x540\"") {
                FrameSize(broadcastSize: $0) != nil
            }
            request = .broadcastStart(destinations: destinations, duration: duration, size: size.flatMap(FrameSize.init(broadcastSize:)))
        case "broadcast.stop": request = .broadcastStop
        case "clip.export": request = .clipExport(try reader.clipExport())
        default:
            throw ControlError(.unknownCommand, "unknown command \"\(printable(command))\"; commands: \(ControlRequest.commands.joined(separator: ", "))")
        }
        try reader.rejectUnread()
        return request
    }

    /// Four ASCII digits: the PIN pad's length.
    public static func isValidPIN(_ pin: String) -> Bool {
        pin.utf8.count == 4 && pin.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    /// A name from the wire, safe to put in a message: short, no control characters.
    static func printable(_ text: String) -> String {
        let cleaned = String(text.unicodeScalars.prefix(40).map { $0.properties.generalCategory == .control || $0 == "\"" ? "?" : Character($0) })
        return text.unicodeScalars.count > 40 ? cleaned + "…" : cleaned
    }
}

/// Reads a command's arguments, remembering which were used so a typo such as
/// `"audioonly"` is an error rather than silently ignored.
private struct ArgumentReader {
    let command: String
    let arguments: [String: JSONValue]
    var read: Set<String> = []

    mutating func bool(_ name: String) throws(ControlError) -> Bool? {
        read.insert(name)
        switch arguments[name] {
        case nil, .null?: return nil
        case .bool(let value)?: return value
        case let other?: throw ControlError.badArgument(name, "must be true or false, not \(other.typeName)")
        }
    }

    mutating func number(_ name: String, _ range: ClosedRange<Double>, unit: String) throws(ControlError) -> Double? {
        read.insert(name)
        guard let value = arguments[name], value != .null else { return nil }
        guard let number = value.doubleValue, range.contains(number) else {
            throw ControlError.badArgument(name, "must be a number from \(range.lowerBound) to \(range.upperBound) \(unit)")
        }
        return number
    }

    mutating func string(_ name: String, expected: String, validate: (String) -> Bool) throws(ControlError) -> String? {
        read.insert(name)
        guard let value = arguments[name], value != .null else { return nil }
        guard case .string(let text) = value, validate(text) else {
            throw ControlError.badArgument(name, "must be \(expected)")
        }
        return text
    }

    mutating func eventKinds(_ name: String) throws(ControlError) -> Set<ControlEventKind>? {
        read.insert(name)
        let known = ControlEventKind.subscribable.map(\.rawValue).joined(separator: ", ")
        guard let value = arguments[name], value != .null else { return nil }
        guard case .array(let items) = value else {
            throw ControlError.badArgument(name, "must be an array of event names: \(known)")
        }
        var kinds: Set<ControlEventKind> = []
        for item in items {
            guard case .string(let text) = item, let kind = ControlEventKind.subscribable.first(where: { $0.rawValue == text }) else {
                throw ControlError.badArgument(name, "each entry must be one of \(known)")
            }
            kinds.insert(kind)
        }
        return kinds
    }

    /// Broadcast destinations: a non-empty array of `kioskcam broadcast --to` values.
    mutating func destinations(_ name: String) throws(ControlError) -> [String] {
        read.insert(name)
        let expected = "an array of destinations: \"library\", rtmp://, rtsp:// or srt:// URLs, or absolute HLS folders"
        guard case .array(let items)? = arguments[name], (1...8).contains(items.count) else {
            throw ControlError.badArgument(name, "must be \(expected) (1 to 8)")
        }
        var destinations: [String] = []
        for item in items {
            guard case .string(let text) = item else { throw ControlError.badArgument(name, "must be \(expected)") }
            do throws(BroadcastPlanError) {
                _ = try BroadcastDestination(parsing: text)
            } catch {
                throw ControlError.badArgument(name, error.description)
            }
            destinations.append(text)
        }
        return destinations
    }

    /// Every argument is a camera setting: a number, "auto", or (torch) true/false.
    mutating func cameraAdjustment() throws(ControlError) -> CameraAdjustment {
        var adjustment = CameraAdjustment()
        for (key, value) in arguments.sorted(by: { $0.key < $1.key }) {
            read.insert(key)
            guard let name = CameraSettingName(rawValue: key) else {
                throw ControlError.badArgument(ControlCall.printable(key),
                    "not a camera setting; settings: \(CameraSettingName.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            let setting: CameraSettingValue
            switch value {
            case .string("auto"): setting = .automatic
            case .bool(let on) where name == .torch: setting = .value(on ? 1 : 0)
            case .string("on") where name == .torch: setting = .value(1)
            case .string("off") where name == .torch: setting = .value(0)
            default:
                guard let number = value.doubleValue, name != .torch else {
                    throw ControlError.badArgument(key, "must be \(name.expected)")
                }
                setting = .value(number)
            }
            do {
                try adjustment.set(name, setting)
            } catch {
                throw ControlError.badArgument(key, "must be \(name.expected)")
            }
        }
        guard !adjustment.isEmpty else {
            throw ControlError.badArgument("args", "name at least one setting: \(CameraSettingName.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return adjustment
    }

    /// `clip.export`'s arguments, each checked: a library recording's name (never a path
    /// outside it), times within a week, from before to, size and bitrate only with reencode.
    mutating func clipExport() throws(ControlError) -> ClipExportRequest {
        let example = "a recording as list names it, such as \"video/20261124/101455.mp4\""
        guard let file = try string("file", expected: example, validate: { LibraryLayout(root: "/").recordingPath(relative: $0) != nil }) else {
            throw ControlError.badArgument("file", "missing; name \(example)")
        }
        let from = try number("from", ClipExportRequest.timeRange, unit: "seconds")
        let to = try number("to", ClipExportRequest.timeRange, unit: "seconds")
        if let from, let to, from >= to { throw ControlError.badArgument("to", "must be after from") }
        let reencode = try bool("reencode") ?? false
        let wav = try bool("wav") ?? false
        let size = try string("size", expected: "even WxH from 16x16 to 4096x4096, such as \"640x360\"") {
            FrameSize(parsing: $0).map(ClipExportRequest.isValidSize) ?? false
        }.flatMap { FrameSize(parsing: $0) }
        let bitrate = try number("bitrate", 50...20_000, unit: "kbit/s")
        if let bitrate, bitrate.rounded() != bitrate { throw ControlError.badArgument("bitrate", "must be a whole number of kbit/s") }
        if (size != nil || bitrate != nil) && !reencode {
            throw ControlError.badArgument(size != nil ? "size" : "bitrate", "needs \"reencode\": true")
        }
        if reencode && wav { throw ControlError.badArgument("wav", "a WAV is the sound cut to the sample: leave out reencode") }
        return ClipExportRequest(file: file, from: from, to: to, reencode: reencode, size: size,
                                 bitrateKbps: bitrate.map { Int($0) }, wav: wav)
    }

    func rejectUnread() throws(ControlError) {
        guard let stray = arguments.keys.sorted().first(where: { !read.contains($0) }) else { return }
        let known = read.sorted().joined(separator: ", ")
        throw ControlError.badArgument(ControlCall.printable(stray),
            "unknown argument for \(command); " + (known.isEmpty ? "it takes none" : "it takes: \(known)"))
    }
}
