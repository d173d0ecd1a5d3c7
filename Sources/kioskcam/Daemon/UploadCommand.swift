import ArgumentParser
import Foundation
import KioskCLI
import KioskCore

/// `kioskcam upload status|now`: the running daemon's offsite copies.
struct UploadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "upload",
        abstract: "Show or hurry the running daemon's offsite copies to S3-compatible storage ([upload]).",
        subcommands: [Status.self, Now.self]
    )

    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the upload queue: files and bytes waiting, files copied, the last error.",
            discussion: DaemonConnection.notRunningHelp
        )
        @OptionGroup var common: CommonOptions

        @Flag(help: "Print the daemon's answer as JSON (for scripts).")
        var json = false

        func run() throws {
            try runReportingErrors {
                let result = try DaemonConnection.send(.uploadStatus, with: try DaemonConnection.client(common))
                if json { return try DaemonConnection.printJSON(.object(result)) }
                func integer(_ key: String) -> Int64 { result[key]?.doubleValue.map { Int64($0) } ?? 0 }
                print("destination:  \(result["destination"]?.stringValue ?? "?") at \(result["endpoint"]?.stringValue ?? "?")")
                print("waiting:      \(integer("queued_files")) files, \(ByteCountText.text(integer("queued_bytes")))")
                print("copied:       \(integer("uploaded_files")) files, \(ByteCountText.text(integer("uploaded_bytes"))) since the daemon started")
                if let current = result["current"]?.stringValue {
                    print("sending:      \(current), \(ByteCountText.text(integer("current_bytes_sent"))) sent")
                }
                if let success = result["last_success"]?.stringValue { print("last copy:    \(success)") }
                if integer("failures") > 0 { print("failures:     \(integer("failures")) attempts failed since the daemon started") }
                if integer("vanished_files") > 0 { print("vanished:     \(integer("vanished_files")) queued files were deleted before their upload") }
                if let error = result["last_error"]?.stringValue { print("last error:   \(error)") }
            }
        }
    }

    struct Now: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Upload every waiting file now, without waiting out the backoff after failures.",
            discussion: DaemonConnection.notRunningHelp
        )
        @OptionGroup var common: CommonOptions

        func run() throws {
            try runReportingErrors {
                let result = try DaemonConnection.send(.uploadNow, with: try DaemonConnection.client(common))
                let count = result["queued_files"]?.doubleValue.map { Int($0) } ?? 0
                print(count == 0 ? "nothing is waiting for upload" : "uploading \(count) waiting file(s) now; `kioskcam upload status` shows progress")
            }
        }
    }
}
