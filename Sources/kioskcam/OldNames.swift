import ArgumentParser
import Foundation

// The spellings of earlier releases, kept for one release so that scripts and habits
// keep working: hidden from `kioskcam --help`, they run the new command and say its
// name on stderr (stdout is the new command's, unchanged).

/// `kioskcam broadcast-start`: now `kioskcam broadcast start`.
struct OldBroadcastStart: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "broadcast-start", abstract: "The old name of `kioskcam broadcast start`.", shouldDisplay: false)

    @OptionGroup var command: BroadcastStartCommand

    func run() throws {
        OldName.note("broadcast-start", "broadcast start")
        try command.run()
    }
}

/// `kioskcam broadcast-stop`: now `kioskcam broadcast stop`.
struct OldBroadcastStop: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "broadcast-stop", abstract: "The old name of `kioskcam broadcast stop`.", shouldDisplay: false)

    @OptionGroup var command: BroadcastStopCommand

    func run() throws {
        OldName.note("broadcast-stop", "broadcast stop")
        try command.run()
    }
}

/// `kioskcam events`: now `kioskcam input-monitor` (`events` read like the event clips).
struct OldInputEvents: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events", abstract: "The old name of `kioskcam input-monitor`.", shouldDisplay: false)

    @OptionGroup var command: InputMonitorCommand

    func run() throws {
        OldName.note("events", "input-monitor")
        try command.run()
    }
}

enum OldName {
    static func note(_ old: String, _ new: String) {
        FileHandle.standardError.write(Data("kioskcam: `\(old)` is now `kioskcam \(new)`; the old name will go in a later release\n".utf8))
    }
}
