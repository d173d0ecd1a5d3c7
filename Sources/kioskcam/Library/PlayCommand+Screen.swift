import Foundation
import Glibc
import KioskAppliance
import KioskCLI
import KioskCore
import KioskMedia
import KioskScreen

extension PlayCommand {
    /// `play --screen`: picture and sound through the media view's own player and renderer,
    /// so what it costs on a board (and in the HIL guest against ffmpeg's fbdev output) is
    /// what the touch screen's player costs.
    /// - Throws: `CLIError` for a framebuffer that cannot be opened, a file with nothing to
    ///   play, or a failure while playing (a busy or missing sound card among them).
    func playOnScreen(_ source: String, alsaName: String, from: Double) throws {
        guard volume == 1 else {
            throw CLIError("--volume works for sound only; leave it out with --screen (the panel's player plays as recorded)", exitCode: 64)
        }
        let kind = Self.kind(of: file)
        guard kind != .photo else {
            throw CLIError("\(file) is a photo: --screen plays a video or sound recording", exitCode: 64)
        }
        var configuration = Configuration()
        try configuration.override("screen.framebuffer", .string(source), origin: "--screen")
        if case .automatic = configuration.screen.framebuffer {
            throw CLIError("--screen auto: name the framebuffer, /dev/fbN or file:/path", exitCode: 64)
        }
        let framebuffer: Framebuffer
        let renderer: ScreenRenderer
        do throws(ScreenError) {
            framebuffer = try Framebuffer.open(config: configuration) { _ in }
            renderer = try ScreenRenderer(framebuffer: framebuffer, rotation: configuration.screen.rotation)
        } catch {
            throw CLIError(error.description)
        }
        defer { framebuffer.close() }

        var browser = MediaBrowser(layout: MediaViewLayout(size: renderer.size))
        _ = browser.open(MediaItem(kind: kind, path: file, time: "", seconds: nil, bytes: 0), day: "")
        var model = ScreenModel()
        model.page = .media
        model.media = browser
        renderer.render(model)

        let area = browser.layout.picture
        let path = file
        let player = MediaPlayer(path: file, kind: kind, audioDevice: alsaName,
                                 pictureArea: FrameSize(width: area.width, height: area.height)) { pixels, size in
            renderer.presentMediaPicture(pixels, size: size, for: path)
        }
        do throws(MediaError) {
            try player.start()
        } catch {
            throw CLIError(error.description)
        }
        if from > 0 { player.seek(to: from) }
        let stopped = Locked(false)
        let stopper = PlaybackStopper { stopped.withLock { $0 = true } }
        defer { withExtendedLifetime(stopper) {} }

        // The scrubber moves a few times a second, as the appliance's poll moves it.
        var status = player.status
        var lastLine = -1.0
        while !status.ended, status.failure == nil, !stopped.withLock({ $0 }) {
            usleep(250_000)
            status = player.status
            if !browser.playback(position: status.position, duration: status.duration, paused: status.paused).isEmpty {
                model.media = browser
                renderer.render(model)
            }
            if !quiet, status.position - lastLine >= 1 {
                lastLine = status.position
                FileHandle.standardError.write(Data("""
                    playing \(Self.clock(status.position)) / \(status.duration.map(Self.clock) ?? "?"), \
                    pictures shown: \(status.framesShown), dropped: \(status.framesDropped), underruns: \(status.underruns)\n
                    """.utf8))
            }
        }
        player.stop()
        status = player.status
        if let failure = status.failure {
            throw CLIError(failure)
        }
        let sync = status.syncOffsetMaxMilliseconds.map { max in
            String(format: ", picture vs sound: mean %.1f ms, max %.1f ms", status.syncOffsetMeanMilliseconds ?? 0, max)
        } ?? ""
        FileHandle.standardError.write(Data("""
            \(status.ended ? "played" : "stopped after") \(Self.clock(status.position)) of \(file) on \(alsaName) and \
            \(framebuffer.path): \(status.framesShown) pictures shown, \(status.framesDropped) dropped, \
            underruns: \(status.underruns)\(sync)\n
            """.utf8))
    }

    /// What the player should make of `path`, from its extension: sound-only files by
    /// their usual extensions, JPEG as a photo, anything else as a video.
    static func kind(of path: String) -> MediaKind {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: ".") else { return .video }
        switch name[name.index(after: dot)...].lowercased() {
        case "m4a", "wav", "aac", "mp3", "flac", "ogg", "opus": return .audio
        case "jpg", "jpeg": return .photo
        default: return .video
        }
    }
}
