import ArgumentParser
import Foundation
import Glibc
import KioskALSA
import KioskCLI
import KioskCore
import KioskMedia

/// `kioskcam play FILE`: a recording's sound through an ALSA device, with a progress line.
struct PlayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Play a recording's sound through a sound card.",
        discussion: """
        Plays the sound of a kioskcam recording (.m4a, or the sound of an .mp4), WAV, or any \
        file FFmpeg reads, through an ALSA playback device, showing elapsed / total time and \
        underruns. With --screen the picture plays too, on a framebuffer, drawn as the touch \
        screen's player draws it (picture and sound in sync on the sound card's clock). Mono and stereo play as recorded; wider sound is folded to stereo. On a \
        terminal, space pauses and resumes, + and - change the volume a tenth at a time and q \
        stops. Ctrl-C stops at once. The device is opened without waiting: a busy or \
        missing device is an error (exit 69), not a hang.
        """
    )

    @Argument(help: ArgumentHelp("The recording.", valueName: "file"))
    var file: String

    @Option(help: ArgumentHelp("Playback device: alsa:NAME (alsa:default, alsa:plughw:0,0, alsa:hw:Loopback,0,0).",
                               valueName: "alsa:DEV"))
    var device = "alsa:default"

    @Option(name: .customLong("from"), help: ArgumentHelp("Start here: seconds (1.5), 1.5s, 2m, or hh:mm:ss.xx.", valueName: "time"))
    var start: String?

    @Option(help: ArgumentHelp("Volume, 0 (silent) to 1 (as recorded).", valueName: "0…1"))
    var volume = 1.0

    @Option(help: ArgumentHelp("Show the picture too, as the touch screen's player does: /dev/fbN or file:/path (a file-backed framebuffer).",
                               valueName: "framebuffer"))
    var screen: String?

    @Flag(help: "No progress line.")
    var quiet = false

    @Flag(name: .shortAndLong, help: "Show FFmpeg's own messages.")
    var verbose = false

    func run() throws {
        try runReportingErrors {
            let alsaName = try Self.parseDevice(device)
            let from = try start.map(Self.parseTime) ?? 0
            guard volume.isFinite, (0...1).contains(volume) else {
                throw CLIError("--volume \(volume): use a number from 0 (silent) to 1 (as recorded)", exitCode: 64)
            }
            try Self.checkReadable(file)
            MediaLibraryLog.setVerbose(verbose)
            if let screen {
                try playOnScreen(screen, alsaName: alsaName, from: from)
                return
            }

            let decoder: AudioFileDecoder
            do throws(MediaError) {
                decoder = try AudioFileDecoder(path: file)
            } catch {
                throw CLIError(error.description)
            }
            let total = decoder.expectedSeconds
            if let total, from >= total {
                throw CLIError("--from \(start ?? ""): \(file) lasts only \(Self.clock(total)); start before its end", exitCode: 64)
            }
            let player: ALSAPlayer
            do throws(ALSAError) {
                player = try ALSAPlayer(device: alsaName,
                                        format: AudioFormat(sampleRate: decoder.sampleRate, channels: decoder.keptChannels))
            } catch {
                switch error.code {
                case .deviceMissing, .busy, .permissionDenied: throw CLIError(error.description, exitCode: 69)
                default: throw CLIError(error.description)
                }
            }
            player.volume = volume
            let stopper = PlaybackStopper(player)
            defer { withExtendedLifetime(stopper) {} }

            let progress = PlaybackProgress(file: file, total: total, from: from, rate: player.format.sampleRate,
                                            enabled: !quiet)
            // Keys only from a terminal: piped or redirected input plays as before.
            let keyboard = PlaybackKeyboard(player: player) {
                progress.show(playedFrames: player.playedFrames, underruns: player.underruns,
                              paused: player.isPaused, volume: player.volume, force: true)
            }
            defer { keyboard?.stop() }
            if keyboard != nil, !quiet { FileHandle.standardError.write(Data((PlaybackKeys.help + "\n").utf8)) }
            progress.showsVolume = keyboard != nil
            var failure: ALSAError?
            do throws(MediaError) {
                try decoder.decodeInterleavedS16(from: from) { samples in
                    do throws(ALSAError) {
                        let more = try player.write(samples)
                        progress.show(playedFrames: player.playedFrames, underruns: player.underruns, volume: player.volume)
                        return more
                    } catch {
                        failure = error
                        return false
                    }
                }
            } catch {
                player.stop()
                _ = try? player.finish()
                progress.end()
                throw CLIError(error.description)
            }
            if let failure {
                player.stop()
                _ = try? player.finish()
                progress.end()
                throw CLIError(failure.description, exitCode: failure.code == .deviceMissing ? 69 : 1)
            }
            let end: ALSAPlayer.End
            do throws(ALSAError) {
                end = try player.finish()
            } catch {
                progress.end()
                throw CLIError(error.description)
            }
            keyboard?.stop()
            progress.show(playedFrames: player.playedFrames, underruns: player.underruns, volume: player.volume, force: true)
            progress.end()
            let heard = Double(player.playedFrames) / Double(max(1, player.format.sampleRate))
            let verb = end == .finished ? "played" : "stopped after"
            let folded = decoder.channelCount > decoder.keptChannels ? ", \(decoder.channelCount) channels folded to stereo" : ""
            FileHandle.standardError.write(Data("""
                \(verb) \(Self.clock(heard)) of \(file) from \(Self.clock(from)) on \(alsaName), \
                underruns: \(player.underruns)\(folded)\(decoder.damagedPackets > 0 ? ", damaged packets played as silence: \(decoder.damagedPackets)" : "")\n
                """.utf8))
        }
    }

    /// "alsa:NAME" → "NAME".
    /// - Throws: `CLIError` with exit status 64 for anything else.
    static func parseDevice(_ text: String) throws -> String {
        guard text.hasPrefix("alsa:"), text.count > 5 else {
            throw CLIError("--device \(text): use alsa:NAME, e.g. alsa:default or alsa:plughw:0,0 (`aplay -L` lists names)",
                           exitCode: 64)
        }
        return String(text.dropFirst(5))
    }

    /// Seconds from "1.5", "1.5s", "2m", "1m30s", "90", "1:30" or "00:01:30.50".
    /// - Throws: `CLIError` with exit status 64.
    static func parseTime(_ text: String) throws -> Double {
        let usage = "--from \(text): use a time from the start such as 1.5, 1.5s, 2m or 00:01:30.5"
        if text.contains(":") {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard (2...3).contains(parts.count),
                  parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { ("0"..."9").contains($0) || $0 == "." } }),
                  parts.dropLast().allSatisfy({ !$0.contains(".") }) else {
                throw CLIError(usage, exitCode: 64)
            }
            var seconds = 0.0
            for (index, part) in parts.enumerated() {
                guard let value = Double(part), value.isFinite, index == 0 || value < 60 else {
                    throw CLIError(usage, exitCode: 64)
                }
                seconds = seconds * 60 + value
            }
            return seconds
        }
        guard let seconds = parseDuration(text), seconds.isFinite, seconds >= 0 else {
            throw CLIError(usage, exitCode: 64)
        }
        return seconds
    }

    /// - Throws: `CLIError` naming the path and what to do.
    static func checkReadable(_ file: String) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory) else {
            throw CLIError("\(file) does not exist: give the path of a recording (kioskcam list shows them)")
        }
        guard !isDirectory.boolValue else {
            throw CLIError("\(file) is a folder: give the path of a recording")
        }
        guard FileManager.default.isReadableFile(atPath: file) else {
            throw CLIError("cannot read \(file): check its permissions")
        }
    }

    /// "1:02.5" (minutes, seconds with a tenth), "1:02:03.0" past an hour.
    static func clock(_ seconds: Double) -> String {
        let tenths = Int((max(0, seconds.isFinite ? seconds : 0) * 10).rounded(.down))
        let (hours, rest) = tenths.quotientAndRemainder(dividingBy: 36_000)
        let (minutes, secondTenths) = rest.quotientAndRemainder(dividingBy: 600)
        let secondsText = String(format: "%02d.%d", secondTenths / 10, secondTenths % 10)
        return hours > 0 ? String(format: "%d:%02d:", hours, minutes) + secondsText : "\(minutes):" + secondsText
    }
}

/// Ctrl-C (SIGINT) and SIGTERM stop the player, for as long as this lives.
final class PlaybackStopper: Sendable {
    private let sources: Locked<[DispatchSourceSignal]> = Locked([])

    convenience init(_ player: ALSAPlayer) { self.init { player.stop() } }

    init(stop: @escaping @Sendable () -> Void) {
        sources.withLock { sources in
            for number in [SIGINT, SIGTERM] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { stop() }
                source.resume()
                sources.append(source)
            }
        }
    }

    deinit { sources.withLock { $0.forEach { $0.cancel() } } }
}

/// The progress line on stderr: rewritten in place on a terminal, a line a second otherwise.
/// Shown from the playing thread and, after a key, from the key thread: one at a time.
private final class PlaybackProgress: @unchecked Sendable { // @unchecked: the mutable state is under `lock`
    let file: String
    let total: Double?
    let from: Double
    let rate: Int
    let enabled: Bool
    let terminal = isatty(STDERR_FILENO) == 1
    private let lock = Lock()
    private var lastShown = -1.0
    private var shownAny = false
    /// With keys: the volume is shown, as + and - change it.
    var showsVolume: Bool {
        get { lock.withLock { volumeShown } }
        set { lock.withLock { volumeShown = newValue } }
    }
    private var volumeShown = false

    init(file: String, total: Double?, from: Double, rate: Int, enabled: Bool) {
        self.file = file
        self.total = total
        self.from = from
        self.rate = max(1, rate)
        self.enabled = enabled
    }

    func show(playedFrames: Int, underruns: Int, paused: Bool = false, volume: Double = 1, force: Bool = false) {
        guard enabled else { return }
        lock.withLock {
            let elapsed = from + Double(playedFrames) / Double(rate)
            guard force || elapsed - lastShown >= (terminal ? 0.2 : 1) else { return }
            lastShown = elapsed
            var line = "\(paused ? "paused" : "playing") \(PlayCommand.clock(elapsed)) / \(total.map(PlayCommand.clock) ?? "?"), underruns: \(underruns)"
            if volumeShown { line += ", volume \(Int((volume * 100).rounded())) %" }
            FileHandle.standardError.write(Data((terminal ? "\r\(line)\u{1B}[K" : line + "\n").utf8))
            shownAny = true
        }
    }

    func end() {
        lock.withLock {
            if enabled, terminal, shownAny { FileHandle.standardError.write(Data("\n".utf8)) }
        }
    }
}
