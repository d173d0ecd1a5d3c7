/// What can start an event clip.
public enum EventTrigger: String, Sendable, Hashable, Codable, CaseIterable {
    case motion
    case sound
    case button
    case touch
    case manual
}

/// The event-clip settings (`[events]`), in seconds.
public struct EventTiming: Sendable, Equatable {
    /// How far before the trigger a clip begins (it begins at the last keyframe at or
    /// before that).
    public var preSeconds: Double
    /// How long a clip goes on after its last trigger ended.
    public var postSeconds: Double
    /// A trigger within this long after the last one ended extends the same clip.
    public var gapSeconds: Double
    /// The longest clip; a longer event goes on in a new clip.
    public var maxSeconds: Double

    public init(preSeconds: Double = 5, postSeconds: Double = 10, gapSeconds: Double = 10, maxSeconds: Double = 300) {
        self.preSeconds = max(0, preSeconds)
        self.postSeconds = max(0, postSeconds)
        self.gapSeconds = max(0, gapSeconds)
        self.maxSeconds = max(1, maxSeconds)
    }

    /// How long after its last trigger ended a clip stops: the post time, or the gap if
    /// longer (the clip must still be open for a trigger in the gap to extend it).
    public var tailSeconds: Double { max(postSeconds, gapSeconds) }
}

/// One event as the log and the socket show it (Frigate's new/update/end messages).
public struct EventRecord: Sendable, Equatable {
    public var id: Int
    /// When the first trigger fired.
    public var start: MonotonicInstant
    /// Where the clip begins (trigger − pre, before keyframe alignment).
    public var clipStart: MonotonicInstant
    /// When the clip ended; nil while it goes on.
    public var end: MonotonicInstant?
    /// Every trigger that fired during the event, in the order they first fired.
    public var triggers: [EventTrigger]
    /// The highest motion score seen, percent, where and when.
    public var peakScore: Double
    public var peakRegion: MotionRegion?
    public var peakTime: MonotonicInstant?
    /// The event goes on from an earlier clip that reached `maxSeconds`.
    public var continues: Int?

    public init(id: Int, start: MonotonicInstant, clipStart: MonotonicInstant, end: MonotonicInstant?, triggers: [EventTrigger],
                peakScore: Double, peakRegion: MotionRegion?, peakTime: MonotonicInstant?, continues: Int?) {
        self.id = id
        self.start = start
        self.clipStart = clipStart
        self.end = end
        self.triggers = triggers
        self.peakScore = peakScore
        self.peakRegion = peakRegion
        self.peakTime = peakTime
        self.continues = continues
    }
}

/// What the planner wants done.
public enum EventEffect: Sendable, Equatable {
    /// Open a clip holding everything from `from` (the ring's keyframe at or before it).
    case startClip(EventRecord)
    /// Something changed worth telling (a new trigger, a new peak).
    case update(EventRecord)
    /// Close the clip with the media up to `EventRecord.end`.
    case endClip(EventRecord)
    /// Take the event's snapshot from the frame at the new peak.
    case peakFrame(EventRecord)
}

/// Turns triggers into event clips: pre-event time, post-event time, the gap that
/// joins close events, the longest clip. Pure and single-threaded; the owner feeds it
/// trigger changes and motion scores with the time they happened, calls `tick` at
/// `nextDeadline`, and carries out the effects.
public struct EventPlanner: Sendable {
    public let timing: EventTiming
    private var nextID = 1
    private var current: EventRecord?
    /// Triggers now on (motion and sound last; buttons and touch are moments).
    private var active: Set<EventTrigger> = []
    /// When the last trigger went off (or a momentary trigger fired).
    private var quietSince: MonotonicInstant?
    /// A new peak must beat the last by this much before it is told (not every frame).
    private let peakStep = 1.0

    public init(timing: EventTiming = EventTiming()) {
        self.timing = timing
    }

    /// The event going on, if any.
    public var event: EventRecord? { current }

    /// A trigger that lasts (motion, sound, a manual start) went on.
    public mutating func triggerOn(_ trigger: EventTrigger, at time: MonotonicInstant) -> [EventEffect] {
        var effects = tick(at: time)
        active.insert(trigger)
        quietSince = nil
        effects += fire(trigger, at: time)
        return effects
    }

    /// A lasting trigger went off; the clip goes on for the tail from now.
    public mutating func triggerOff(_ trigger: EventTrigger, at time: MonotonicInstant) -> [EventEffect] {
        var effects = tick(at: time)
        guard active.remove(trigger) != nil else { return effects }
        if active.isEmpty { quietSince = time }
        effects += tick(at: time)
        return effects
    }

    /// A momentary trigger (a button, a touch): on and off at once.
    public mutating func pulse(_ trigger: EventTrigger, at time: MonotonicInstant) -> [EventEffect] {
        var effects = tick(at: time)
        effects += fire(trigger, at: time)
        if active.isEmpty { quietSince = time }
        return effects
    }

    /// A motion score for the frame at `time`: a new peak is told (and its frame wanted
    /// for the snapshot) when it beats the last by a point.
    public mutating func motionScore(_ score: Double, region: MotionRegion?, at time: MonotonicInstant) -> [EventEffect] {
        guard var event = current, score.isFinite, score > event.peakScore + (event.peakTime == nil ? 0 : peakStep) else { return [] }
        event.peakScore = score
        event.peakRegion = region
        event.peakTime = time
        current = event
        return [.peakFrame(event), .update(event)]
    }

    /// Ends the clip whose tail or length ran out by `time`.
    public mutating func tick(at time: MonotonicInstant) -> [EventEffect] {
        guard var event = current else { return [] }
        if let quietSince, active.isEmpty {
            let end = quietSince.advanced(byNanoseconds: Self.nanoseconds(timing.tailSeconds))
            if time >= end {
                event.end = end
                current = nil
                self.quietSince = nil
                return [.endClip(event)]
            }
        }
        let limit = event.clipStart.advanced(byNanoseconds: Self.nanoseconds(timing.maxSeconds))
        if time >= limit {
            event.end = limit
            current = nil
            quietSince = nil
            guard !active.isEmpty else { return [.endClip(event)] }
            // Still going on: a new clip from where this one ended, no pre-event time.
            var next = newEvent(at: limit, clipStart: limit, triggers: event.triggers.filter { active.contains($0) })
            next.continues = event.id
            current = next
            return [.endClip(event), .startClip(next)]
        }
        return []
    }

    /// When `tick` must be called next (the tail or the length running out), if ever.
    public var nextDeadline: MonotonicInstant? {
        guard let event = current else { return nil }
        let limit = event.clipStart.advanced(byNanoseconds: Self.nanoseconds(timing.maxSeconds))
        guard let quietSince, active.isEmpty else { return limit }
        return min(limit, quietSince.advanced(byNanoseconds: Self.nanoseconds(timing.tailSeconds)))
    }

    /// Stops at once (the recording was stopped, the daemon shuts down): the clip ends now.
    public mutating func finish(at time: MonotonicInstant) -> [EventEffect] {
        guard var event = current else { return [] }
        event.end = time
        current = nil
        active.removeAll()
        quietSince = nil
        return [.endClip(event)]
    }

    private mutating func fire(_ trigger: EventTrigger, at time: MonotonicInstant) -> [EventEffect] {
        if var event = current {
            guard !event.triggers.contains(trigger) else { return [] }
            event.triggers.append(trigger)
            current = event
            return [.update(event)]
        }
        let event = newEvent(at: time, clipStart: time.advanced(byNanoseconds: -Self.nanoseconds(timing.preSeconds)),
                             triggers: [trigger])
        current = event
        return [.startClip(event)]
    }

    private mutating func newEvent(at time: MonotonicInstant, clipStart: MonotonicInstant, triggers: [EventTrigger]) -> EventRecord {
        defer { nextID += 1 }
        return EventRecord(id: nextID, start: time, clipStart: clipStart, end: nil, triggers: triggers,
                           peakScore: 0, peakRegion: nil, peakTime: nil, continues: nil)
    }

    private static func nanoseconds(_ seconds: Double) -> Int64 {
        guard seconds.isFinite, seconds > 0 else { return 0 }
        return Int64(min(seconds, 1e6) * 1e9)
    }
}

/// The sound trigger: on once the level stays at or above `thresholdDBFS` for
/// `minimumMilliseconds`, off once it has stayed below for `releaseMilliseconds`.
public struct SoundTrigger: Sendable {
    public var thresholdDBFS: Double
    public var minimumMilliseconds: Int
    public var releaseMilliseconds: Int
    public private(set) var isOn = false
    private var crossedAt: MonotonicInstant?

    public init(thresholdDBFS: Double = -20, minimumMilliseconds: Int = 300, releaseMilliseconds: Int = 1000) {
        self.thresholdDBFS = thresholdDBFS
        self.minimumMilliseconds = max(0, minimumMilliseconds)
        self.releaseMilliseconds = max(0, releaseMilliseconds)
    }

    /// Feeds the level of one chunk of sound; returns true when the trigger flips.
    public mutating func level(_ dbfs: Double, at time: MonotonicInstant) -> Bool {
        let loud = dbfs.isFinite && dbfs >= thresholdDBFS
        guard loud != isOn else {
            crossedAt = nil
            return false
        }
        let since = crossedAt ?? time
        crossedAt = since
        let needed = Int64(isOn ? releaseMilliseconds : minimumMilliseconds) * 1_000_000
        guard time.nanoseconds(since: since) >= needed else { return false }
        isOn = loud
        crossedAt = nil
        return true
    }
}
