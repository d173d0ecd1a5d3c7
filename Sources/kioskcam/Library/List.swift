import ArgumentParser
import Foundation
import KioskCLI
import KioskCore
import KioskRecording

/// `kioskcam list`: what the library holds.
struct List: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List recordings (kind, start time, duration, size), one day or all days.",
        discussion: "With --events, the events from the event log instead: start, length, triggers, peak motion, clip."
    )

    @OptionGroup var common: CommonOptions

    @Option(help: ArgumentHelp("Only this day (YYYYMMDD).", valueName: "YYYYMMDD"))
    var date: String?

    @Flag(help: "Print JSON (for scripts) instead of text.")
    var json = false

    @Flag(help: "List events (from events/YYYYMMDD.jsonl) instead of files.")
    var events = false

    func run() throws {
        try runReportingErrors {
            let configuration = try common.loadConfiguration()
            let listing = LibraryListing(layout: LibraryLayout(root: configuration.storage.mediaRoot))
            if let date, CalendarDate(folderName: date) == nil {
                throw CLIError("--date \(date): use a date as YYYYMMDD, e.g. 20261122", exitCode: 64)
            }
            if events {
                try listEvents(root: configuration.storage.mediaRoot)
                return
            }
            let days = date.map { [$0] } ?? listing.days()
            let recordings = days.flatMap { listing.recordings(on: $0) }
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                print(String(decoding: try encoder.encode(recordings), as: UTF8.self))
                return
            }
            if recordings.isEmpty {
                print("no recordings in \(configuration.storage.mediaRoot)" + (date.map { " on \($0)" } ?? ""))
                return
            }
            var lines: [String] = []
            for recording in recordings {
                let duration = recording.seconds.map { String(format: "%8.1f s", $0) } ?? "        -"
                let size = String(format: "%9.2f MB", Double(recording.bytes) / 1_000_000)
                lines.append("\(recording.start)  \(recording.kind.rawValue.padding(toLength: 5, withPad: " ", startingAt: 0)) \(duration) \(size)  \(recording.path)")
            }
            print(lines.joined(separator: "\n"))
            let total = recordings.reduce(Int64(0)) { $0 + $1.bytes }
            print(String(format: "%d recordings, %.1f MB", recordings.count, Double(total) / 1_000_000))
        }
    }
}

extension List {
    /// `list --events`: one line per event, or the events' last messages as JSON.
    func listEvents(root: String) throws {
        let log = EventLogFile(root: root)
        let days = date.map { [$0] } ?? log.days()
        var events: [EventMessage] = []
        var unreadable = 0
        for day in days {
            let listing = log.listing(day: day)
            events += listing.events
            unreadable += listing.unreadableLines
        }
        if unreadable > 0 {
            FileHandle.standardError.write(Data("kioskcam: skipped \(unreadable) unreadable line(s) in \(log.directory) (torn by a power cut, or edited)\n".utf8))
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(events), as: UTF8.self))
            return
        }
        guard !events.isEmpty else {
            print("no events in \(log.directory)" + (date.map { " on \($0)" } ?? ""))
            return
        }
        for event in events {
            let start = LocalTimestamp(Date(timeIntervalSince1970: event.start)).readable
            let length = event.end.map { String(format: "%7.1f s", max(0, $0 - event.clipStart)) } ?? "  going"
            let triggers = event.triggers.map(\.rawValue).joined(separator: ",")
            let peak = event.peakScore > 0 ? String(format: "peak %5.1f %%", event.peakScore) : "           "
            print("\(start)  \(length)  \(triggers.padding(toLength: 18, withPad: " ", startingAt: 0)) \(peak)  \(event.clip ?? "-")")
        }
        print("\(events.count) events")
    }
}
