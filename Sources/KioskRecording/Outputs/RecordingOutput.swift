import Foundation
import KioskCore
import KioskMedia
import Logging

/// One kind of recording — video and sound (`.mp4`) or sound only (`.m4a`) — written
/// from the graph's packets: the state machine, segments cut without losing or repeating
/// a frame, the temp area and the move into the library, live progress, the disk guard.
///
/// It runs on a thread of its own behind a `GOPQueue`: a slow disk (an `fdatasync` on an
/// SD card) holds up only this output — it drops whole GOPs and counts them — never the
/// encoder or the other outputs. A file replayed as fast as possible blocks instead, so
/// that nothing is dropped.
///
/// This file is what other threads call; the output thread's loop is in
/// `RecordingOutput+Thread.swift`, and its files' beginnings, cuts and ends in
/// `RecordingOutput+Segments.swift`.
public final class RecordingOutput: PacketOutput, Sendable {
    public let kind: MediaKind
    public let settings: RecorderSettings
    let clock: MonotonicClock
    let logger: Logger
    let files: LibraryFiles
    let onEvent: @Sendable (RecorderEvent) -> Void
    let requestKeyframe: @Sendable (MonotonicInstant) -> Void
    let blocksWhenFull: Bool
    let includesAudio: Bool

    /// Shared with the output thread, which waits in it for packets and controls (and
    /// the encoder, replaying a file, for room).
    struct Shared {
        var machine = RecordingStateMachine()
        var pendingStart: PendingStart?
        var pendingStop: (point: StopPoint, time: MonotonicInstant)?
        var published = RecorderStatus()
        var queue: GOPQueue<QueuedPacket>
        /// Packets handed to `receive` so far (dropped ones included): control events wait
        /// until every packet before them was taken or dropped.
        var received = 0
        var taken = 0
        var controls: [(after: Int, event: Control)] = []
        var shuttingDown = false
        var beats: UInt64 = 0

        /// A control event whose packets are all taken or dropped, or a packet, or the end.
        var hasWork: Bool {
            if let first = controls.first, first.after <= taken + queue.droppedPackets { return true }
            return !queue.isEmpty || (shuttingDown && machine.state == .idle)
        }
    }
    let shared: Locked<Shared>
    private let thread = ThreadGroup()
    /// Waveform pictures are drawn here, off the output thread; shutdown waits for them.
    let waveformQueue = DispatchQueue(label: "kioskcam.waveforms", qos: .utility)

    struct PendingStart {
        var time: MonotonicInstant
        var limit: Double?
        /// Begin this far in the past, from the ring's packets.
        var preEvent: (ring: PreEventRing, seconds: Double)?
        /// Goes into the file names: `HHMMSS-motion.mp4` (an event clip's trigger).
        var label: String?
    }

    struct QueuedPacket {
        var packet: EncodedPacket
        var parameters: StreamParameters
    }

    enum Control {
        case opened(EncodedPacket.Media, StreamParameters)
        case drained(EncodedPacket.Media, endOfInput: Bool)
        case failed(EncodedPacket.Media, MediaError)
    }

    /// - Parameters:
    ///   - kind: `.video` (picture, and sound if `settings.audio` is set) or `.audio`.
    ///   - requestKeyframe: Asks the encoder for a keyframe at a time (recording and
    ///     segment starts).
    ///   - blocksWhenFull: For a file replayed fast: wait for room instead of dropping.
    ///   - onEvent: Called on the output thread (or the caller's, for start/stop); must
    ///     return quickly.
    public init(kind: MediaKind, settings: RecorderSettings, clock: MonotonicClock, logger: Logger,
                blocksWhenFull: Bool = false, requestKeyframe: @escaping @Sendable (MonotonicInstant) -> Void,
                onEvent: @escaping @Sendable (RecorderEvent) -> Void = { _ in }) {
        self.kind = kind
        self.settings = settings
        self.clock = clock
        self.logger = logger
        self.onEvent = onEvent
        self.requestKeyframe = requestKeyframe
        self.blocksWhenFull = blocksWhenFull
        includesAudio = settings.audio != nil
        files = LibraryFiles(layout: settings.layout)
        // About two seconds of encoded data: enough to ride out an fdatasync, and memory
        // that never grows while the disk is slow.
        // A file replayed fast keeps the encoder at most a packet ahead instead, so that
        // a size cut's keyframe request reaches it in time.
        let bitrate = (settings.video?.bitrate ?? 0) + (settings.audio?.bitrate ?? 128_000)
        shared = Locked(Shared(queue: GOPQueue(byteLimit: blocksWhenFull ? 1 : max(512 * 1024, bitrate / 8 * 2))))
        thread.start(name: kind == .audio ? "kioskcam.file.audio" : "kioskcam.file.video") { [self] in
            var writing = OutputThread(output: self)
            writing.run()
        }
    }

    // MARK: Control (any thread)

    public var status: RecorderStatus {
        shared.withLock {
            var status = $0.published
            status.droppedVideoFrames += $0.queue.droppedPackets
            return status
        }
    }

    public var state: RecordingState { shared.withLock { $0.machine.state } }

    /// Loop iterations so far, for the watchdog.
    public var heartbeat: UInt64 { shared.withLock { $0.beats } }

    public var demand: EncoderDemand {
        guard shared.withLock({ $0.machine.state != .idle || !$0.queue.isEmpty }) else { return .none }
        switch kind {
        case .audio: return .audio
        default: return includesAudio ? [.video, .audio] : .video
        }
    }

    /// Asks for a recording to start at the next frame (a sound-only one at the next sound).
    /// - Parameter maximumSeconds: End by itself after this much recorded time, exact to the frame.
    /// - Throws: `RecorderError.illegalTransition` ("already recording") unless idle;
    ///   `.library` when the media root is unusable; `.diskFull` when the disk guard refuses.
    /// - Parameter preEvent: Begin `seconds` before now, at the last keyframe the ring
    ///   holds at or before that moment (an event clip); nil to begin at the next frame.
    /// - Parameter label: Named into the files (`HHMMSS-motion.mp4`); lowercase letters.
    public func start(maximumSeconds: Double? = nil, preEvent: (ring: PreEventRing, seconds: Double)? = nil,
                      label: String? = nil) throws(RecorderError) {
        try files.prepare()
        if let check = settings.storageCheck, case .refuseToStart(let message) = check(false) {
            throw RecorderError(.diskFull, message)
        }
        let now = clock.now()
        try shared.withLock { (shared: inout Shared) throws(RecorderError) in
            do throws(RecordingTransitionError) { try shared.machine.apply(.start) } catch { throw RecorderError(error) }
            shared.pendingStart = PendingStart(time: now, limit: maximumSeconds, preEvent: preEvent, label: label)
            shared.published.state = shared.machine.state
            shared.published.lastError = nil
            shared.published.finishedFiles = []
        }
        if kind != .audio { requestKeyframe(now) }
        onEvent(.stateChanged(.starting))
    }

    /// Asks the recording to stop; it becomes idle once the file is in the library.
    /// - Throws: `RecorderError.illegalTransition` when not recording.
    public func stop(_ point: StopPoint = .now) throws(RecorderError) {
        let now = clock.now()
        try shared.withLock { (shared: inout Shared) throws(RecorderError) in
            do throws(RecordingTransitionError) { try shared.machine.apply(.stop) } catch { throw RecorderError(error) }
            shared.published.state = shared.machine.state
            shared.pendingStop = (point, now)
        }
        onEvent(.stateChanged(.stopping))
    }

    /// Waits until idle (or `timeout` seconds pass); returns the final state. Blocking.
    @discardableResult
    public func waitUntilIdle(timeout: Double) -> RecordingState {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while Date() < deadline {
            let state = self.state
            if state == .idle { return state }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return state
    }

    /// Finishes any recording and ends the thread. Call once, after the encoder was
    /// shut down (its last packets are in). Blocking.
    public func shutdown(timeout: Double = 30) {
        if (try? stop()) != nil { waitUntilIdle(timeout: timeout) }
        shared.withLock { $0.shuttingDown = true }
        shared.wakeWaiters()
        thread.wait(timeout: timeout)
        waveformQueue.sync {}
    }

    // MARK: PacketOutput (encoder thread)

    public func receive(_ packet: EncodedPacket, parameters: StreamParameters) {
        let info = PacketInfo(media: packet.media == .video ? .video : .audio, time: packet.time,
                              isKeyframe: packet.isKeyframe, byteCount: packet.byteCount)
        let blocksWhenFull = blocksWhenFull
        shared.withLock(waitingUntil: { !blocksWhenFull || $0.queue.hasRoom(for: info) || $0.shuttingDown }) { shared in
            shared.received += 1
            shared.queue.append(info, QueuedPacket(packet: packet, parameters: parameters))
        }
        shared.wakeWaiters()
    }

    public func encoderOpened(_ media: EncodedPacket.Media, parameters: StreamParameters) {
        post(.opened(media, parameters))
    }

    public func encoderDrained(_ media: EncodedPacket.Media, endOfInput: Bool) {
        post(.drained(media, endOfInput: endOfInput))
    }

    public func encoderFailed(_ media: EncodedPacket.Media, _ error: MediaError) {
        post(.failed(media, error))
    }

    private func post(_ control: Control) {
        shared.withLock { $0.controls.append(($0.received, control)) }
        shared.wakeWaiters()
    }

    // MARK: Output thread

    enum Work {
        case packet(QueuedPacket)
        case control(Control)
    }

    /// The next packet or control event in the order they were handed over.
    func next(timeout: Double) -> (Work?, stop: Bool) {
        let (work, stop) = shared.withLock(waitingUntil: { $0.hasWork },
                                           deadline: Date(timeIntervalSinceNow: timeout)) { shared -> (Work?, Bool) in
            shared.beats &+= 1
            let consumed = shared.taken + shared.queue.droppedPackets
            if let first = shared.controls.first, first.after <= consumed {
                shared.controls.removeFirst()
                return (.control(first.event), false)
            }
            if let item = shared.queue.popFirst() {
                shared.taken += 1
                return (.packet(item.payload), false)
            }
            return (nil, shared.shuttingDown && shared.machine.state == .idle)
        }
        // The encoder may be waiting for room (a file replayed fast).
        if blocksWhenFull, case .packet? = work { shared.wakeWaiters() }
        return (work, stop)
    }
}
