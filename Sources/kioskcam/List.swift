import ArgumentParser
import Foundation
import KioskCore
import KioskRecording

/// `kioskcam list`: what the library holds.
struct List: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List recordings (kind, start time, duration, size), one day or all days."
    )

    @OptionGroup var common: CommonOptions

    @Option(help: ArgumentHelp("Only this day (YYYYMMDD).", valueName: "YYYYMMDD"))
    var date: String?

    @Flag(help: "Print JSON (for scripts) instead of text.")
    var json = false

    func run() throws {
        try runReportingErrors {
            let configuration = try common.loadConfiguration()
            let listing = LibraryListing(layout: LibraryLayout(root: configuration.storage.mediaRoot))
            if let date, CalendarDate(folderName: date) == nil {
                throw CLIError("--date \(date): use a date as YYYYMMDD, e.g. 20261122", exitCode: 64)
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
