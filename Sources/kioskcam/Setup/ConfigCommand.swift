import ArgumentParser
import CAVUtil
import Foundation
import KioskAppliance
import KioskCLI
import KioskCore
import KioskMedia
import KioskRecording
import KioskUpload

/// `kioskcam config check`: validate a configuration file before installing it.
struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Check a configuration file and show the settings in effect.",
        subcommands: [Check.self, Overlay.self]
    )

    /// `kioskcam config overlay`: the overlay and masks as a picture, before any camera records them.
    struct Overlay: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Draw [overlay] and [privacy] on a grey picture of the camera's size, as recordings will show them.",
            discussion: "Writes a PNG (or, for a name ending in .yuv, raw planar 4:2:0) of camera.size turned by camera.rotation.")

        @OptionGroup var common: CommonOptions

        @Option(help: "The picture to write: a .png, or a .yuv for raw yuv420p.")
        var out: String

        @Option(help: "The time to show, in seconds since 1970 (default: now).")
        var time: Double?

        @Option(help: ArgumentHelp("With --time: draw every second from --time to this one, a file each, named by --out with {time} in it (at most 3,600).",
                                   valueName: "seconds"))
        var until: Double?

        @Option(help: "The frame number {frame} shows.")
        var frame = 0

        /// The most pictures one `--until` may ask for: an hour of seconds.
        static let mostSeconds = 3_600

        func run() throws {
            try runReportingErrors {
                let c = try common.loadConfiguration()
                let seconds = time ?? Date().timeIntervalSince1970
                guard seconds.isFinite, abs(seconds) < 1e11 else { throw CLIError("--time \(seconds) is not a time kioskcam can show", exitCode: 64) }
                guard let until else {
                    print(try write(c, seconds: seconds))
                    return
                }
                // A range: the HIL's overlay check compares a picture with each second it may
                // show, and one process for them all spares a guest a start-up per second.
                guard time != nil else { throw CLIError("--until needs --time, the first second to draw", exitCode: 64) }
                guard until.isFinite, until >= seconds, until - seconds < Double(Self.mostSeconds) else {
                    throw CLIError("--until \(until) must be from --time to \(Self.mostSeconds - 1) s after it", exitCode: 64)
                }
                guard out.contains("{time}") else {
                    throw CLIError("--out \(out) needs {time} in its name with --until, e.g. ref-{time}.yuv: one file a second", exitCode: 64)
                }
                for step in 0...Int((until - seconds).rounded(.down)) {
                    print(try write(c, seconds: seconds + Double(step)))
                }
            }
        }

        /// A time as a file name's part: whole seconds without a fraction.
        static func name(_ seconds: Double) -> String {
            seconds == seconds.rounded(.down) ? String(Int64(seconds)) : String(seconds)
        }

        /// Draws the marks as shown at `seconds` and writes them to `--out`, its `{time}`
        /// (if any) replaced by that second; returns the path written.
        private func write(_ c: Configuration, seconds: Double) throws -> String {
            let path = out.replacingOccurrences(of: "{time}", with: Self.name(seconds))
            let picture: (size: FrameSize, pixels: [UInt8])
            switch PictureMarksPreview.render(c, unixSeconds: seconds, frame: frame) {
            case .success(let rendered): picture = rendered
            case .failure(let error): throw CLIError("privacy.mask_png: \(error)", exitCode: 78)
            }
            let bytes: [UInt8]
            if path.lowercased().hasSuffix(".yuv") {
                bytes = picture.pixels
            } else {
                do throws(MediaError) {
                    // libswscale, as every other conversion: planar 4:2:0 to RGB24 for the PNG.
                    let source = VideoFormat(size: picture.size, pixelFormat: .yuv420, framesPerSecond: c.camera.framesPerSecond)
                    let converter = try PixelConverter(source: source, destinationSize: picture.size,
                                                       destinationFormat: AV_PIX_FMT_RGB24)
                    var rgb = [UInt8](repeating: 0, count: PixelFormat.rgb24.frameByteCount(picture.size))
                    picture.pixels.withUnsafeBytes { yuv in
                        rgb.withUnsafeMutableBytes { target in
                            converter.convert(yuv.baseAddress!, intoPacked: target.baseAddress!, layout: .rgb24, size: picture.size)
                        }
                    }
                    bytes = try PNGEncoder.encode(rgb, size: picture.size)
                } catch {
                    throw CLIError("\(error)")
                }
            }
            guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
                throw CLIError("cannot write \(path): check that its folder exists and is writable", exitCode: 73)
            }
            return path
        }
    }

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Validate the configuration and print the values in effect.")

        /// "2 min 24 s" for 144.
        static func minutesAndSeconds(_ seconds: Int) -> String {
            seconds < 60 ? "\(seconds) s" : "\(seconds / 60) min" + (seconds % 60 == 0 ? "" : " \(seconds % 60) s")
        }

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
                if case .failure(let error) = PrivacyMask.configured(c) {
                    throw CLIError("privacy.mask_png: \(error); fix the file, or set privacy.mask_png = \"\"", exitCode: 78)
                }
                if !c.overlay.text.isEmpty || !c.privacy.isEmpty {
                    let now = LocalZone.wholeSeconds(Date()), zone = LocalZone.offset(atUnixSeconds: now)
                    let sample = c.overlay.template?.render(unixSeconds: now, utcOffsetSeconds: zone.seconds, zoneName: zone.abbreviation,
                                                            values: OverlayFields.configured(c, deviceID: nil).current)
                    print("overlay: \(sample.map { "\"\($0)\" at \(c.overlay.position.rawValue), \(c.overlay.sizePercent) % high" } ?? "none")  privacy: \(c.privacy.masks.count) rectangle(s)\(c.privacy.maskPicture.map { " and \($0)" } ?? "") (kioskcam config overlay --out preview.png shows them)")
                }
                if c.timelapse.isEnabled {
                    let t = c.timelapse
                    print("timelapse: a frame every \(t.intervalSeconds) s into \(LibraryLayout(root: c.storage.mediaRoot).timelapseDirectory)/YYYYMMDD.mp4 at \(t.framesPerSecond) fps (a day plays in \(Self.minutesAndSeconds(86_400 / t.intervalSeconds / t.framesPerSecond)))")
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
