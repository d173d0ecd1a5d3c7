import ArgumentParser
import Foundation
import KioskAppliance
import KioskCore
import KioskRecording

/// `kioskcam purge`: apply retention and the disk guard now (record and the daemon
/// also do it at start-up, hourly and when space runs low).
struct Purge: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Delete date folders past storage.retention_days, and the oldest days while free space is below the floor.",
        discussion: "Folders whose names are not dates are never deleted, only reported. Today's folder and a recording in progress are never deleted."
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
                switch deletion.reason {
                case .age(let days): why = "\(days) days old (retention \(configuration.storage.retentionDays) days)"
                case .space: why = "free space below the floor \(ByteCountText.text(plan.space.floorBytes))"
                }
                print("\(dryRun ? "would delete" : "deleting") \(deletion.kind.rawValue)/\(deletion.date.folderName)  \(ByteCountText.text(deletion.bytes))  \(why)")
            }
            for report in plan.reports { print("left alone: \(report.relativePath) (\(report.reason))") }
            if plan.deletions.isEmpty { print("nothing to delete") }
            if !dryRun, !plan.deletions.isEmpty {
                let result = purger.apply(plan)
                for failure in result.failures { print("could not delete \(failure.kind.rawValue)/\(failure.date.folderName): \(failure.message)") }
                print("freed \(ByteCountText.text(result.freedBytes))")
                if !result.failures.isEmpty { throw ExitCode(1) }
            }
            if let message = plan.message, !plan.canRecord { print("warning: \(message)") }
        }
    }
}
