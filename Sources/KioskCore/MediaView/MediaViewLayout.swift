/// Where everything of the media view sits on the logical screen, for drawing and hit
/// testing alike (as `ScreenLayout` does for the live and PIN screens).
///
/// Every page has a header (back, title, page up/down); the days page lists days in
/// rows, a day's page shows a grid of thumbnail cells; the player shows the picture
/// (letter-boxed in `picture`) over a control bar: scrubber, close, −10 s,
/// play/pause, +10 s. A photo fills the screen under a close button.
public struct MediaViewLayout: Sendable, Equatable {
    public let size: ScreenSize
    public let header: ScreenRect
    public let backButton: ScreenRect
    public let title: ScreenRect
    public let previousPageButton: ScreenRect
    public let nextPageButton: ScreenRect
    /// Below the header: the list or the grid.
    public let body: ScreenRect
    /// The days page's rows (as many as fit).
    public let dayRows: [ScreenRect]
    /// The day page's cells, row by row (as many as fit).
    public let cells: [ScreenRect]
    /// The player: the picture area, the scrubber, and its buttons.
    public let picture: ScreenRect
    public let scrubberTrack: ScreenRect
    public let closeButton: ScreenRect
    public let skipBackButton: ScreenRect
    public let playPauseButton: ScreenRect
    public let skipForwardButton: ScreenRect
    /// The REC badge over the player's (or photo's) top-left corner while recording.
    public let recordingBadge: ScreenRect

    /// A cell's thumbnail is at most this big; the cell adds two lines of text under it.
    public static let thumbnailSize = FrameSize(width: 192, height: 108)
    /// Narrower cells than this would make the thumbnails too small to tell apart.
    public static let minimumCellWidth = 160

    public init(size: ScreenSize) {
        self.size = size
        let w = max(1, size.width), h = max(1, size.height)
        let gap = max(4, min(w, h) / 60)
        let headerHeight = max(40, h / 9)
        header = ScreenRect(x: 0, y: 0, width: w, height: headerHeight)
        let buttonWidth = max(headerHeight, w / 8)
        backButton = ScreenRect(x: gap, y: gap, width: buttonWidth, height: headerHeight - 2 * gap)
        nextPageButton = ScreenRect(x: w - gap - buttonWidth, y: gap, width: buttonWidth, height: headerHeight - 2 * gap)
        previousPageButton = ScreenRect(x: nextPageButton.x - gap - buttonWidth, y: gap, width: buttonWidth,
                                        height: headerHeight - 2 * gap)
        title = ScreenRect(x: backButton.maxX + gap, y: 0, width: max(0, previousPageButton.x - backButton.maxX - 2 * gap),
                           height: headerHeight)
        let body = ScreenRect(x: 0, y: headerHeight, width: w, height: max(0, h - headerHeight))
        self.body = body

        let rowHeight = max(44, h / 9)
        let rowCount = max(1, (body.height - gap) / (rowHeight + gap))
        dayRows = (0..<rowCount).map {
            ScreenRect(x: gap, y: body.y + gap + $0 * (rowHeight + gap), width: w - 2 * gap, height: rowHeight)
        }

        // Cells: a thumbnail plus two text lines; as many columns as fit at the smallest
        // cell width and rows at the thumbnail's height, at least one of each, spread out.
        let textHeight = max(32, h / 14)
        let thumb = Self.thumbnailSize
        let columns = max(1, (w - gap) / (Self.minimumCellWidth + gap))
        let rows = max(1, (body.height - gap) / (thumb.height + textHeight + gap))
        let cellWidth = (w - gap * (columns + 1)) / columns
        let cellHeight = (body.height - gap * (rows + 1)) / rows
        var cells: [ScreenRect] = []
        for row in 0..<rows {
            for column in 0..<columns {
                cells.append(ScreenRect(x: gap + column * (cellWidth + gap), y: body.y + gap + row * (cellHeight + gap),
                                        width: cellWidth, height: cellHeight))
            }
        }
        self.cells = cells

        let controlsHeight = max(56, h / 6)
        let scrubberHeight = max(28, controlsHeight / 2)
        let picture = ScreenRect(x: 0, y: 0, width: w, height: max(0, h - controlsHeight - scrubberHeight))
        self.picture = picture
        let track = ScreenRect(x: 2 * gap, y: picture.maxY, width: max(1, w - 4 * gap), height: scrubberHeight)
        scrubberTrack = track
        let controlsTop = track.maxY
        let controlWidth = (w - 5 * gap) / 4
        let controlHeight = max(1, h - controlsTop - gap)
        func control(_ index: Int) -> ScreenRect {
            ScreenRect(x: gap + index * (controlWidth + gap), y: controlsTop, width: controlWidth, height: controlHeight)
        }
        closeButton = control(0)
        skipBackButton = control(1)
        playPauseButton = control(2)
        skipForwardButton = control(3)
        recordingBadge = ScreenRect(x: gap, y: gap, width: max(1, w / 2), height: max(24, min(w, h) / 12))
    }

    /// Days listed on one page.
    public var daysPerPage: Int { dayRows.count }
    /// Thumbnails shown on one page.
    public var cellsPerPage: Int { cells.count }

    /// The picture of a `source`-sized video fitted into `area` with its aspect kept
    /// (letter- or pillar-boxed), even width and height for the scaler, centred.
    public static func fitted(_ source: FrameSize, in area: ScreenRect) -> ScreenRect {
        guard source.width > 0, source.height > 0, area.width >= 2, area.height >= 2 else {
            return ScreenRect(x: area.x, y: area.y, width: 0, height: 0)
        }
        var width = area.width, height = area.height
        if source.width * area.height > area.width * source.height {
            height = area.width * source.height / source.width
        } else {
            width = area.height * source.width / source.height
        }
        width = max(2, width & ~1)
        height = max(2, height & ~1)
        return ScreenRect(x: area.x + (area.width - width) / 2, y: area.y + (area.height - height) / 2,
                          width: width, height: height)
    }

    /// What a tap at `point` hits on `page`; `count` entries are on the page shown.
    public func target(at point: ScreenPoint, on page: MediaViewPage, count: Int) -> MediaViewTarget? {
        switch page {
        case .days, .day:
            if backButton.contains(point) { return .back }
            if previousPageButton.contains(point) { return .previousPage }
            if nextPageButton.contains(point) { return .nextPage }
            let slots = page == .days ? dayRows : cells
            guard let index = slots.prefix(max(0, count)).firstIndex(where: { $0.contains(point) }) else { return nil }
            return page == .days ? .day(index) : .item(index)
        case .player:
            if closeButton.contains(point) { return .close }
            if skipBackButton.contains(point) { return .skipBack }
            if playPauseButton.contains(point) { return .playPause }
            if skipForwardButton.contains(point) { return .skipForward }
            if scrubberTrack.contains(point) { return .scrubber }
            return nil
        case .photo:
            return backButton.contains(point) ? .close : nil
        }
    }
}

/// Which page of the media view is showing.
public enum MediaViewPage: String, Sendable, Equatable {
    /// The days with recordings, newest first.
    case days
    /// One day's recordings as thumbnails.
    case day
    /// A video or a sound recording playing.
    case player
    /// A photo, full screen.
    case photo
}

/// Something on the media view a tap can hit; list and grid indices count from the
/// first entry shown on the page.
public enum MediaViewTarget: Sendable, Equatable, Hashable {
    case back
    case previousPage
    case nextPage
    case day(Int)
    case item(Int)
    case close
    case skipBack
    case playPause
    case skipForward
    case scrubber
}
