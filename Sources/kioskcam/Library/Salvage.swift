import ArgumentParser
import KioskCLI
import KioskCore
import KioskRecording

/// `kioskcam salvage`: repair what a crash left behind, on demand (record and the
/// daemon also do this at start-up).
struct Salvage: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make recordings interrupted by a crash or power cut playable and move them into the library."
    )

    @OptionGroup var common: CommonOptions

    func run() throws {
        try runReportingErrors {
            let configuration = try common.loadConfiguration()
            let logger = common.makeLogger(configuration)
            let files = LibraryFiles(layout: LibraryLayout(root: configuration.storage.mediaRoot))
            do { try files.prepare() } catch { throw CLIError("\(error)") }
            let results = IncomingSalvage(files: files, logger: logger).salvageAll()
            if results.isEmpty { print("nothing to salvage in \(files.layout.incomingDirectory)") }
            var problems = 0
            for (file, outcome) in results {
                switch outcome {
                case .recovered(let path, let seconds): print("recovered \(path) (\(Int(seconds.rounded())) s) from \(file)")
                case .discarded(let reason): print("removed \(file): \(reason)")
                case .inUse: print("skipped \(file): another kioskcam is still writing it")
                case .quarantined(let path, let reason):
                    print("could not repair \(file) (\(reason)): kept in \(path) for a person to look at"); problems += 1
                case .leftInPlace(let reason): print("left \(file) in place: \(reason)"); problems += 1
                }
            }
            if problems > 0 { throw ExitCode(1) }
        }
    }
}
