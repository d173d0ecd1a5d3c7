import Foundation
import KioskCore
import KioskRecording
import Logging

/// Where event clips are written: a recording of the one encode that can begin in the
/// past (from the pre-event ring). `MediaGraph`'s clip output in the daemon.
public protocol EventClipOutput: AnyObject, Sendable {
    /// Starts a clip `preSeconds` before now (at the ring's keyframe at or before then),
    /// its file named with `label` (`HHMMSS-motion.mp4`).
    /// - Returns: The seconds before now the clip really begins: fewer than asked when the
    ///   ring holds less (just after start-up).
    func startClip(preSeconds: Double, label: String) throws(RecorderError) -> Double
    /// Ends the clip now and waits (briefly) until its file is in the library.
    /// - Returns: The clip's file(s), relative paths' absolute form, or empty on failure.
    func endClip() -> [String]
}

/// Turns what the camera and microphone notice into event clips: motion on the luma
/// branch and sound through `MotionDetector` and `SoundTrigger`, buttons and the socket
/// directly, all into one `EventPlanner`, whose decisions are carried out in order on
/// one serial queue (`kioskcam.events`): clips started and ended on the clip output, a
/// snapshot at each new motion peak, and every new/update/end message written to the
/// event log and published to the socket.
///
/// The detector runs on the luma branch's thread (the only one that feeds it); the
/// planner is shared under `lock`; a ticker thread ends clips on time and reads the
/// sound level ten times a second.
public final class EventRecorder: @unchecked Sendable {
    public struct Status: Sendable, Equatable {
        /// Events that started today (local date), counted from today's event log at start.
        public var eventsToday = 0
        /// The last event's id and its start, wall-clock seconds (from the log at start).
        public var lastEvent: String?
        public var lastEventStart: Double?
        /// The newest motion score, percent of the watched picture.
        public var motionScore = 0.0
        public var motion = false
        /// An event clip is being recorded.
        public var recording = false
    }

    private let settings: Configuration.Events
    private let root: String
    private let clips: EventClipOutput
    private let log: EventLogFile
    private let clock: MonotonicClock
    private let logger: Logger
    private let publish: @Sendable (EventMessage) -> Void
    private let snapshot: @Sendable (_ label: String, _ done: @escaping @Sendable (String?) -> Void) -> Void
    private let soundLevel: @Sendable () -> Double?
    /// Wall-clock seconds since 1970 now (the log's times); the monotonic clock orders.
    private let wallClock: @Sendable () -> Double
    private let work = DispatchQueue(label: "kioskcam.events")
    private var ticker: RepeatingThread?

    // Owned by the luma thread.
    private var detector: MotionDetector

    private let lock = Lock()
    // Guarded by `lock`.
    private var planner: EventPlanner
    private var sound: SoundTrigger
    private var status = Status()
    private var statusDay: String?
    /// Set by `stop()`: a luma frame still in the branch's queue at shutdown must not
    /// start a new event after the last one was ended.
    private var stopped = false
    /// The messages of events going on, by the planner's id.
    private var messages: [Int: EventMessage] = [:]
    /// Each event's log id and start (wall-clock seconds), given as the planner starts it.
    private var identities: [Int: (id: String, start: Double)] = [:]

    /// - Parameters:
    ///   - snapshot: Takes a still of the next frame, named with the label (the event's
    ///     first trigger, `HHMMSS-motion.jpg`, so retention keeps it with the clips);
    ///     calls back with its path (nil on failure).
    ///   - soundLevel: The loudest channel's level now, dBFS (nil without a microphone).
    ///   - publish: Every message, for the control socket.
    public init(configuration: Configuration, clips: EventClipOutput, clock: MonotonicClock, logger: Logger,
                snapshot: @escaping @Sendable (_ label: String, _ done: @escaping @Sendable (String?) -> Void) -> Void,
                soundLevel: @escaping @Sendable () -> Double?,
                wallClock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 },
                publish: @escaping @Sendable (EventMessage) -> Void) {
        self.wallClock = wallClock
        settings = configuration.events
        root = configuration.storage.mediaRoot
        self.clips = clips
        self.clock = clock
        self.logger = logger
        self.snapshot = snapshot
        self.soundLevel = soundLevel
        self.publish = publish
        log = EventLogFile(root: root)
        planner = EventPlanner(timing: configuration.events.timing)
        sound = configuration.events.soundTrigger
        detector = MotionDetector.configured(configuration, logger: logger)
        seedStatusFromTheLog()
    }

    /// Today's count and the last event, as the event log has them: a restart must not
    /// make Home Assistant's "last event" unknown or "events today" zero.
    private func seedStatusFromTheLog() {
        let today = LocalTimestamp(Date(timeIntervalSince1970: wallClock())).dateStamp
        statusDay = today
        // The newest day with a readable event (a day's log may hold only torn lines);
        // each log is read once, today's (the newest, when there is one) giving the count.
        for day in log.days().reversed().prefix(7) {
            let events = log.listing(day: day).events
            if day == today { status.eventsToday = events.count }
            if let last = events.last {
                status.lastEvent = last.id
                status.lastEventStart = last.start
                break
            }
        }
    }

    /// Starts the ticker (clip ends on time, the sound trigger).
    public func start() {
        let thread = RepeatingThread(name: "kioskcam.events.tick", interval: 0.1) { [weak self] _ in self?.tick() }
        ticker = thread
        thread.start()
    }

    /// Ends the clip going on (shutdown) and stops the ticker; waits for the queue.
    public func stop() {
        ticker?.stop()
        let now = clock.now()
        let effects = plan { $0.finish(at: now) }
        lock.withLock { stopped = true }
        perform(effects)
        work.sync {}
    }

    /// After midnight, "today" holds no event until one starts.
    public var currentStatus: Status {
        let today = LocalTimestamp(Date(timeIntervalSince1970: wallClock())).dateStamp
        return lock.withLock {
            var current = status
            if statusDay != today { current.eventsToday = 0 }
            return current
        }
    }

    /// Waits until every decision so far was carried out (tests, shutdown).
    func drain() { work.sync {} }

    // MARK: Inputs

    /// A luma frame from the luma branch (on its thread).
    public func observe(_ frame: LumaFrame) {
        guard settings.motion else { return }
        let observation = detector.observe(frame)
        lock.withLock {
            status.motionScore = observation.score
            status.motion = observation.isMotion
        }
        let effects = plan { planner in
            var effects: [EventEffect] = []
            switch observation.transition {
            case .started?: effects += planner.triggerOn(.motion, at: frame.time)
            case .ended?: effects += planner.triggerOff(.motion, at: frame.time)
            case nil: break
            }
            if observation.isMotion {
                effects += planner.motionScore(observation.score, region: observation.region, at: frame.time)
            }
            return effects
        }
        if observation.lightSwitch { logger.info("motion: most of the picture changed at once (a light switch?): the background was taken afresh") }
        perform(effects)
    }

    /// A button or the touch screen's record key (events mode): a moment's trigger.
    public func pulse(_ trigger: EventTrigger) {
        let now = clock.now()
        perform(plan { $0.pulse(trigger, at: now) })
    }

    /// `kioskcam event start|stop`: the manual trigger on or off.
    /// - Returns: The id of the event it started or joined, when there is one.
    @discardableResult
    public func manualTrigger(on: Bool) -> String? {
        let now = clock.now()
        var joined: String?
        let effects = plan { planner in
            let effects = on ? planner.triggerOn(.manual, at: now) : planner.triggerOff(.manual, at: now)
            return effects
        }
        lock.withLock { joined = planner.event.flatMap { identities[$0.id]?.id } }
        perform(effects)
        return joined
    }

    /// Runs a planner step under the lock and gives each event it starts its log id at
    /// once (so a caller can be told it), from the wall clock now. After `stop()`, nothing.
    private func plan(_ step: (inout EventPlanner) -> [EventEffect]) -> [EventEffect] {
        lock.withLock {
            guard !stopped else { return [] }
            let effects = step(&planner)
            for case .startClip(let record) in effects {
                let start = wallSeconds(record.start)
                identities[record.id] = ("\(LocalTimestamp(Date(timeIntervalSince1970: start)).description)-\(record.id)", start)
            }
            return effects
        }
    }

    // MARK: The ticker

    func tick() {
        let now = clock.now()
        let level = settings.sound ? soundLevel() : nil
        let flipped = level.map { level in lock.withLock { sound.level(level, at: now) ? sound.isOn : nil } } ?? nil
        let effects = plan { planner in
            var effects: [EventEffect] = []
            if let flipped { effects += flipped ? planner.triggerOn(.sound, at: now) : planner.triggerOff(.sound, at: now) }
            effects += planner.tick(at: now)
            return effects
        }
        perform(effects)
    }

    // MARK: Effects, in order, on the events queue

    private func perform(_ effects: [EventEffect]) {
        guard !effects.isEmpty else { return }
        work.async { [self] in
            for effect in effects { carryOut(effect) }
        }
    }

    private func carryOut(_ effect: EventEffect) {
        switch effect {
        case .startClip(let record):
            let preSeconds = max(0, clock.now().seconds(since: record.clipStart))
            var covered = preSeconds
            do {
                covered = min(preSeconds, max(0, try clips.startClip(preSeconds: preSeconds, label: record.triggers.first?.rawValue ?? "event")))
            } catch {
                logger.error("event clip could not start: \(error)")
            }
            // The clip cannot begin before the ring's oldest picture (the daemon's start).
            let message = newMessage(record, clipStart: record.clipStart.advanced(byNanoseconds: Int64((preSeconds - covered) * 1e9)))
            logger.notice("event \(message.id) started: \(record.triggers.map(\.rawValue).joined(separator: ", ")), the clip from \(String(format: "%.1f", covered)) s before")
            write(message)
        case .update(let record):
            guard var message = lock.withLock({ messages[record.id] }) else { return }
            message.type = .update
            fill(&message, from: record)
            remember(message, record.id)
            write(message)
        case .peakFrame(let record):
            snapshot(record.triggers.first?.rawValue ?? "event") { [self] path in
                guard let path else { return }
                work.async { [self] in self.snapshotTaken(path, for: record.id) }
            }
        case .endClip(let record):
            let files = clips.endClip()
            guard var message = lock.withLock({ messages.removeValue(forKey: record.id) }) else { return }
            message.type = .end
            fill(&message, from: record)
            message.end = record.end.map { Self.toMilliseconds(message.start + $0.seconds(since: record.start)) }
            if let first = files.first { message.clip = relative(first) }
            logger.notice("event \(message.id) ended: \(message.clip ?? "no clip was written")")
            lock.withLock { status.recording = false }
            write(message)
            lock.withLock { _ = identities.removeValue(forKey: record.id) }
        }
    }

    private func newMessage(_ record: EventRecord, clipStart: MonotonicInstant) -> EventMessage {
        let (id, startSeconds) = lock.withLock { identities[record.id] } ?? ("event-\(record.id)", wallSeconds(record.start))
        let day = LocalTimestamp(Date(timeIntervalSince1970: startSeconds)).dateStamp
        let continues = record.continues.flatMap { earlier in lock.withLock { identities[earlier]?.id } }
        // Times after the start are offsets on the monotonic clock from the start's one wall
        // reading: a second reading would differ by however long the thread was preempted
        // between its two clock reads (27 ms on a loaded guest, 2026-11-30).
        let clipStartSeconds = Self.toMilliseconds(startSeconds - record.start.seconds(since: clipStart))
        var message = EventMessage(type: .new, id: id, start: startSeconds, clipStart: clipStartSeconds,
                                   triggers: record.triggers, continues: continues)
        fill(&message, from: record)
        lock.withLock {
            if statusDay != day {
                statusDay = day
                status.eventsToday = 0
            }
            status.eventsToday += 1
            status.lastEvent = id
            status.lastEventStart = startSeconds
            status.recording = true
        }
        remember(message, record.id)
        return message
    }

    private func fill(_ message: inout EventMessage, from record: EventRecord) {
        message.triggers = record.triggers
        message.peakScore = (record.peakScore * 100).rounded() / 100
        message.peakRegion = record.peakRegion
    }

    private func remember(_ message: EventMessage, _ id: Int) {
        lock.withLock { messages[id] = message }
    }

    private func snapshotTaken(_ path: String, for id: Int) {
        guard var message = lock.withLock({ messages[id] }) else {
            return // the event ended before its still was saved: keep the still, nothing to tell
        }
        let previous = message.snapshot
        message.type = .update
        message.snapshot = relative(path)
        remember(message, id)
        write(message)
        // One still per event: the best so far replaces the one before.
        if let previous, previous != message.snapshot { unlink(absolute(previous)) }
    }

    /// Into the log of the day the event started, and to the socket.
    private func write(_ message: EventMessage) {
        do {
            try log.append(message, day: LocalTimestamp(Date(timeIntervalSince1970: message.start)).dateStamp)
        } catch {
            logger.error("\(error)")
        }
        publish(message)
    }

    // MARK: Time and paths

    /// A monotonic instant as wall-clock seconds since 1970, to the millisecond.
    private func wallSeconds(_ instant: MonotonicInstant) -> Double {
        let seconds = wallClock() - clock.now().seconds(since: instant)
        return Self.toMilliseconds(seconds)
    }

    /// The event log's precision: wall seconds to the millisecond.
    private static func toMilliseconds(_ seconds: Double) -> Double { (seconds * 1000).rounded() / 1000 }

    private func relative(_ path: String) -> String {
        let prefix = root.hasSuffix("/") ? root : root + "/"
        return path.hasPrefix(prefix) ? String(path.dropFirst(prefix.count)) : path
    }

    private func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : (root.hasSuffix("/") ? root : root + "/") + path
    }
}
