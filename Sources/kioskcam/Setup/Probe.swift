import ArgumentParser
import Foundation
import KioskALSA
import KioskCLI
import KioskCore
import KioskSources
import KioskV4L2

/// `kioskcam probe`: what cameras and microphones this machine has, and what they can do.
struct Probe: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List cameras (libcamera, V4L2) and microphones (ALSA) with their formats, sizes, rates and controls."
    )

    @Flag(help: "Print JSON (for scripts) instead of text.")
    var json = false

    struct Report: Codable {
        /// libcamera's version, as the camera helper has it.
        var libcameraVersion: String
        /// libcamera's cameras (camera.source = "libcamera:ID"); empty where it lists none.
        var libcameraCameras: [LibcameraCameraDescription]
        /// Why libcamera could not be asked, if it could not.
        var libcameraError: String?
        var cameras: [CameraDescription]
        var skipped: [DiscoveryReport.Skipped]
        var microphones: [ALSACaptureDevice]
    }

    func run() throws {
        let discovery = V4L2Discovery.scan()
        // Asked through the camera helper: kioskcam itself does not load libcamera.
        var libcamera = LibcameraListing(version: "unknown", cameras: [])
        do {
            libcamera = try LibcameraListing.ask(program: CameraHelperProgram.path, describe: true)
        } catch {
            libcamera.error = error.description
        }
        let report = Report(libcameraVersion: libcamera.version, libcameraCameras: libcamera.cameras, libcameraError: libcamera.error,
                            cameras: discovery.cameras,
                            skipped: discovery.skipped, microphones: ALSADevices.captureDevices())
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
            return
        }
        printLibcamera(report)
        print("Cameras:")
        if report.cameras.isEmpty { print("  none found (kioskcam will use its built-in test pattern)") }
        for camera in report.cameras {
            print("  \(camera.path): \(camera.card) (driver \(camera.driver), \(camera.bus))")
            for format in camera.formats where !format.emulated {
                let sizes = format.sizes.prefix(8).map { size -> String in
                    let rates = size.frameRates.prefix(6).map { String(format: "%g", $0) }.joined(separator: "/")
                    return "\(size.width)x\(size.height)" + (rates.isEmpty ? "" : "@\(rates)")
                }
                let more = format.sizes.count > 8 ? " …" : ""
                print("    \(format.fourcc) \(format.description)\(format.usable ? "" : " (not usable by kioskcam)"): \(sizes.joined(separator: " "))\(more)")
            }
            let controls = camera.controls.filter { !$0.readOnly }.map { "\($0.name) [\($0.minimum)…\($0.maximum)]" }
            if !controls.isEmpty { print("    controls: \(controls.prefix(12).joined(separator: ", "))\(controls.count > 12 ? ", …" : "")") }
        }
        for skipped in report.skipped { print("  \(skipped.path): skipped (\(skipped.reason))") }
        print("Microphones:")
        if report.microphones.isEmpty { print("  none found (kioskcam will use its built-in tone)") }
        for mic in report.microphones {
            var line = "  alsa:\(mic.name): \(mic.cardName) — \(mic.deviceName)"
            if let caps = mic.capabilities {
                line += "; \(caps.rates.map(String.init).joined(separator: "/")) Hz, \(caps.minChannels)–\(caps.maxChannels) ch"
                if !caps.supportsS16 { line += ", no S16 (use plughw:)" }
            }
            if let error = mic.error { line += " (\(error))" }
            print(line)
        }
    }

    /// libcamera's cameras: what `camera.source = "libcamera:ID"` names, formats by
    /// libcamera's names with the V4L2 fourcc of the same bytes.
    private func printLibcamera(_ report: Report) {
        print("libcamera cameras (libcamera \(report.libcameraVersion)):")
        if let error = report.libcameraError { print("  libcamera did not start: \(error)") }
        if report.libcameraCameras.isEmpty, report.libcameraError == nil { print("  none listed") }
        for camera in report.libcameraCameras {
            print("  libcamera:\(camera.id)\(camera.model.isEmpty ? "" : ": \(camera.model)")")
            if let error = camera.error { print("    \(error)") }
            for format in camera.formats {
                let fourcc = LibcameraStreamChoice.fourcc(ofLibcameraName: format.name)
                var sizes = format.sizes.prefix(8).map(\.description).joined(separator: " ")
                if format.sizes.count > 8 { sizes += " …" }
                if let range = format.range {
                    sizes += (sizes.isEmpty ? "" : "; ") + "\(range.minimum)…\(range.maximum)"
                }
                print("    \(format.name)\(fourcc.map { " (\($0))" } ?? " (not usable by kioskcam)"): \(sizes)")
            }
            let controls = camera.controls.map { "\($0.name) [\(Self.number($0.minimum))…\(Self.number($0.maximum))]" }
            if !controls.isEmpty { print("    controls: \(controls.prefix(16).joined(separator: ", "))\(controls.count > 16 ? ", …" : "")") }
        }
    }

    /// "100", "0.5".
    private static func number(_ value: Double) -> String { String(format: "%g", value) }
}
