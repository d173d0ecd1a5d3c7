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
public final class RecordingOutput: PacketOutput, Sendable {
    public let kind: MediaKind
    public let settings: RecorderSettings
    private let clock: MonotonicClock
    private let logger: Logger
    private let files: LibraryFiles
    private let onEvent: @Sendable (RecorderEvent) -> Void
    private let requestKeyframe: @Sendable (MonotonicInstant) -> Void
    private let blocksWhenFull: Bool
    private let includesAudio: Bool

    /// Shared with the output thread, which waits in it for packets and controls (and
    /// the encoder, replaying a file, for room).
    fileprivate struct Shared {
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
    private let shared: Locked<Shared>
    private let thread = ThreadGroup()
    /// Waveform pictures are drawn here, off the output thread; shutdown waits for them.
    private let waveformQueue = DispatchQueue(label: "kioskcam.waveforms", qos: .utility)

    fileprivate struct PendingStart {
        var time: MonotonicInstant
        var limit: Double?
        /// Begin this far in the past, from the ring's packets.
        var preEvent: (ring: PreEventRing, seconds: Double)?
        /// Goes into the file names: `HHMMSS-motion.mp4` (an event clip's trigger).
        var label: String?
    }

    fileprivate struct QueuedPacket {
        var packet: EncodedPacket
        var parameters: StreamParameters
    }

    fileprivate enum Control {
        case opened(EncodedPacket.Media, StreamParameters)
        case drained(EncodedPacket.Media, endOfInput: Bool)
        case failed(EncodedPacket.Media, MediaError)
    }

    /// What only the output thread touches: the segments being written (FFmpeg, not
    /// `Sendable`) and the recording's bookkeeping. It lives on that thread's stack.
    fileprivate struct OutputThread {
        let output: RecordingOutput
        var active: Segment?
        var retiring: Segment?
        var requestedStart: MonotonicInstant?
        /// The recording's name label (an event clip's trigger), for each of its segments.
        var recordingLabel: String?
        var stopTime: MonotonicInstant?
        var drainingQueuedInput = false
        var finishedBytes: Int64 = 0
        var finishedSeconds: Double = 0
        var segmentIndex = 0
        var recordingStart: MonotonicInstant?
        var recordingLimit: Double?
        var lastStorageCheck: MonotonicInstant?
        /// A size cut asked the encoder for a keyframe; the segment ends at it.
        var cutAtNextKeyframe = false
        /// Sound that arrived before the first video keyframe of a recording (the encoder
        /// may hold video back a little): handed to the first segment.
        var earlyAudio: [(EncodedPacket, StreamParameters)] = []
        var lastAudioParameters: StreamParameters?
        /// The last packet times written from the pre-event ring: the same packets also come
        /// live, and must not be written twice.
        var replayedThrough: (video: MonotonicInstant?, audio: MonotonicInstant?) = (nil, nil)
        /// The video encoder handed over everything: no more video will come until it reopens.
        var videoComplete = false
        var audioComplete = false

        init(output: RecordingOutput) { self.output = output }

        var kind: MediaKind { output.kind }
        var settings: RecorderSettings { output.settings }
        var clock: MonotonicClock { output.clock }
        var logger: Logger { output.logger }
        var files: LibraryFiles { output.files }
        var includesAudio: Bool { output.includesAudio }
        var shared: Locked<Shared> { output.shared }
        var waveformQueue: DispatchQueue { output.waveformQueue }
        var state: RecordingState { output.state }
        func onEvent(_ event: RecorderEvent) { output.onEvent(event) }
        func requestKeyframe(_ time: MonotonicInstant) { output.requestKeyframe(time) }
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

    fileprivate enum Work {
        case packet(QueuedPacket)
        case control(Control)
    }

    /// The next packet or control event in the order they were handed over.
    fileprivate func next(timeout: Double) -> (Work?, stop: Bool) {
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

extension RecordingOutput.OutputThread {
    mutating func run() {
        while true {
            let (work, stop) = output.next(timeout: 0.05)
            if stop { break }
            let (start, stopRequest) = shared.withLock {
                shared -> (RecordingOutput.PendingStart?, (point: StopPoint, time: MonotonicInstant)?) in
                defer { shared.pendingStart = nil; shared.pendingStop = nil }
                return (shared.pendingStart, shared.pendingStop)
            }
            if let start { beginRecording(start) }
            if let stopRequest { beginStop(stopRequest.point, at: stopRequest.time) }
            switch work {
            case .packet(let item)?:
                if item.packet.media == .video { handleVideo(item.packet, item.parameters) } else { handleAudio(item.packet, item.parameters) }
            case .control(let control)?:
                handle(control)
            case nil:
                break
            }
            finishRetiringIfDone()
            checkStorageWhileRecording()
            publishProgress()
        }
        if let active { abandon(active, reason: "shutdown") }
        if let retiring { abandon(retiring, reason: "shutdown") }
    }

    private mutating func beginRecording(_ start: RecordingOutput.PendingStart) {
        requestedStart = start.time
        recordingLabel = start.label
        recordingLimit = start.limit
        recordingStart = nil
        stopTime = nil
        drainingQueuedInput = false
        cutAtNextKeyframe = false
        earlyAudio.removeAll()
        videoComplete = false
        audioComplete = false
        replayedThrough = (nil, nil)
        if let preEvent = start.preEvent { beginFromRing(preEvent.ring, at: start.time.advanced(byNanoseconds: -Int64(preEvent.seconds * 1e9))) }
    }

    /// Opens the recording at the ring's keyframe at or before `time` and writes what the
    /// ring holds from there; live packets continue after the last one written.
    private mutating func beginFromRing(_ ring: PreEventRing, at time: MonotonicInstant) {
        let packets = ring.packets(from: time)
        let opener = packets.first { kind == .audio ? $0.packet.media == .audio : ($0.packet.media == .video && $0.packet.isKeyframe) }
        guard let opener else { return }   // nothing held yet: begin at the next frame
        for (packet, parameters) in packets where packet.media == .audio { lastAudioParameters = parameters }
        openFirstSegment(at: opener.packet.time, videoParameters: kind == .audio ? nil : opener.parameters)
        guard let segment = active else { return }
        for (packet, parameters) in packets where packet.time >= segment.start {
            write(packet, parameters, to: segment)
            if packet.media == .video { replayedThrough.video = packet.time } else { replayedThrough.audio = packet.time }
        }
        logger.info("recording begins \(String(format: "%.1f", requestedStart.map { $0.seconds(since: segment.start) } ?? 0)) s before it was asked for, from the pre-event buffer")
    }

    // MARK: Packets

    private mutating func handleVideo(_ packet: EncodedPacket, _ parameters: StreamParameters) {
        guard kind != .audio else { return }
        if let through = replayedThrough.video, packet.time <= through { return }   // written from the ring
        videoComplete = false
        if let retiring, let end = retiring.end {
            if packet.time < end {
                write(packet, parameters, to: retiring)
            } else {
                retiring.videoReachedEnd = true
            }
        }
        if active == nil, stopTime == nil, let requestedStart, state == .starting {
            guard packet.isKeyframe, packet.time >= requestedStart else { return }
            openFirstSegment(at: packet.time, videoParameters: parameters)
        }
        guard let segment = active, packet.time >= segment.start else { return }
        segment.videoInputEnd = nil   // video flows (again)
        if reachedLimit(at: packet.time) {
            retiring?.videoReachedEnd = true
            return
        }
        if packet.isKeyframe, segment.videoFrames > 0 {
            let length = packet.time.seconds(since: segment.start) + Double(packet.durationNanoseconds) / 1e9 - 0.001
            let formatChanged = !parameters.sameSetup(as: segment.videoParameters)
            if formatChanged || cutAtNextKeyframe
                || settings.segmentPolicy.shouldCut(seconds: length, bytes: segment.writer.bytesEncoded) {
                rotateSegment(at: packet.time, videoParameters: parameters)
            }
        } else if !cutAtNextKeyframe, segment.videoFrames > 0, let limit = settings.segmentPolicy.maximumBytes {
            // Size cuts: the next keyframe ends the segment; ask for it while a few frames
            // of room are left, because an encoder may hold frames back.
            let estimate = Int64(settings.video?.bitrate ?? 0) / 8 / Int64(max(settings.video?.input.framesPerSecond ?? 30, 1))
            if segment.writer.bytesEncoded + Int64(packet.byteCount) + estimate * 4 >= limit {
                cutAtNextKeyframe = true
                requestKeyframe(MonotonicInstant(nanoseconds: Int64.min))   // the next frame
            }
        }
        guard let current = active else { return }
        write(packet, parameters, to: current)
    }

    private mutating func handleAudio(_ packet: EncodedPacket, _ parameters: StreamParameters) {
        lastAudioParameters = parameters
        if let through = replayedThrough.audio, packet.time <= through { return }   // written from the ring
        audioComplete = false
        if kind == .audio, active == nil, stopTime == nil, let requestedStart, state == .starting {
            guard packet.time >= requestedStart else { return }
            openFirstSegment(at: packet.time, videoParameters: nil)
        }
        if kind == .audio { _ = reachedLimit(at: packet.time) }
        if let retiring, let end = retiring.end {
            if packet.time < end {
                write(packet, parameters, to: retiring)
            } else {
                retiring.audioReachedEnd = true
            }
        }
        guard let segment = active else {
            if kind != .audio, includesAudio, state == .starting {
                // Held until the first video keyframe opens the file (3 s at most).
                earlyAudio.append((packet, parameters))
                if earlyAudio.count > 150 { earlyAudio.removeFirst() }
            }
            return
        }
        guard packet.time >= segment.start else { return }
        if kind == .audio, segment.audioPackets > 0,
           settings.segmentPolicy.shouldCut(seconds: packet.time.seconds(since: segment.start), bytes: segment.writer.bytesEncoded) {
            rotateSegment(at: packet.time, videoParameters: nil)
        }
        guard let current = active, packet.time >= current.start else { return }
        write(packet, parameters, to: current)
    }

    private mutating func write(_ packet: EncodedPacket, _ parameters: StreamParameters, to segment: Segment) {
        do {
            try segment.write(packet, parameters)
        } catch {
            fail(segment, error)
        }
    }

    // MARK: Controls

    private mutating func handle(_ control: RecordingOutput.Control) {
        switch control {
        case .opened(let media, let parameters):
            if media == .audio { lastAudioParameters = parameters }
        case .drained(let media, let endOfInput):
            if media == .video {
                videoComplete = true
                retiring?.videoReachedEnd = true
            } else {
                audioComplete = true
                retiring?.audioReachedEnd = true
            }
            guard endOfInput else { return }
            if let segment = active {
                let inputDone = kind == .audio ? media == .audio : media == .video
                if inputDone, segment.end == nil {
                    // The source delivered its last frame: sound after it is not part of
                    // the video (unless frames come again).
                    let last = segment.lastVideoEnd ?? segment.lastAudioEnd ?? segment.start
                    if kind != .audio { segment.videoInputEnd = last }
                    if drainingQueuedInput {
                        drainingQueuedInput = false
                        stopTime = last
                        segment.end = last
                        segment.retireDeadline = clock.now().advanced(byNanoseconds: 2_000_000_000)
                        retire(segment)
                    }
                }
            } else if state == .starting || drainingQueuedInput, stopTime == nil, active == nil, retiring == nil {
                // Nothing was written and nothing more will come.
                drainingQueuedInput = false
                if state == .stopping { transition(.finished) }
            }
        case .failed(_, let error):
            if let segment = active ?? retiring {
                fail(segment, error)
            } else if state == .starting {
                logger.error("recording could not start: \(error)")
                let recorderError = RecorderError(error)
                transition(.writerFailed, error: recorderError.description)
                onEvent(.failed(recorderError))
            }
        }
    }

    // MARK: Segments

    private mutating func openFirstSegment(at start: MonotonicInstant, videoParameters: StreamParameters?) {
        do {
            active = try makeSegment(at: start, videoParameters: videoParameters)
            recordingStart = start
            if let recordingLimit { active?.limitEnd = start.advanced(byNanoseconds: Int64(recordingLimit * 1e9)) }
            segmentIndex = 1
            finishedBytes = 0
            finishedSeconds = 0
            transition(.writerReady)
            let waiting = earlyAudio
            earlyAudio.removeAll()
            if let segment = active {
                for (packet, parameters) in waiting where packet.time >= start { write(packet, parameters, to: segment) }
            }
            askForTheSegmentCut()
        } catch {
            logger.error("recording could not start: \(error)")
            transition(.writerFailed, error: error.description)
            onEvent(.failed(error))
        }
    }

    /// A time cut lands exactly on a keyframe the encoder is asked for in advance.
    private mutating func askForTheSegmentCut() {
        guard kind != .audio, let segment = active, let seconds = settings.segmentPolicy.maximumSeconds else { return }
        requestKeyframe(segment.start.advanced(byNanoseconds: Int64(seconds * 1e9)))
    }

    /// Ends the active segment at `time` and continues in a new one from the packet at
    /// `time`: the old one keeps taking packets captured before `time` (sound arrives a
    /// little after the keyframe), so nothing is lost or repeated.
    private mutating func rotateSegment(at time: MonotonicInstant, videoParameters: StreamParameters?) {
        guard let old = active else { return }
        if let retiring { finish(retiring) }
        old.end = time
        old.videoReachedEnd = true
        old.retireDeadline = clock.now().advanced(byNanoseconds: 2_000_000_000)
        retiring = old
        active = nil
        cutAtNextKeyframe = false
        do {
            active = try makeSegment(at: time, videoParameters: videoParameters ?? old.videoParameters)
            active?.limitEnd = old.limitEnd
            segmentIndex += 1
            logger.info("segment \(segmentIndex) started")
            askForTheSegmentCut()
        } catch {
            logger.error("next segment could not start: \(error)")
            finish(old)
            retiring = nil
            transition(.writerFailed, error: error.description)
            onEvent(.failed(error))
        }
    }

    private mutating func makeSegment(at start: MonotonicInstant, videoParameters: StreamParameters?) throws(RecorderError) -> Segment {
        try files.prepare()
        // The frame was captured a little before now; name the file by its capture time.
        let age = Double(clock.now().nanoseconds(since: start)) / 1e9
        let wallStart = Date().addingTimeInterval(-max(0, min(age, 3600)))
        let local = LocalTimestamp(wallStart)
        var metadata = settings.metadata
        metadata["creation_time"] = iso8601UTC(secondsSince1970: Int64(wallStart.timeIntervalSince1970.rounded(.down)))
        let audioParameters = includesAudio || kind == .audio ? lastAudioParameters : nil
        var serial = 0
        while true {
            let temp = settings.layout.incomingPath(kind, local, serial: serial, label: recordingLabel)
            do {
                let writer = try PacketFileWriter(path: temp, video: kind == .audio ? nil : videoParameters,
                                                  audio: audioParameters, metadata: metadata,
                                                  syncInterval: settings.syncInterval, start: start)
                let current = settings.layout.finalPath(kind, local, label: recordingLabel)
                shared.withLock { $0.published.currentFile = current }
                return Segment(writer: writer, kind: kind, tempPath: temp, localStart: local, start: start,
                               videoParameters: videoParameters, hasAudio: audioParameters != nil, label: recordingLabel)
            } catch where error.code == .io && serial < 100 && FileManager.default.fileExists(atPath: temp) {
                serial += 1
            } catch {
                throw RecorderError(error)
            }
        }
    }

    /// Ends the recording at exactly start + limit once `time` has reached it.
    private mutating func reachedLimit(at time: MonotonicInstant) -> Bool {
        guard let recordingLimit, let recordingStart, let segment = active,
              time.seconds(since: recordingStart) >= recordingLimit - 0.001 else { return false }
        self.recordingLimit = nil
        let end = recordingStart.advanced(byNanoseconds: Int64(recordingLimit * 1e9))
        let stopped = shared.withLock { (try? $0.machine.apply(.stop)) != nil }
        guard stopped else { return false }
        shared.withLock { $0.published.state = $0.machine.state }
        onEvent(.stateChanged(.stopping))
        stopTime = end
        segment.end = end
        segment.retireDeadline = clock.now().advanced(byNanoseconds: 2_000_000_000)
        retire(segment)
        return true
    }

    /// Every 2 s while recording: below the hard floor the file is finished at once, so
    /// that it stays playable instead of being cut off by a full disk. The check only
    /// reads the storage guard's last answer (the guard measures on its own thread).
    private mutating func checkStorageWhileRecording() {
        guard let check = settings.storageCheck, let segment = active else { return }
        let now = clock.now()
        if let last = lastStorageCheck, now.nanoseconds(since: last) < 2_000_000_000 { return }
        lastStorageCheck = now
        guard case .stopRecording(let message) = check(true) else { return }
        let stopped = shared.withLock { (try? $0.machine.apply(.stop)) != nil }
        guard stopped else { return }
        logger.error("\(message)")
        shared.withLock {
            $0.published.state = $0.machine.state
            $0.published.lastError = message
        }
        onEvent(.stateChanged(.stopping))
        onEvent(.failed(RecorderError(.diskFull, message)))
        stopTime = now
        segment.end = now
        segment.retireDeadline = now.advanced(byNanoseconds: 2_000_000_000)
        retire(segment)
    }

    private mutating func beginStop(_ point: StopPoint, at time: MonotonicInstant) {
        guard let segment = active else {
            if retiring == nil {
                // Stopped before the first frame arrived: nothing was written.
                transition(.finished)
            }
            return
        }
        switch point {
        case .now:
            stopTime = time
            segment.end = time
            // Packets captured before the stop may still be in the encoder (up to its
            // delay); the file closes once they are in, or after two seconds.
            segment.retireDeadline = clock.now().advanced(byNanoseconds: 2_000_000_000)
            if videoComplete { segment.videoReachedEnd = true }
            if audioComplete { segment.audioReachedEnd = true }
            retire(segment)
        case .afterQueuedInput:
            drainingQueuedInput = true
            let inputEnded = kind == .audio ? audioComplete : videoComplete
            if inputEnded {
                // The input already ended: the file ends with its last frame (or sound).
                drainingQueuedInput = false
                let last = segment.lastVideoEnd ?? segment.lastAudioEnd ?? segment.start
                stopTime = last
                segment.end = last
                segment.retireDeadline = clock.now().advanced(byNanoseconds: 2_000_000_000)
                retire(segment)
            }
        }
    }

    private mutating func retire(_ segment: Segment) {
        if let retiring, retiring !== segment { finish(retiring) }
        retiring = segment
        if active === segment { active = nil }
    }

    /// Finishes a retiring segment once its video and sound have reached its end (or
    /// the encoder stalled, or there is none).
    private mutating func finishRetiringIfDone() {
        if let segment = retiring {
            let videoDone = segment.kind == .audio || segment.videoParameters == nil || segment.videoReachedEnd || videoComplete
            let audioDone = !segment.hasAudio || segment.audioReachedEnd || audioComplete
            let overdue = segment.retireDeadline.map { clock.now() >= $0 } ?? true
            if (videoDone && audioDone) || overdue {
                finish(segment)
                retiring = nil
            }
        }
        if active == nil, retiring == nil, stopTime != nil {
            stopTime = nil
            transition(.finished)
        }
    }

    /// Writes the trailer, moves the file into the library and reports it.
    private mutating func finish(_ segment: Segment) {
        let seconds = segment.writer.secondsWritten
        do {
            try segment.writer.finish()
            let path = try files.moveIntoLibrary(segment.tempPath, kind: segment.kind, time: segment.localStart, seconds: seconds,
                                                 label: segment.label)
            let bytes = segment.writer.bytesWritten
            finishedBytes += bytes
            finishedSeconds += seconds
            shared.withLock { $0.published.finishedFiles.append(path) }
            drawWaveform(for: path)
            logger.info("finished \(path) (\(String(format: "%.1f", seconds)) s, \(bytes) bytes)")
            onEvent(.fileFinished(path: path, seconds: seconds, bytes: bytes))
        } catch let error as MediaError {
            salvage(segment, after: RecorderError(error))
        } catch let error as RecorderError {
            salvage(segment, after: error)
        } catch {
            salvage(segment, after: RecorderError(.writerFailed, "\(error)"))
        }
    }

    /// Every audio recording gets a waveform PNG beside it.
    private mutating func drawWaveform(for path: String) {
        guard path.hasSuffix(".m4a") else { return }
        let picture = String(path.dropLast(".m4a".count)) + ".png"
        waveformQueue.async { [logger] in
            do {
                try WaveformRenderer.render(audioFile: path, to: picture)
            } catch {
                logger.warning("no waveform for \(path): \(error)")
            }
        }
    }

    /// A writer failed (disk full, encoder error): end the recording, keep what was
    /// written, and report it.
    private mutating func fail(_ segment: Segment, _ error: MediaError) {
        let recorderError = RecorderError(error)
        logger.error("recording failed: \(error)")
        segment.writer.abandon()
        salvage(segment, after: recorderError)
        if active === segment { active = nil }
        if retiring === segment { retiring = nil }
        if let other = active ?? retiring { other.writer.abandon(); salvage(other, after: recorderError) }
        active = nil
        retiring = nil
        stopTime = nil
        drainingQueuedInput = false
        transition(.writerFailed, error: recorderError.description)
        onEvent(.failed(recorderError))
    }

    private mutating func abandon(_ segment: Segment, reason: String) {
        segment.writer.abandon()
        salvage(segment, after: RecorderError(.writerFailed, reason))
    }

    /// Makes what reached the disk playable and puts it in the library; never leaves a
    /// half-written file there.
    private mutating func salvage(_ segment: Segment, after error: RecorderError) {
        segment.writer.abandon()
        let salvager = IncomingSalvage(files: files, logger: logger)
        if let path = salvager.salvage(tempPath: segment.tempPath, kind: segment.kind, time: segment.localStart) {
            shared.withLock { $0.published.finishedFiles.append(path) }
            onEvent(.fileFinished(path: path, seconds: segment.writer.secondsWritten, bytes: segment.writer.bytesWritten))
        }
        let message = error.description
        shared.withLock { $0.published.lastError = message }
    }

    private mutating func transition(_ event: RecordingEvent, error: String? = nil) {
        let state = shared.withLock { shared -> RecordingState? in
            guard (try? shared.machine.apply(event)) != nil else { return nil }
            shared.published.state = shared.machine.state
            if let error { shared.published.lastError = error }
            if shared.machine.state == .idle { shared.published.currentFile = nil }
            return shared.machine.state
        }
        if let state { onEvent(.stateChanged(state)) }
    }

    private mutating func publishProgress() {
        let segment = active ?? retiring
        let bytes = finishedBytes + (active?.writer.bytesWritten ?? 0) + (retiring?.writer.bytesWritten ?? 0)
        let seconds = finishedSeconds + (active?.writer.secondsWritten ?? 0) + (retiring?.writer.secondsWritten ?? 0)
        let frames = active?.videoFrames ?? 0
        let segmentIndex = segmentIndex, writing = segment != nil
        shared.withLock { shared in
            shared.published.segmentIndex = segmentIndex
            if writing || shared.machine.state == .idle {
                shared.published.bytesWritten = bytes
                shared.published.secondsWritten = seconds
            }
            shared.published.videoFramesWritten = frames
        }
    }
}

/// One file of a recording being written: its writer, when it starts and ends, and
/// whether the packets up to its end are all in.
final class Segment {
    let writer: PacketFileWriter
    let kind: MediaKind
    let tempPath: String
    /// Local wall-clock time of the first frame: names the file.
    let localStart: LocalTimestamp
    /// Also in the name, after the time (an event clip's trigger).
    let label: String?
    /// Capture time of the first frame (or sound): time zero of the file.
    let start: MonotonicInstant
    let videoParameters: StreamParameters?
    let hasAudio: Bool
    /// Nothing captured at or after it belongs here (set when it retires).
    var end: MonotonicInstant?
    /// The camera's last frame so far ended here: sound after it is not written while
    /// no more video comes.
    var videoInputEnd: MonotonicInstant?
    /// A recording with a duration ends here, exact to the frame: sound, which the
    /// encoder hands over sooner than video, is not written past it meanwhile.
    var limitEnd: MonotonicInstant?
    /// After it, the file is closed even if packets are missing (a stalled encoder).
    var retireDeadline: MonotonicInstant?
    /// Once its video is complete the video goes to the file at once, while the sound
    /// catches up: a power cut meanwhile costs none of it. A write error here is the
    /// one `finish` reports.
    var videoReachedEnd = false {
        didSet { if videoReachedEnd, !oldValue, kind != .audio { try? writer.flushVideoTail() } }
    }
    var audioReachedEnd = false
    private(set) var videoFrames = 0
    private(set) var audioPackets = 0
    private(set) var lastVideoEnd: MonotonicInstant?
    private(set) var lastAudioEnd: MonotonicInstant?

    init(writer: PacketFileWriter, kind: MediaKind, tempPath: String, localStart: LocalTimestamp, start: MonotonicInstant,
         videoParameters: StreamParameters?, hasAudio: Bool, label: String? = nil) {
        self.label = label
        self.writer = writer
        self.kind = kind
        self.tempPath = tempPath
        self.localStart = localStart
        self.start = start
        self.videoParameters = videoParameters
        self.hasAudio = hasAudio
    }

    func write(_ packet: EncodedPacket, _ parameters: StreamParameters) throws(MediaError) {
        if let end, packet.time >= end { return }
        if let limitEnd, packet.time >= limitEnd { return }
        if packet.media == .video {
            guard parameters.sameSetup(as: videoParameters) else { return }
            try writer.write(packet)
            videoFrames += 1
            lastVideoEnd = packet.endTime
        } else {
            guard hasAudio else { return }
            if let videoInputEnd, packet.time >= videoInputEnd { return }
            try writer.write(packet)
            audioPackets += 1
            lastAudioEnd = packet.endTime
        }
    }
}
