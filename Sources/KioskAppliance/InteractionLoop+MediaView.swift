import Foundation
import KioskCore
import KioskMedia
import KioskRecording
import KioskScreen
import Logging

// The media view on the loop thread: listings and thumbnails off it (on `mediaQueue`),
// one player at a time, its position fed to the screen, a photo decoded to fit, and the
// preview's overlay text. The loop itself is in InteractionLoop.swift.

extension InteractionLoop {
    /// `[overlay]` for the preview when `overlay.preview` asks for it: the loop's own
    /// stamp's text for the frame's capture time (as the recordings carry it).
    func previewOverlay(for frame: VideoFrame) -> PreviewOverlay? {
        guard let stamp = previewStamp else { return nil }
        let captured = Date().timeIntervalSince1970 - Double(clock.now().nanoseconds(since: frame.timestamp)) / 1e9
        return PreviewOverlay(text: stamp.text(unixSeconds: captured, frame: frame.sequence), position: stamp.spec.position,
                              heightFraction: stamp.spec.heightFraction)
    }

    func performMedia(_ request: MediaViewEffect, now: MonotonicInstant) {
        let listing = LibraryListing(layout: LibraryLayout(root: configuration.storage.mediaRoot))
        switch request {
        case .listDays:
            mediaDay.withLock { $0 = nil }
            mediaQueue.async { [weak self] in self?.post(.media(.days(listing.days()))) }
        case .listDay(let day):
            mediaDay.withLock { $0 = day }
            mediaQueue.async { [weak self] in self?.listDay(day, listing: listing) }
        case .play(let item):
            stopPlayer()
            guard let renderer else { return }
            let area = MediaViewLayout(size: renderer.size).picture
            let path = item.path
            let player = MediaPlayer(path: path, kind: item.kind, audioDevice: configuration.screen.playbackDevice,
                                     pictureArea: FrameSize(width: area.width, height: area.height)) { pixels, size in
                renderer.presentMediaPicture(pixels, size: size, for: path)
            }
            do {
                try player.start()
            } catch {
                logger.error("media: cannot play \(path): \(error)")
                feed(.media(.failed("Cannot play this recording")), now: now)
                return
            }
            logger.info("media: playing \(path)")
            self.player = player
            playerPollAt = now
            playerStartLatency = Double(clock.now().nanoseconds(since: lastTouchTime ?? now)) / 1e6
            firstPictureLogged = !item.kind.isMovie
            setPlaybackActive(true)
        case .showPhoto(let item):
            stopPlayer()
            guard let renderer else { return }
            let logger = logger
            mediaQueue.async { [weak self] in
                do {
                    let decoder = try VideoFileDecoder(path: item.path)
                    let screen = ScreenRect(x: 0, y: 0, width: renderer.size.width, height: renderer.size.height)
                    let fitted = MediaViewLayout.fitted(decoder.size, in: screen)
                    let size = FrameSize(width: fitted.width, height: fitted.height)
                    try decoder.decode(scaledTo: size, layout: .bgrx) { pixels, _ in
                        renderer.presentMediaPicture(pixels, size: size, for: item.path)
                        return false
                    }
                } catch {
                    logger.error("media: cannot show \(item.path): \(error)")
                    self?.post(.media(.failed("Cannot show this photo")))
                }
            }
        case .stopPlayback:
            stopPlayer()
        case .togglePause:
            player?.togglePause()
        case .seek(let seconds):
            player?.seek(to: seconds)
        case .leave, .redraw:
            break
        }
    }

    /// Lists a day, then makes its missing thumbnails, telling the screen every few.
    private func listDay(_ day: String, listing: LibraryListing) {
        let items = listing.recordings(on: day).map { recording in
            let name = String(recording.path.split(separator: "/").last ?? "")
            return MediaItem(kind: recording.kind, path: recording.path, time: String(recording.start.suffix(8)),
                             seconds: recording.seconds, bytes: recording.bytes, eventLabel: LibraryLayout.eventLabel(ofFileName: name))
        }
        post(.media(.day(day, items)))
        var made = 0
        for item in items {
            guard mediaDay.withLock({ $0 == day }) else { return }
            do {
                try MediaThumbnail.stored(for: item.path, kind: item.kind, size: MediaViewLayout.thumbnailSize)
            } catch {
                logger.notice("media: no thumbnail for \(item.path): \(error)")
            }
            made += 1
            if made % 4 == 0 || made == items.count { post(.media(.thumbnails(day))) }
        }
    }

    /// Hands the player's position to the screen a few times a second; a failure closes it.
    func pollPlayer(now: MonotonicInstant) {
        guard let player, let due = playerPollAt, now >= due else { return }
        playerPollAt = now.advanced(byNanoseconds: Self.playerPollNanoseconds)
        let status = player.status
        if !firstPictureLogged, let first = status.firstFrameMilliseconds {
            firstPictureLogged = true
            logger.info("media: first picture \(String(format: "%.0f", playerStartLatency + first)) ms after the tap")
        }
        if let failure = status.failure {
            logger.error("media: playing \(player.path) failed: \(failure)")
            stopPlayer()
            feed(.media(.failed("Playing stopped: see the log")), now: now)
            return
        }
        feed(.media(.playback(position: status.position, duration: status.duration, paused: status.paused)), now: now)
    }

    func stopPlayer() {
        guard let player else { return }
        player.stop()
        let status = player.status
        let sync = status.syncOffsetMaxMilliseconds.map { max in
            String(format: ", picture vs sound: mean %.1f ms, max %.1f ms", status.syncOffsetMeanMilliseconds ?? 0, max)
        } ?? ""
        logger.info("media: stopped \(player.path) at \(String(format: "%.1f", status.position)) s, \(status.framesShown) pictures shown, \(status.framesDropped) dropped, \(status.underruns) underruns\(sync)")
        self.player = nil
        playerPollAt = nil
        renderer?.clearMediaPicture()
        setPlaybackActive(false)
    }

    /// Tells the screen's status that media plays (the screensaver's busy flag).
    private func setPlaybackActive(_ active: Bool) {
        inboxLock.withLock {
            mediaPlaying = active
            guard var status = lastScreenStatus, status.playbackActive != active else { return }
            status.playbackActive = active
            lastScreenStatus = status
            inbox.append(.status(status))
        }
        wake()
    }
}
