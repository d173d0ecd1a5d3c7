import ArgumentParser
import KioskControl
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
                    print(Self.line(name, entry))
                }
            }
        }

        /// One setting as `camera get` prints it: "exposure: auto (range 1…10000 × 100 µs,
        /// default 200), libcamera ExposureTime".
        static func line(_ name: CameraSettingName, _ entry: [String: JSONValue]) -> String {
            let how = entry["how"]?.stringValue ?? "?"
            guard how != "none" else {
                return "\(name.rawValue): " + (entry["message"]?.stringValue ?? "the camera has no \(name.rawValue) control")
            }
            var line = "\(name.rawValue): "
            if let value = entry["value"]?.doubleValue {
                line += name == .zoom ? String(format: "%.2f", value) : "\(Int(value))"
            } else if let value = entry["value"]?.stringValue {
                line += value
            }
            let unit = entry["unit"]?.stringValue.map { " \($0)" } ?? ""
            if let minimum = entry["minimum"]?.doubleValue, let maximum = entry["maximum"]?.doubleValue {
                line += " (range \(Int(minimum))…\(Int(maximum))\(unit)" + (entry["default"]?.doubleValue.map { ", default \(Int($0))" } ?? "") + ")"
            } else if let maximum = entry["maximum"]?.doubleValue {
                line += " (up to \(String(format: "%.1f", maximum))×)"
            }
            switch how {
            case "digital": line += ", digital"
            case "libcamera": line += ", libcamera " + (entry["control"]?.stringValue ?? "control")
            default: line += ", the camera's"
            }
            return line
        }
    }
}
