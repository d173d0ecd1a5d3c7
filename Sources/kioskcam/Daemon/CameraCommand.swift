import ArgumentParser
import KioskControl
import KioskCLI
import KioskCore

/// `kioskcam camera set|get`: the running daemon's camera settings.
struct CameraCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "camera",
        abstract: "Change or show the running daemon's camera settings: zoom, focus, exposure, white balance, brightness, contrast, torch.",
        subcommands: [Set.self, Get.self]
    )

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change camera settings now, e.g. `kioskcam camera set zoom=2.0 focus=auto torch=on`.",
            discussion: """
            zoom is a factor from 1 (no zoom) up: the camera's own zoom where it has one (it glides), \
            else a digital zoom (up to 4×) of what is recorded and shown. focus, exposure, white_balance, \
            brightness and contrast take auto or a number in the camera's units (`kioskcam camera get` shows \
            the ranges); values are clamped to the range. torch takes on or off. Settings stay until changed \
            or the daemon restarts, and are given to the camera again after a reconnect. \
            \(DaemonConnection.notRunningHelp)
            """
        )

        @OptionGroup var common: CommonOptions

        @Argument(help: ArgumentHelp("Settings as name=value.", valueName: "name=value"))
        var settings: [String]

        func run() throws {
            try runReportingErrors {
                let adjustment: CameraAdjustment
                do {
                    adjustment = try CameraAdjustment(parsing: settings)
                } catch {
                    throw CLIError("\(error)", exitCode: 64)
                }
                guard !adjustment.isEmpty else {
                    throw CLIError("name a setting, such as zoom=2.0 (settings: \(CameraSettingName.allCases.map(\.rawValue).joined(separator: ", ")))", exitCode: 64)
                }
                let result = try DaemonConnection.send(.cameraSet(adjustment), with: try DaemonConnection.client(common))
                for name in CameraSettingName.allCases {
                    guard case .object(let entry)? = result[name.rawValue] else { continue }
                    let applied = entry["applied"]?.stringValue ?? "not set"
                    print("\(name.rawValue): \(applied)" + (entry["message"]?.stringValue.map { " — \($0)" } ?? ""))
                }
            }
        }
    }

    struct Get: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show every camera setting: its value, range, and whether the camera or digital zoom applies it.")

        @OptionGroup var common: CommonOptions

        @Flag(help: "Print JSON (for scripts).")
        var json = false

        func run() throws {
            try runReportingErrors {
                let result = try DaemonConnection.send(.cameraGet, with: try DaemonConnection.client(common))
                if json { return try DaemonConnection.printJSON(.object(result)) }
                for name in CameraSettingName.allCases {
                    guard case .object(let entry)? = result[name.rawValue] else { continue }
                    print(name.getLine(entry))
                }
            }
        }
    }
}
