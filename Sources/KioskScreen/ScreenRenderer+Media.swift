import CCairo
import KioskCore
import KioskMedia

extension ScreenRenderer {
    /// The media view: the days, a day's thumbnails, the player, a photo — and the REC
    /// badge over each while a recording runs.
    func drawMedia(_ model: ScreenModel) {
        canvas.fill(ScreenRect(x: 0, y: 0, width: size.width, height: size.height), Palette.background)
        guard let media = model.media else { return }
        let layout = media.layout
        switch media.page {
        case .days: drawDays(media)
        case .day: drawDay(media)
        case .player: drawPlayer(media)
        case .photo: drawPhoto(media)
        }
        if model.recordingState != .idle { drawRecordingBadge(model, in: mediaRecordingBadge(media)) }
        if let message = media.message { drawNotice(message, in: layout.body) }
    }

    // MARK: Lists

    private func drawHeader(_ media: MediaBrowser, title: String, back: String, first: Int, perPage: Int, count: Int) {
        let layout = media.layout
        canvas.fill(layout.header, Palette.surface)
        drawFlatButton(back, in: layout.backButton, pressed: media.pressedTarget == .back)
        canvas.text(title, in: layout.title, size: Double(layout.header.height) * 0.42, bold: true, colour: Palette.text)
        guard count > perPage, perPage > 0 else { return }
        drawFlatButton("‹", in: layout.previousPageButton, pressed: media.pressedTarget == .previousPage, enabled: first > 0)
        drawFlatButton("›", in: layout.nextPageButton, pressed: media.pressedTarget == .nextPage, enabled: first + perPage < count)
    }

    private func drawFlatButton(_ label: String, in rect: ScreenRect, pressed: Bool, enabled: Bool = true) {
        drawButtonFace(rect, pressed: pressed && enabled, highlighted: false)
        canvas.text(label, in: rect, size: Double(rect.height) * 0.45, bold: true,
                    colour: Palette.text.withAlpha(enabled ? 1 : 0.35), padding: 6)
    }

    private func drawDays(_ media: MediaBrowser) {
        drawHeader(media, title: "Library", back: "‹ Live", first: media.firstDay, perPage: media.layout.daysPerPage,
                   count: media.days.count)
        if media.days.isEmpty {
            canvas.text("Nothing recorded yet", in: media.layout.body, size: 22, bold: true, colour: Palette.mutedText)
            return
        }
        for (index, day) in media.visibleDays.enumerated() {
            let rect = media.layout.dayRows[index]
            drawButtonFace(rect, pressed: media.pressedTarget == .day(index), highlighted: false)
            canvas.text(Self.dayText(day), in: rect, size: Double(rect.height) * 0.4, bold: true, colour: Palette.text,
                        alignment: .leading, padding: 16)
        }
    }

    /// "2026-11-24" from "20261124".
    static func dayText(_ folder: String) -> String {
        guard folder.count == 8 else { return folder }
        let characters = Array(folder)
        return String(characters[0..<4]) + "-" + String(characters[4..<6]) + "-" + String(characters[6..<8])
    }

    private func drawDay(_ media: MediaBrowser) {
        drawHeader(media, title: Self.dayText(media.day ?? ""), back: "‹ Days", first: media.firstItem,
                   perPage: media.layout.cellsPerPage, count: media.items.count)
        if media.items.isEmpty {
            canvas.text("Reading…", in: media.layout.body, size: 22, bold: true, colour: Palette.mutedText)
            return
        }
        for (index, item) in media.visibleItems.enumerated() {
            drawCell(item, in: media.layout.cells[index], pressed: media.pressedTarget == .item(index))
        }
    }

    /// The thumbnail above two lines: the time (and an event mark), then length and size.
    private func drawCell(_ item: MediaItem, in cell: ScreenRect, pressed: Bool) {
        let lineHeight = max(16, cell.height / 7)
        let picture = ScreenRect(x: cell.x, y: cell.y, width: cell.width, height: cell.height - 2 * lineHeight)
        canvas.fill(picture, pressed ? Palette.accent : Palette.black)
        if let thumbnail = thumbnail(for: item) {
            canvas.paint(thumbnail.surface, size: thumbnail.size, fittedInto: picture.inset(by: pressed ? 3 : 0))
        } else {
            let label = switch item.kind { case .video: "Video"; case .screen: "Screen"; case .photo: "Photo"; case .audio: "Sound" }
            canvas.text(label, in: picture, size: Double(lineHeight), bold: true, colour: Palette.mutedText)
        }
        if let label = item.eventLabel {
            let mark = ScreenRect(x: picture.x + 4, y: picture.y + 4, width: min(picture.width - 8, lineHeight * 5), height: lineHeight)
            canvas.fillRounded(mark, radius: Double(lineHeight) / 2, Palette.red)
            canvas.text(label.uppercased(), in: mark, size: Double(lineHeight) * 0.6, bold: true, colour: Palette.text, padding: 4)
        }
        canvas.text(item.time, in: ScreenRect(x: cell.x, y: picture.maxY, width: cell.width, height: lineHeight),
                    size: Double(lineHeight) * 0.75, bold: true, colour: Palette.text, alignment: .leading, padding: 2)
        canvas.text(item.detail, in: ScreenRect(x: cell.x, y: picture.maxY + lineHeight, width: cell.width, height: lineHeight),
                    size: Double(lineHeight) * 0.7, colour: Palette.mutedText, alignment: .leading, padding: 2)
    }

    /// The stored thumbnail, from the bounded cache or read from its PNG; nil until it is made.
    private func thumbnail(for item: MediaItem) -> CairoPicture? {
        let path = MediaThumbnail.path(for: item.path)
        if let cached = thumbnails.value(for: path) { return cached }
        guard let picture = CairoPicture(png: path) else { return nil }
        thumbnails.insert(picture, for: path, cost: picture.byteCount)
        return picture
    }

    // MARK: Player and photo

    /// The player's picture area, black bars included, with the picture in it.
    func drawPlayerPicture(_ media: MediaBrowser) {
        let layout = media.layout
        canvas.fill(layout.picture, Palette.black)
        if let picture = mediaPicture, mediaPicturePath == media.currentItem?.path {
            canvas.paint(picture, x: layout.picture.x + (layout.picture.width - picture.size.width) / 2,
                         y: layout.picture.y + (layout.picture.height - picture.size.height) / 2)
        }
    }

    /// "0:01:02 / 0:03:00" over the picture's bottom-right corner.
    func drawPlayerTime(_ media: MediaBrowser) {
        let layout = media.layout
        let position = media.scrubbing ?? media.position
        let timeText = Self.clockText(position) + " / " + (media.duration > 0 ? Self.clockText(media.duration) : "?")
        canvas.text(timeText, in: ScreenRect(x: layout.picture.maxX - 260, y: layout.picture.maxY - 30, width: 250, height: 26),
                    size: 16, bold: true, colour: Palette.text, alignment: .trailing)
    }

    /// Where the REC badge goes on a page of the media view.
    func mediaRecordingBadge(_ media: MediaBrowser) -> ScreenRect {
        let layout = media.layout
        return media.page == .days || media.page == .day
            ? ScreenRect(x: layout.recordingBadge.x, y: size.height - layout.recordingBadge.height - layout.recordingBadge.y,
                         width: layout.recordingBadge.width, height: layout.recordingBadge.height)
            : layout.recordingBadge
    }

    private func drawPlayer(_ media: MediaBrowser) {
        let layout = media.layout
        let item = media.currentItem
        let position = media.scrubbing ?? media.position
        if item?.kind == .audio {
            canvas.fill(layout.picture, Palette.black)
        } else {
            drawPlayerPicture(media)
        }
        if item?.kind == .audio, let item, let waveform = thumbnail(for: item) {
            let area = layout.picture.inset(by: 12)
            canvas.paint(waveform.surface, size: waveform.size, fittedInto: area)
            // The play head moves across the waveform.
            let head = PlaybackScrubber(track: ScreenRect(x: area.x, y: area.y, width: area.width, height: area.height),
                                        duration: media.duration).x(forSeconds: position)
            canvas.fill(ScreenRect(x: head - 1, y: area.y, width: 3, height: area.height), Palette.red)
        }
        // The scrubber: elapsed in the accent colour, a knob at the play head, the times.
        let track = layout.scrubberTrack
        canvas.fill(ScreenRect(x: 0, y: track.y, width: size.width, height: size.height - track.y), Palette.background)
        let bar = ScreenRect(x: track.x, y: track.y + track.height / 2 - 3, width: track.width, height: 6)
        canvas.fillRounded(bar, radius: 3, Palette.surfaceEdge)
        let head = media.scrubber.x(forSeconds: position)
        canvas.fillRounded(ScreenRect(x: bar.x, y: bar.y, width: max(0, head - bar.x), height: bar.height), radius: 3, Palette.accent)
        canvas.fillCircle(centreX: Double(head), centreY: Double(bar.y + 3), radius: Double(track.height) / 3, Palette.text)
        drawPlayerTime(media)
        drawFlatButton("Close", in: layout.closeButton, pressed: media.pressedTarget == .close)
        drawFlatButton("−10 s", in: layout.skipBackButton, pressed: media.pressedTarget == .skipBack)
        drawFlatButton(media.isPaused ? "Play" : "Pause", in: layout.playPauseButton, pressed: media.pressedTarget == .playPause)
        drawFlatButton("+10 s", in: layout.skipForwardButton, pressed: media.pressedTarget == .skipForward)
    }

    private func drawPhoto(_ media: MediaBrowser) {
        canvas.fill(ScreenRect(x: 0, y: 0, width: size.width, height: size.height), Palette.black)
        if let picture = mediaPicture, mediaPicturePath == media.currentItem?.path {
            canvas.paint(picture, x: (size.width - picture.size.width) / 2, y: (size.height - picture.size.height) / 2)
        }
        drawFlatButton("✕", in: media.layout.backButton, pressed: media.pressedTarget == .close)
    }
}
