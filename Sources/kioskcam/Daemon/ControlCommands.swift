import ArgumentParser
import Foundation
import KioskControl
import KioskCLI
import KioskCore

/// The commands that talk to the running daemon over the control socket.
enum DaemonConnection {
    static func client(_ common: CommonOptions) throws -> ControlClient {
        ControlClient(try common.loadConfiguration().control)
    }

    /// Sends a request; a daemon error becomes a CLI error with its message.
    static func send(_ request: ControlRequest, with client: ControlClient) throws -> [String: JSONValue] {
        let response: ControlResponse
        do throws(ControlClientError) {
            response = try client.send(request)
        } catch {
            throw CLIError(error.description, exitCode: error.exitCode)
        }
        switch response.outcome {
        case .success(let result): return result
        case .failure(let error): throw CLIError("the daemon refused \(request.command): \(error.message)")
        }
    }

    static func printJSON(_ value: JSONValue) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    static let notRunningHelp = "Exit status: 69 when the daemon is not running, 77 when the socket is not yours to use (join the group or use sudo)."
}

/// `kioskcam status`: what the daemon is doing.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the running daemon's state: recording, file, size, free space, camera, microphone, PIN, device ID.",
        discussion: DaemonConnection.notRunningHelp
    )

    @OptionGroup var common: CommonOptions

    @Flag(help: "Print the daemon's status as JSON (for scripts).")
    var json = false

    func run() throws {
        try runReportingErrors {
            let result = try DaemonConnection.send(.status, with: try DaemonConnection.client(common))
            if json { return try DaemonConnection.printJSON(.object(result)) }
            do {
                print(try JSONValue.object(result).decode(as: StatusReport.self).lines.joined(separator: "\n"))
            } catch {
                throw CLIError("the daemon's status could not be read (\(error)); `kioskcam status --json` shows it raw")
            }
        }
    }
}

/// `kioskcam start`: ask the daemon to start recording.
struct StartCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "start",
        abstract: "Ask the running daemon to start recording (`kioskcam record` records without a daemon).",
        discussion: DaemonConnection.notRunningHelp
    )

    @OptionGroup var common: CommonOptions

    @Flag(help: "Record sound only (AAC in audio/YYYYMMDD/HHMMSS.m4a).")
    var audio = false

    @Option(help: ArgumentHelp("Stop by itself after this long (10s, 5m, 1h).", valueName: "time"))
    var duration: String?

    func run() throws {
        try runReportingErrors {
            let seconds = try duration.map { text -> Double in
                guard let seconds = parseDuration(text), seconds >= 0.1, seconds <= 86_400 else {
                    throw CLIError("--duration \(text): use a time from 0.1s to 24h, such as 10s, 1.5m or 1h", exitCode: 64)
                }
                return seconds
            }
            let result = try DaemonConnection.send(.recordStart(audioOnly: audio, duration: seconds), with: try DaemonConnection.client(common))
            print(result["kind"]?.stringValue == "audio" ? "sound-only recording started" : "recording started")
        }
    }
}

/// `kioskcam stop`: ask the daemon to stop recording.
struct StopCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stop",
        abstract: "Ask the running daemon to stop recording; the file is finished and moved into the library.",
        discussion: DaemonConnection.notRunningHelp
    )

    @OptionGroup var common: CommonOptions

    func run() throws {
        try runReportingErrors {
            let result = try DaemonConnection.send(.recordStop, with: try DaemonConnection.client(common))
            let files = result["files"]?.arrayValue?.compactMap(\.stringValue) ?? []
            print("recording stopped" + (files.isEmpty ? "" : ": " + files.joined(separator: ", ")))
            if result["finished"]?.boolValue == false {
                FileHandle.standardError.write(Data("kioskcam: the file is still being finished; `kioskcam status` shows when it is in the library\n".utf8))
            }
        }
    }
}

/// `kioskcam event start|stop`: the manual trigger of event clips.
struct EventCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "event",
        abstract: "Start or stop a manual event clip on the running daemon (events.mode = events or both).",
        subcommands: [Start.self, Stop.self]
    )

    struct Start: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Turn the manual trigger on: a clip starts pre_seconds in the past, or the one going on goes on.",
            discussion: DaemonConnection.notRunningHelp
        )
        @OptionGroup var common: CommonOptions

        func run() throws { try EventCommand.send(.eventStart, common) }
    }

    struct Stop: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Turn the manual trigger off: the clip ends post_seconds later unless another trigger holds it.",
            discussion: DaemonConnection.notRunningHelp
        )
        @OptionGroup var common: CommonOptions

        func run() throws { try EventCommand.send(.eventStop, common) }
    }

    /// Sends the trigger and says what the daemon did with it.
    static func send(_ request: ControlRequest, _ common: CommonOptions) throws {
        try runReportingErrors {
            let result = try DaemonConnection.send(request, with: try DaemonConnection.client(common))
            let word = result["trigger"]?.stringValue ?? (request == .eventStart ? "on" : "off")
            print("event trigger \(word)" + (result["event"]?.stringValue.map { ": event \($0)" } ?? ""))
        }
    }
}

/// `kioskcam watch`: follow the daemon's events.
struct WatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print the running daemon's events as they happen: state changes, buttons, touches, levels, progress.",
        discussion: "Runs until Ctrl-C or until the daemon stops. " + DaemonConnection.notRunningHelp
    )

    @OptionGroup var common: CommonOptions

    @Option(help: ArgumentHelp("Only these kinds, comma-separated: \(ControlEventKind.subscribable.map(\.rawValue).joined(separator: ", ")).", valueName: "kinds"))
    var events: String?

    @Flag(help: "Print each event as the daemon's JSON line.")
    var json = false

    @Option(help: ArgumentHelp("Exit after this many events.", valueName: "n"))
    var count: Int?

    func run() throws {
        try runReportingErrors {
            let kinds = try events.map { text -> Set<ControlEventKind> in
                let names = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                let known = ControlEventKind.subscribable
                return Set(try names.map { name in
                    guard let kind = known.first(where: { $0.rawValue == name }) else {
                        throw CLIError("--events \(name): use one or more of \(known.map(\.rawValue).joined(separator: ", "))", exitCode: 64)
                    }
                    return kind
                })
            }
            if let count, count < 1 { throw CLIError("--count \(count): use a whole number from 1", exitCode: 64) }
            let client = try DaemonConnection.client(common)
            let subscription: ControlSubscription
            do throws(ControlClientError) {
                subscription = try client.subscribe(kinds)
            } catch {
                throw CLIError(error.description, exitCode: error.exitCode)
            }
            defer { subscription.close() }
            var seen = 0
            while count.map({ seen < $0 }) ?? true {
                let event: ControlEvent?
                do throws(ControlClientError) {
                    event = try subscription.next()
                } catch {
                    throw CLIError(error.description, exitCode: error.exitCode)
                }
                guard let event else {
                    throw CLIError("the daemon closed the event stream (it stopped?)", exitCode: 69)
                }
                seen += 1
                let line = json ? event.line() : "\(Self.clock(Date()))  \(event.summary)"
                // Flushed per line so `kioskcam watch | grep` sees events as they happen.
                FileHandle.standardOutput.write(Data((line + "\n").utf8))
            }
        }
    }

    /// "14:03:07.250": the local time an event arrived (`LocalZone`, not a formatter).
    static func clock(_ date: Date) -> String {
        let milliseconds = Int(((date.timeIntervalSince1970 - Double(LocalZone.wholeSeconds(date))) * 1000).rounded(.down))
        let fraction = String(max(0, min(999, milliseconds)))
        // `readable` ends in "HH:MM:SS".
        return LocalTimestamp(date).readable.suffix(8) + "." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }
}

/// `kioskcam broadcast start`: ask the daemon to start a screen broadcast.
struct BroadcastStartCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "start",
        abstract: "Ask the running daemon to broadcast the screen (a `kioskcam broadcast` process of its own).",
        discussion: "The camera's own live stream is `[stream] url`. " + DaemonConnection.notRunningHelp
    )

    @OptionGroup var common: CommonOptions

    @Option(name: .customLong("to"), help: ArgumentHelp(
        "Destination (repeatable): library, rtmp://…, rtsp://…, srt://…, or an absolute HLS folder.", valueName: "dest"))
    var destinations: [String] = []

    @Option(help: ArgumentHelp("Stop by itself after this long (30s, 10m, 1h).", valueName: "time"))
    var duration: String?

    @Option(help: ArgumentHelp(
        "Picture size to send, e.g. 960x540: even, no larger than the screen, its shape (default: [broadcast] size, else the largest that fits the memory budget).",
        valueName: "WxH"))
    var size: String?

    func run() throws {
        try runReportingErrors {
            let requestedSize = try size.map { text -> FrameSize in
                guard let parsed = FrameSize(broadcastSize: text) else {
                    throw CLIError("--size \(text): use WIDTHxHEIGHT, each even from 16 to 8192, such as 960x540", exitCode: 64)
                }
                return parsed
            }
            guard !destinations.isEmpty else {
                throw CLIError("give at least one --to: library, rtmp://…, rtsp://…, srt://… or an HLS folder", exitCode: 64)
            }
            let seconds = try duration.map { text -> Double in
                guard let seconds = parseDuration(text), seconds >= 1, seconds <= 604_800 else {
                    throw CLIError("--duration \(text): use a time from 1s to 7 days, such as 30s, 10m or 1h", exitCode: 64)
                }
                return seconds
            }
            let result = try DaemonConnection.send(.broadcastStart(destinations: destinations, duration: seconds, size: requestedSize),
                                                    with: try DaemonConnection.client(common))
            let pid = result["pid"]?.doubleValue.map { String(Int($0)) } ?? "?"
            // An uncapped broadcast is said at once, not only in status (issue 15).
            let cap = result["memory_capped"] == .bool(false) ? ", memory NOT capped: `kioskcam status` says why" : ""
            print("broadcast started (pid \(pid)\(cap)); `kioskcam status` shows its state")
        }
    }
}

/// `kioskcam broadcast stop`: ask the daemon to stop the screen broadcast.
struct BroadcastStopCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stop",
        abstract: "Ask the running daemon to stop the screen broadcast it started (its library file is finished).",
        discussion: DaemonConnection.notRunningHelp
    )

    @OptionGroup var common: CommonOptions

    func run() throws {
        try runReportingErrors {
            _ = try DaemonConnection.send(.broadcastStop, with: try DaemonConnection.client(common))
            print("broadcast stopped")
        }
    }
}
