import ArgumentParser
import Foundation
import KioskAppliance
import KioskCLI
import KioskCore
import KioskRecording

/// `kioskcam purge`: apply retention and the disk guard now (record and the daemon
/// also do it at start-up, hourly and when space runs low).
struct Purge: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Delete footage past storage.retention_days, event clips past storage.event_retention_days, and the oldest days while free space is below the floor.",
        discussion: "Below the floor, the continuous footage of every older day goes before any event clip. Folders whose names are not dates are never deleted, only reported. Today's folder and a recording in progress (an event clip being written included) are never deleted."
    )

    @OptionGroup var common: CommonOptions

    @Flag(help: "Only show what would be deleted.")
    var dryRun = false

    func run() throws {
        try runReportingErrors {
            let configuration = try common.loadConfiguration()
            let logger = common.makeLogger(configuration)
            let purger = LibraryStorage.purger(configuration, logger: logger)
            let today = CalendarDate(LocalTimestamp(Date()))
            let bitrate = LibraryStorage.bitrate(configuration)
            let plan: PurgePlan
            do {
                plan = try purger.plan(today: today, bitrate: bitrate)
            } catch {
                throw CLIError("\(error)")
            }
            for deletion in plan.deletions {
                let why: String
                let storage = configuration.storage
                let eventDays = storage.eventRetentionDays ?? storage.retentionDays
                switch (deletion.reason, deletion.share) {
                case (.age(let days), .events): why = "\(days) days old (event_retention_days \(eventDays))"
                case (.age(let days), .all) where eventDays != storage.retentionDays:
                    why = "\(days) days old (retention \(storage.retentionDays) days, event_retention_days \(eventDays))"
                case (.age(let days), _): why = "\(days) days old (retention \(storage.retentionDays) days)"
                case (.space, _): why = "free space below the floor \(ByteCountText.text(plan.space.floorBytes))"
                }
                let what = deletion.isWholeFolder ? "" : " " + deletion.what
                print("\(dryRun ? "would delete" : "deleting") \(deletion.kind.rawValue)/\(deletion.date.folderName)\(what)  \(ByteCountText.text(deletion.bytes))  \(why)")
            }
            for day in plan.eventLogs { print("\(dryRun ? "would delete" : "deleting") events/\(day.folderName).jsonl  (its day's clips are gone)") }
            if !plan.heldForUpload.isEmpty {
                print("kept for upload: \(plan.heldForUpload.count) expired file(s) wait for their offsite copy, first \(plan.heldForUpload[0])")
            }
            if !plan.unuploadedFiles.isEmpty {
                print("warning: \(plan.unuploadedFiles.count) file(s) (\(ByteCountText.text(plan.unuploadedBytes))) waiting for upload \(dryRun ? "would be" : "are") deleted to keep the disk from filling: \(plan.unuploadedFiles.joined(separator: ", "))")
            }
            for report in plan.reports { print("left alone: \(report.relativePath) (\(report.reason))") }
            if plan.deletions.isEmpty && plan.eventLogs.isEmpty { print("nothing to delete") }
            if !dryRun, !plan.deletions.isEmpty || !plan.eventLogs.isEmpty {
                let result = purger.apply(plan)
                for failure in result.failures { print("could not delete \(failure.kind.rawValue)/\(failure.date.folderName): \(failure.message)") }
                print("freed \(ByteCountText.text(result.freedBytes))")
                if !result.failures.isEmpty { throw ExitCode(1) }
            }
            if let message = plan.message, !plan.canRecord { print("warning: \(message)") }
        }
    }
}
