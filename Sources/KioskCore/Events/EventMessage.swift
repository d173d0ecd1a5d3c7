import Foundation

/// One line of the event log (`events/YYYYMMDD.jsonl`) and one event on the control
/// socket: written when an event starts (`new`), when it learns something (`update`: a
/// new trigger, a higher motion peak, its snapshot) and when its clip ends (`end`) —
/// Frigate's new/update/end messages. Every message carries the whole event, so the
/// last line about an event is all a reader needs.
public struct EventMessage: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable {
        case new, update, end
    }

    public var type: Kind
    /// Unique across restarts: the start's local `YYYYMMDD-HHMMSS`, then a number.
    public var id: String
    /// Wall-clock seconds since 1970 (to the millisecond).
    public var start: Double
    public var end: Double?
    /// Where the clip begins: `start` minus the pre-event time.
    public var clipStart: Double
    public var triggers: [EventTrigger]
    /// The largest changed area seen, percent of the watched picture.
    public var peakScore: Double
    /// Where it was, as fractions of the frame.
    public var peakRegion: MotionRegion?
    /// The clip and the snapshot, relative to the media root (`video/20261124/101500-motion.mp4`).
    public var clip: String?
    public var snapshot: String?
    /// The event goes on from the clip of this event id (an event longer than `max_seconds`).
    public var continues: String?

    public init(type: Kind, id: String, start: Double, end: Double? = nil, clipStart: Double, triggers: [EventTrigger],
                peakScore: Double = 0, peakRegion: MotionRegion? = nil, clip: String? = nil, snapshot: String? = nil,
                continues: String? = nil) {
        self.type = type
        self.id = id
        self.start = start
        self.end = end
        self.clipStart = clipStart
        self.triggers = triggers
        self.peakScore = peakScore
        self.peakRegion = peakRegion
        self.clip = clip
        self.snapshot = snapshot
        self.continues = continues
    }

    enum CodingKeys: String, CodingKey {
        case type, id, start, end, triggers, clip, snapshot, continues
        case clipStart = "clip_start"
        case peakScore = "peak_score"
        case peakRegion = "peak_region"
    }

    /// The message as one JSON line (no newline), keys sorted so that lines diff well.
    public var line: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(self) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    /// A line read back, or nil for anything that is not a whole, sane message (a line
    /// torn by a power cut, a hand edit): the log is read, never trusted.
    public init?(line: some StringProtocol) {
        guard line.utf8.count <= 64 * 1024,
              let message = try? JSONDecoder().decode(EventMessage.self, from: Data(line.utf8)),
              message.start.isFinite, message.clipStart.isFinite, message.end?.isFinite ?? true,
              message.peakScore.isFinite, !message.id.isEmpty, message.id.count <= 64,
              [message.peakRegion?.x, message.peakRegion?.y, message.peakRegion?.width, message.peakRegion?.height]
                .allSatisfy({ $0?.isFinite ?? true }) else { return nil }
        self = message
    }
}

/// The event log of one day read back: the last message about each event, in the order
/// the events started; lines that do not read are counted, not fatal.
public struct EventLogListing: Sendable, Equatable {
    public var events: [EventMessage]
    public var unreadableLines: Int

    public init(text: String) {
        var latest: [String: EventMessage] = [:]
        var order: [String] = []
        var unreadable = 0
        for line in text.split(whereSeparator: \.isNewline) where !line.allSatisfy(\.isWhitespace) {
            guard let message = EventMessage(line: line) else {
                unreadable += 1
                continue
            }
            if latest[message.id] == nil { order.append(message.id) }
            latest[message.id] = message
        }
        events = order.compactMap { latest[$0] }.sorted { ($0.start, $0.id) < ($1.start, $1.id) }
        unreadableLines = unreadable
    }
}
