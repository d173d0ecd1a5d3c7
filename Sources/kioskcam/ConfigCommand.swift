import ArgumentParser
import Foundation
import KioskAppliance
import KioskCLI
import KioskCore
import KioskRecording
import KioskUpload

/// `kioskcam config check`: validate a configuration file before installing it.
struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Check a configuration file and show the settings in effect.",
        subcommands: [Check.self]
    )

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Validate the configuration and print the values in effect.")

        @OptionGroup var common: CommonOptions

        func run() throws {
            try runReportingErrors {
                let c = try common.loadConfiguration()
                if c.upload.isEnabled {
                    if let problem = c.upload.problem { throw CLIError(problem.description, exitCode: 78) }
                    do throws(UploadError) {
                        _ = try UploadCredentials.secret(fromFile: c.upload.secretAccessKeyFile)
                    } catch {
                        throw CLIError(error.description, exitCode: 78)
                    }
                    print("upload.url = \(c.upload.url)  endpoint = \(c.upload.effectiveEndpoint)  kinds = \(c.upload.kinds.map(\.rawValue).sorted().joined(separator: ","))")
                }
                if let broker = c.mqtt.broker {
                    do {
                        _ = try MQTTBridge.readPassword(c.mqtt)
                    } catch {
                        throw CLIError("\(error)", exitCode: 78)
                    }
                    if let ca = c.mqtt.caFile, !FileManager.default.isReadableFile(atPath: ca) {
                        throw CLIError("mqtt.ca_file \(ca) cannot be read: put the broker's CA certificate (PEM) there, or set ca_file = \"\" for the system's", exitCode: 78)
                    }
                    print("mqtt.url = \(broker)  topics under \(c.mqtt.topicPrefix)/<device id>/  discovery under \(c.mqtt.discoveryPrefix)/")
                }
                // Keys an admin saved from the web app's Settings page win over the file: say so.
                let saved = WebSettingsFile.path(stateDirectory: c.control.stateDirectory)
                if let overlay = try? WebSettingsFile.load(saved), !overlay.values.isEmpty {
                    let keys = overlay.values.keys.sorted().map { "\($0) = \(WebSettingsOverlay.render(overlay.values[$0] ?? .string("")))" }
                    print("saved from the web app (\(saved), overriding the file): \(keys.joined(separator: ", "))")
                }
                print("""
                storage.media_root = \(c.storage.mediaRoot)  retention_days = \(c.storage.retentionDays)
                storage.segment_seconds = \(c.storage.segmentSeconds)
                storage.segment_max_bytes = \(c.storage.segmentMaxBytes.map(String.init) ?? "no limit")
                camera.source = \(c.camera.source)  size = \(c.camera.size)  fps = \(c.camera.framesPerSecond)  pixel_format = \(c.camera.pixelFormat?.rawValue ?? "auto")
                microphone.source = \(c.microphone.source)  \(c.microphone.sampleRate) Hz  \(c.microphone.channels) ch
                encoder.video_codec = \(c.encoder.videoCodec)  preset = \(c.encoder.preset)  tune = \(c.encoder.tune)  video bitrate = \(c.effectiveVideoBitrate / 1000) kbit/s  keyframe every \(c.encoder.keyframeInterval) frames
                configuration OK
                """)
            }
        }
    }
}
