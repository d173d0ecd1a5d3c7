/// One recording as the media view shows it.
public struct MediaItem: Sendable, Equatable, Hashable {
    public var kind: MediaKind
    public var path: String
    /// "14:03:22", local time from the file name.
    public var time: String
    /// Length in seconds; nil for photos and when the index does not know it.
    public var seconds: Double?
    public var bytes: Int64
    /// The trigger of an event clip (`motion`, `button`…), nil for a plain recording.
    public var eventLabel: String?

    public init(kind: MediaKind, path: String, time: String, seconds: Double?, bytes: Int64, eventLabel: String? = nil) {
        self.kind = kind
        self.path = path
        self.time = time
        self.seconds = seconds
        self.bytes = bytes
        self.eventLabel = eventLabel
    }

    /// The second line of a cell: "0:42 · 3.1 MiB", or only the size for a photo.
    public var detail: String {
        let size = ByteCountText.text(bytes)
        guard let seconds, seconds.isFinite, seconds >= 0 else { return size }
        let whole = Int(seconds.rounded())
        let text = whole >= 3600 ? "\(whole / 3600):" + Self.twoDigits(whole / 60 % 60) + ":" + Self.twoDigits(whole % 60)
            : "\(whole / 60):" + Self.twoDigits(whole % 60)
        return text + " · " + size
    }

    static func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
}

/// What the media view asks its owner to do; the owner answers with the browser's
/// `show…` calls (a listing is a disk scan and runs off the UI thread).
public enum MediaViewEffect: Sendable, Equatable {
    /// List the days (answer: `showDays`).
    case listDays
    /// List one day's recordings (answer: `showDay`).
    case listDay(String)
    /// Start playing this video or sound recording from the start.
    case play(MediaItem)
    /// Show this photo.
    case showPhoto(MediaItem)
    /// Stop and close whatever is playing.
    case stopPlayback
    case togglePause
    /// Seek to this many seconds from the start (the keyframe before, decoded forward).
    case seek(Double)
    /// Leave the media view: back to the live screen.
    case leave
    /// Draw the browser's state.
    case redraw
}

/// The media view as a pure state machine: days → a day's grid → the player or a photo,
/// with paging, the scrubber drag and the photo swipe. Touches come in logical pixels;
/// out come effects for the owner to carry out. Nothing here reads a disk or a clock.
public struct MediaBrowser: Sendable, Equatable {
    public let layout: MediaViewLayout
    public private(set) var page: MediaViewPage = .days
    /// Day folder names (`YYYYMMDD`), newest first.
    public private(set) var days: [String] = []
    /// The day whose grid is (or was last) open.
    public private(set) var day: String?
    public private(set) var items: [MediaItem] = []
    /// The first entry shown on the days page and on the grid.
    public private(set) var firstDay = 0
    public private(set) var firstItem = 0
    /// Index into `items` of what plays or shows.
    public private(set) var current: Int?
    /// The player's position and length as last reported, and whether it is paused.
    public private(set) var position: Double = 0
    public private(set) var duration: Double = 0
    public private(set) var isPaused = false
    /// While the scrubber is dragged: where the finger is, in seconds.
    public private(set) var scrubbing: Double?
    /// The target under the finger, drawn pressed.
    public private(set) var pressedTarget: MediaViewTarget?
    /// "Cannot play …": shown over the page until the next touch.
    public private(set) var message: String?
    /// Counts thumbnails made while the day shows, so the grid is drawn again with them.
    public private(set) var thumbnailsMade = 0

    private var tracked: (slot: Int, target: MediaViewTarget?, start: ScreenPoint)?

    /// A horizontal move this long (a fifth of the screen's width) turns a photo.
    public var swipeDistance: Int { max(40, layout.size.width / 5) }
    /// How far one ±10 s button skips.
    public static let skipSeconds = 10.0

    public init(layout: MediaViewLayout) { self.layout = layout }

    public static func == (lhs: MediaBrowser, rhs: MediaBrowser) -> Bool {
        lhs.layout == rhs.layout && lhs.page == rhs.page && lhs.days == rhs.days && lhs.day == rhs.day
            && lhs.items == rhs.items && lhs.firstDay == rhs.firstDay && lhs.firstItem == rhs.firstItem
            && lhs.current == rhs.current && lhs.position == rhs.position && lhs.duration == rhs.duration
            && lhs.isPaused == rhs.isPaused && lhs.scrubbing == rhs.scrubbing && lhs.pressedTarget == rhs.pressedTarget
            && lhs.message == rhs.message && lhs.thumbnailsMade == rhs.thumbnailsMade
    }

    /// The entries of the page shown.
    public var visibleDays: ArraySlice<String> { days.dropFirst(firstDay).prefix(layout.daysPerPage) }
    public var visibleItems: ArraySlice<MediaItem> { items.dropFirst(firstItem).prefix(layout.cellsPerPage) }
    public var currentItem: MediaItem? { current.flatMap { items.indices.contains($0) ? items[$0] : nil } }
    /// The scrubber for the recording playing.
    public var scrubber: PlaybackScrubber { PlaybackScrubber(track: layout.scrubberTrack, duration: duration) }

    // MARK: Answers from the owner

    /// The media view opens: ask for the days.
    public mutating func open() -> [MediaViewEffect] {
        page = .days
        firstDay = 0
        message = nil
        return [.listDays, .redraw]
    }

    /// The days found (any order; shown newest first).
    public mutating func showDays(_ names: [String]) -> [MediaViewEffect] {
        days = names.sorted(by: >)
        firstDay = min(firstDay, Self.lastPageStart(days.count, perPage: layout.daysPerPage))
        return [.redraw]
    }

    /// A day's recordings (shown in time order).
    public mutating func showDay(_ day: String, items newItems: [MediaItem]) -> [MediaViewEffect] {
        guard page == .day, self.day == day else { return [] }
        items = newItems.sorted { ($0.time, $0.path) < ($1.time, $1.path) }
        firstItem = min(firstItem, Self.lastPageStart(items.count, perPage: layout.cellsPerPage))
        return [.redraw]
    }

    /// More of `day`'s thumbnails are stored: draw the grid again.
    public mutating func thumbnailsReady(for day: String) -> [MediaViewEffect] {
        guard page == .day, self.day == day else { return [] }
        thumbnailsMade += 1
        return [.redraw]
    }

    /// Opens the player on one recording directly, as a tap on its thumbnail would (for
    /// `kioskcam play --screen`, which plays a file named on the command line).
    /// - Returns: `.play` (or `.showPhoto` for a photo) and a redraw.
    public mutating func open(_ item: MediaItem, day: String) -> [MediaViewEffect] {
        self.day = day
        days = [day]
        items = [item]
        firstDay = 0
        firstItem = 0
        message = nil
        return openItem(0)
    }

    /// Where the player is now (its length once known).
    public mutating func playback(position: Double, duration: Double?, paused: Bool) -> [MediaViewEffect] {
        guard page == .player else { return [] }
        let before = self
        if position.isFinite { self.position = max(0, position) }
        if let duration, duration.isFinite, duration > 0 { self.duration = duration }
        isPaused = paused
        return self == before ? [] : [.redraw]
    }

    /// Playing failed (a damaged file, a busy sound card): back to the grid with the reason.
    public mutating func playbackFailed(_ reason: String) -> [MediaViewEffect] {
        guard page == .player || page == .photo else { return [] }
        page = .day
        current = nil
        scrubbing = nil
        message = reason
        return [.redraw]
    }

    // MARK: Touches

    /// A touch on the media view, in logical pixels. Only the first finger down counts.
    public mutating func touch(_ event: TouchEvent) -> [MediaViewEffect] {
        let before = self
        var effects: [MediaViewEffect] = []
        switch event.phase {
        case .press:
            guard tracked == nil else { return [] }
            message = nil
            let target = layout.target(at: event.point, on: page, count: visibleCount)
            tracked = (event.slot, target, event.point)
            pressedTarget = target
            if target == .scrubber { scrubbing = scrubber.seconds(atX: event.point.x) }
        case .move:
            guard let tracked, tracked.slot == event.slot else { return [] }
            if tracked.target == .scrubber {
                scrubbing = scrubber.seconds(atX: event.point.x)
            } else if let target = tracked.target {
                pressedTarget = layout.target(at: event.point, on: page, count: visibleCount) == target ? target : nil
            }
        case .release:
            guard let touch = tracked, touch.slot == event.slot else { return [] }
            tracked = nil
            pressedTarget = nil
            if touch.target == .scrubber {
                let seconds = scrubber.seconds(atX: event.point.x)
                scrubbing = nil
                position = seconds
                effects.append(.seek(seconds))
            } else if page == .photo, abs(event.point.x - touch.start.x) >= swipeDistance {
                effects += turnPhoto(forward: event.point.x < touch.start.x)
            } else if let target = touch.target, layout.target(at: event.point, on: page, count: visibleCount) == target {
                effects += fire(target)
            }
        }
        if self != before, !effects.contains(.redraw), !effects.contains(.leave) { effects.insert(.redraw, at: 0) }
        return effects
    }

    private var visibleCount: Int {
        switch page {
        case .days: visibleDays.count
        case .day: visibleItems.count
        case .player, .photo: 0
        }
    }

    private mutating func fire(_ target: MediaViewTarget) -> [MediaViewEffect] {
        switch target {
        case .back:
            switch page {
            case .days: return [.leave]
            case .day:
                page = .days
                return [.listDays, .redraw]
            case .player, .photo: return close()
            }
        case .close:
            return close()
        case .previousPage, .nextPage:
            let forward = target == .nextPage
            if page == .days {
                firstDay = Self.turn(firstDay, forward: forward, count: days.count, perPage: layout.daysPerPage)
            } else if page == .day {
                firstItem = Self.turn(firstItem, forward: forward, count: items.count, perPage: layout.cellsPerPage)
            }
            return [.redraw]
        case .day(let index):
            guard visibleDays.indices.contains(firstDay + index) else { return [] }
            let name = days[firstDay + index]
            if name != day {
                items = []
                firstItem = 0
            }
            day = name
            page = .day
            return [.listDay(name), .redraw]
        case .item(let index):
            return openItem(firstItem + index)
        case .playPause:
            isPaused.toggle()
            return [.togglePause, .redraw]
        case .skipBack, .skipForward:
            let target = scrubber.skip(from: position, by: target == .skipBack ? -Self.skipSeconds : Self.skipSeconds)
            position = target
            return [.seek(target), .redraw]
        case .scrubber:
            return []
        }
    }

    private mutating func openItem(_ index: Int) -> [MediaViewEffect] {
        guard items.indices.contains(index) else { return [] }
        let item = items[index]
        current = index
        position = 0
        duration = item.seconds ?? 0
        isPaused = false
        scrubbing = nil
        if item.kind == .photo {
            page = .photo
            return [.showPhoto(item), .redraw]
        }
        page = .player
        return [.play(item), .redraw]
    }

    /// Leaves the player or photo for the grid, on the page holding the item shown.
    private mutating func close() -> [MediaViewEffect] {
        let wasPlaying = page == .player
        if let current, layout.cellsPerPage > 0 { firstItem = current / layout.cellsPerPage * layout.cellsPerPage }
        page = .day
        current = nil
        scrubbing = nil
        return (wasPlaying ? [.stopPlayback] : []) + [.redraw]
    }

    /// The next (or previous) photo of the day; other kinds are skipped; at either end nothing.
    private mutating func turnPhoto(forward: Bool) -> [MediaViewEffect] {
        guard let current else { return [] }
        let candidates = forward ? Array(items.indices.filter { $0 > current })
            : Array(items.indices.filter { $0 < current }.reversed())
        guard let next = candidates.first(where: { items[$0].kind == .photo }) else { return [] }
        return openItem(next)
    }

    static func turn(_ first: Int, forward: Bool, count: Int, perPage: Int) -> Int {
        guard perPage > 0 else { return 0 }
        let moved = forward ? first + perPage : first - perPage
        return min(max(0, moved), lastPageStart(count, perPage: perPage))
    }

    static func lastPageStart(_ count: Int, perPage: Int) -> Int {
        guard perPage > 0, count > 0 else { return 0 }
        return (count - 1) / perPage * perPage
    }
}
