import Foundation
import KioskCore
import KioskMedia
import Logging

/// What the disk guard says about free space.
public enum StorageVerdict: Sendable, Equatable {
    case ok
    /// Too little space and nothing left to delete: do not start.
    case refuseToStart(String)
    /// Below the hard floor while recording: finish the file now, before the disk fills.
    case stopRecording(String)
}

/// How a recording is made; fixed for the recorder's life.
public struct RecorderSettings: Sendable {
    public var layout: LibraryLayout
    /// Encoder settings for video; `input` is replaced by each frame's real format.
    public var video: VideoTrackSettings?
    public var audio: AudioTrackSettings?
    public var segmentPolicy: SegmentPolicy
    public var syncInterval: Double
    public var jpegQuality: Int
    /// Extra metadata for every file (device id, …).
    public var metadata: [String: String]
    /// The disk guard, asked before a recording starts (on the caller's thread; it may
    /// delete old days before answering) and every 2 s while it runs (on the encoder
    /// thread: it must answer at once from its last measurement — see `StorageGuard` —
    /// because frames queue up while it works).
    public var storageCheck: (@Sendable (_ recording: Bool) -> StorageVerdict)?

    public init(layout: LibraryLayout, video: VideoTrackSettings?, audio: AudioTrackSettings?,
                segmentPolicy: SegmentPolicy = SegmentPolicy(), syncInterval: Double = 2,
                jpegQuality: Int = 90, metadata: [String: String] = [:]) {
        self.layout = layout
        self.video = video
        self.audio = audio
        self.segmentPolicy = segmentPolicy
        self.syncInterval = syncInterval
        self.jpegQuality = jpegQuality
        self.metadata = metadata
        self.storageCheck = nil
    }
}

/// A live view of the recorder for progress lines, status and (later) the screen.
public struct RecorderStatus: Sendable, Equatable {
    public var state: RecordingState = .idle
    /// Library path the current segment will get (its temp file until finished).
    public var currentFile: String?
    public var segmentIndex = 0
    /// Bytes of all segments of this recording, including the one being written.
    public var bytesWritten: Int64 = 0
    /// Seconds of all segments of this recording.
    public var secondsWritten: Double = 0
    public var videoFramesWritten = 0
    /// Frames the encoder thread could not keep up with (dropped, oldest first).
    public var droppedVideoFrames = 0
    public var droppedAudioChunks = 0
    /// Sound level per channel (RMS and peak hold, dBFS), updated 10 times a second
    /// whether or not a recording runs.
    public var audioLevels: AudioLevels?
    public var lastError: String?
    public var finishedFiles: [String] = []
}

/// What the recorder reports as it happens.
public enum RecorderEvent: Sendable {
    case stateChanged(RecordingState)
    case fileFinished(path: String, seconds: Double, bytes: Int64)
    case snapshotSaved(path: String)
    case failed(RecorderError)
    case sourceEnded(source: String, SourceEnd)
}

/// Where to stop.
public enum StopPoint: Sendable {
    /// Live capture: nothing captured after now is recorded.
    case now
    /// File replay: record everything already queued, then stop.
    case afterQueuedInput
}

/// The recording pipeline: receives frames and audio from the capture threads through
/// a bounded queue, and on its own encoder thread runs the state machine, writes
/// segments, hands over between them without losing a frame, takes stills and moves
/// finished files into the library.
public final class Recorder: CaptureSink, @unchecked Sendable {
    public let settings: RecorderSettings
    private let queue: CaptureQueue
    private let clock: MonotonicClock
    private let logger: Logger
    private let files: LibraryFiles
    private let onEvent: @Sendable (RecorderEvent) -> Void

    // Shared with the encoder thread: guarded by `lock`.
    private let lock = Lock()
    private var machine = RecordingStateMachine()
    private var pendingStop: StopPoint?
    private var pendingLimit: Double?
    private var snapshotWaiters: [SnapshotWaiter] = []
    private var published = RecorderStatus()
    private var shuttingDown = false
    private var beats: UInt64 = 0
    private let threadFinished = DispatchSemaphore(value: 0)
    /// Waveform pictures are drawn here, off the encoder thread (decoding a long
    /// recording takes a while); shutdown waits for them.
    private let waveformQueue = DispatchQueue(label: "kioskcam.waveforms", qos: .utility)

    // Owned by the encoder thread.
    private var active: SegmentWriter?
    private var retiring: SegmentWriter?
    private var stopTime: MonotonicInstant?
    private var drainingQueuedInput = false
    private var finishedBytes: Int64 = 0
    private var finishedSeconds: Double = 0
    private var segmentIndex = 0
    private var forceNextKeyframe = false
    /// When the recording (its first segment) started, and when it must end by itself.
    private var recordingStart: MonotonicInstant?
    private var recordingLimit: Double?
    private var lastStorageCheck: MonotonicInstant?
    private var jpegEncoder: JPEGEncoder?
    private var levelMeter = AudioLevelMeter()
    private var lastVideoFormat: VideoFormat?

    /// - Parameters:
    ///   - overflow: `.dropOldest` for live sources, `.block` for files replayed fast.
    ///   - onEvent: Called on the encoder thread; must return quickly.
    public init(settings: RecorderSettings, clock: MonotonicClock, logger: Logger,
                overflow: CaptureQueue.OverflowPolicy = .dropOldest,
                onEvent: @escaping @Sendable (RecorderEvent) -> Void = { _ in }) {
        self.settings = settings
        self.clock = clock
        self.logger = logger
        self.onEvent = onEvent
        files = LibraryFiles(layout: settings.layout)
        // ~0.25 s of video at 30 fps, ~1 s of 20 ms audio chunks.
        queue = CaptureQueue(videoCapacity: 8, audioCapacity: 50, overflow: overflow,
                             expectsVideo: settings.video != nil, expectsAudio: settings.audio != nil)
        let thread = Thread { [self] in runEncoderLoop() }
        thread.name = "kioskcam.encoder"
        thread.start()
    }

    // MARK: Control (any thread)

    public var status: RecorderStatus {
        let counters = queue.snapshot
        return lock.withLock {
            var status = published
            status.droppedVideoFrames = counters.droppedVideoFrames
            status.droppedAudioChunks = counters.droppedAudioChunks
            return status
        }
    }

    /// Asks for a recording to start at the next frame.
    /// - Parameter maximumSeconds: End the recording by itself after this much recorded
    ///   time (exact to the frame), if given.
    /// - Throws: `RecorderError.illegalTransition` ("already recording") unless idle;
    ///   `.library` when the media root is unusable.
    public func start(maximumSeconds: Double? = nil) throws(RecorderError) {
        try files.prepare()
        if let check = settings.storageCheck, case .refuseToStart(let message) = check(false) {
            throw RecorderError(.diskFull, message)
        }
        try lock.withLock { () throws(RecorderError) in
            do throws(RecordingTransitionError) { try machine.apply(.start) } catch { throw RecorderError(error) }
            pendingLimit = maximumSeconds
            published.state = machine.state
            published.lastError = nil
            published.finishedFiles = []
        }
        onEvent(.stateChanged(.starting))
    }

    /// Asks the recording to stop; it becomes idle once the file is in the library.
    /// - Throws: `RecorderError.illegalTransition` when not recording.
    public func stop(_ point: StopPoint = .now) throws(RecorderError) {
        try lock.withLock { () throws(RecorderError) in
            do throws(RecordingTransitionError) { try machine.apply(.stop) } catch { throw RecorderError(error) }
            published.state = machine.state
            pendingStop = point
        }
        onEvent(.stateChanged(.stopping))
    }

    /// Stills asked for and not yet taken, at most: every waiter gets the same next frame,
    /// so more would only pile up while no frame comes (a lost camera).
    public static let maximumSnapshotWaiters = 8

    /// Saves the next video frame as a JPEG in the library.
    /// - Parameters:
    ///   - timeout: Seconds to wait for a frame; then `completion` gets `.snapshotFailed`.
    ///   - completion: Called once, on the encoder thread, or at once when too many
    ///     stills are already waiting.
    public func snapshot(timeout: Double = 5, _ completion: @escaping @Sendable (Result<String, RecorderError>) -> Void) {
        let deadline = clock.now().advanced(byNanoseconds: Int64(max(0, min(timeout, 3600)) * 1e9))
        let accepted = lock.withLock { () -> Bool in
            guard snapshotWaiters.count < Self.maximumSnapshotWaiters else { return false }
            snapshotWaiters.append(SnapshotWaiter(deadline: deadline, completion: completion))
            return true
        }
        if !accepted {
            completion(.failure(RecorderError(.snapshotFailed, "\(Self.maximumSnapshotWaiters) stills are already waiting for a frame from the camera; try again once they are taken")))
        }
    }

    /// Encoder-loop iterations so far: the watchdog pings systemd only while this moves,
    /// so a stuck encoder thread gets the daemon restarted.
    public var heartbeat: UInt64 { lock.withLock { beats } }

    /// Waits until the recorder is idle (or `timeout` seconds pass); returns the final state.
    @discardableResult
    public func waitUntilIdle(timeout: Double) -> RecordingState {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while Date() < deadline {
            let state = lock.withLock { machine.state }
            if state == .idle { return state }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return lock.withLock { machine.state }
    }

    /// Finishes any recording and stops the encoder thread. Call once, last.
    public func shutdown(timeout: Double = 30) {
        if (try? stop()) != nil { waitUntilIdle(timeout: timeout) }
        lock.withLock { shuttingDown = true }
        queue.close()
        _ = threadFinished.wait(timeout: .now() + timeout)
        queue.drain()
        waveformQueue.sync {}
    }

    /// Every audio recording gets a waveform PNG beside it.
    private func drawWaveform(for path: String) {
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

    // MARK: CaptureSink (capture threads)

    public func deliver(_ frame: VideoFrame) { queue.push(frame) }
    public func deliver(_ chunk: AudioChunk) { queue.push(chunk) }
    public func videoSourceEnded(_ name: String, _ end: SourceEnd) {
        queue.finishVideo()
        onEvent(.sourceEnded(source: name, end))
    }

    public func audioSourceEnded(_ name: String, _ end: SourceEnd) {
        queue.finishAudio()
        onEvent(.sourceEnded(source: name, end))
    }

    // MARK: Encoder thread

    private func runEncoderLoop() {
        defer { threadFinished.signal() }
        while true {
            let item = queue.pop(timeout: 0.05)
            let (state, stopRequest, stopping) = lock.withLock { () -> (RecordingState, StopPoint?, Bool) in
                let request = pendingStop
                pendingStop = nil
                beats &+= 1
                return (machine.state, request, shuttingDown)
            }
            if let stopRequest { beginStop(stopRequest) }
            if let item {
                switch item {
                case .video(let frame): handle(frame, state: state)
                case .audio(let chunk): handle(chunk, state: state)
                }
                item.recycle()
            } else if stopping {
                break
            }
            finishRetiringIfDone(queueEmpty: item == nil)
            checkStorageWhileRecording()
            expireSnapshotWaiters()
            publishProgress()
        }
        if let active { abandon(active, reason: "shutdown") }
        failSnapshotWaiters("kioskcam is shutting down")
    }

    private func handle(_ frame: VideoFrame, state: RecordingState) {
        lastVideoFormat = frame.format
        takeSnapshotIfRequested(frame)
        guard settings.video != nil else { return }
        if state == .starting, active == nil, stopTime == nil {
            openSegment(at: frame.timestamp, videoFormat: frame.format)
        }
        guard let segment = active else { return }
        if let stopTime, frame.timestamp >= stopTime { return }
        if reachedLimit(at: frame.timestamp) { return }
        // The segment's length if this frame joined it: its end, not its start, counts
        // (30 frames at 30 fps fill exactly 1 s). The millisecond absorbs rounding.
        let lengthWithFrame = frame.timestamp.seconds(since: segment.start)
            + Double(frame.format.frameDurationNanoseconds) / 1e9 - 0.001
        if segment.videoFrames > 0, settings.segmentPolicy.shouldCut(
            seconds: lengthWithFrame, bytes: segment.writer.bytesEncoded,
            nextFrameEstimate: Int64(settings.video?.bitrate ?? 0) / 8 / Int64(max(frame.format.framesPerSecond, 1))
        ) {
            rotateSegment(at: frame.timestamp, videoFormat: frame.format)
        }
        guard let current = active else { return }
        do {
            try current.writeVideo(frame, forceKeyframe: forceNextKeyframe)
            forceNextKeyframe = false
        } catch {
            fail(current, error)
        }
    }

    private func handle(_ chunk: AudioChunk, state: RecordingState) {
        let previous = levelMeter.levels
        levelMeter.process(chunk.buffer.bytes.bindMemory(to: Int16.self), channels: chunk.format.channels,
                           sampleRate: chunk.format.sampleRate, at: chunk.timestamp)
        if let levels = levelMeter.levels, levels != previous { lock.withLock { published.audioLevels = levels } }
        if settings.video == nil, state == .starting, active == nil, stopTime == nil {
            openSegment(at: chunk.timestamp, videoFormat: nil)
        }
        // First, so that a segment the limit just ended still gets this chunk's head.
        _ = reachedLimit(at: chunk.timestamp)
        if let retiring {
            do { try retiring.writeAudio(chunk) } catch { fail(retiring, error) }
        }
        guard let segment = active else { return }
        if settings.video != nil, segment.end == nil, queue.isVideoDone, let last = segment.lastVideoTimestamp {
            // The camera delivered its last frame: sound after it is not part of the video.
            segment.end = last.advanced(byNanoseconds: lastVideoFormat?.frameDurationNanoseconds ?? 0)
        }
        if settings.video == nil, settings.segmentPolicy.shouldCut(
            seconds: chunk.timestamp.seconds(since: segment.start), bytes: segment.writer.bytesEncoded
        ) {
            rotateSegment(at: chunk.timestamp, videoFormat: nil)
        }
        guard let current = active else { return }
        do { try current.writeAudio(chunk) } catch { fail(current, error) }
    }

    /// Ends the recording at exactly start + limit once `time` (a frame's, or a sound
    /// chunk's — so a stalled camera cannot stretch the recording) has reached it.
    private func reachedLimit(at time: MonotonicInstant) -> Bool {
        guard let recordingLimit, let recordingStart, let segment = active,
              time.seconds(since: recordingStart) >= recordingLimit - 0.001 else { return false }
        self.recordingLimit = nil
        let time = recordingStart.advanced(byNanoseconds: Int64(recordingLimit * 1e9))
        let stopped = lock.withLock { (try? machine.apply(.stop)) != nil }
        guard stopped else { return false }
        lock.withLock { published.state = machine.state }
        onEvent(.stateChanged(.stopping))
        stopTime = time
        segment.end = time
        segment.retireDeadline = clock.now().advanced(byNanoseconds: 1_000_000_000)
        retire(segment)
        return true
    }

    /// Every 2 s while recording: below the hard floor the file is finished at once,
    /// so that it stays playable instead of being cut off by a full disk.
    private func checkStorageWhileRecording() {
        guard let check = settings.storageCheck, let segment = active else { return }
        let now = clock.now()
        if let last = lastStorageCheck, now.nanoseconds(since: last) < 2_000_000_000 { return }
        lastStorageCheck = now
        guard case .stopRecording(let message) = check(true) else { return }
        let stopped = lock.withLock { (try? machine.apply(.stop)) != nil }
        guard stopped else { return }
        logger.error("\(message)")
        lock.withLock {
            published.state = machine.state
            published.lastError = message
        }
        onEvent(.stateChanged(.stopping))
        onEvent(.failed(RecorderError(.diskFull, message)))
        stopTime = now
        segment.end = now
        segment.retireDeadline = now.advanced(byNanoseconds: 1_000_000_000)
        retire(segment)
    }

    /// Opens the first segment of a recording; the state becomes `recording`.
    private func openSegment(at start: MonotonicInstant, videoFormat: VideoFormat?) {
        do {
            active = try makeSegment(at: start, videoFormat: videoFormat)
            recordingStart = start
            recordingLimit = lock.withLock { pendingLimit }
            segmentIndex = 1
            finishedBytes = 0
            finishedSeconds = 0
            transition(.writerReady)
        } catch {
            logger.error("recording could not start: \(error)")
            transition(.writerFailed, error: error.description)
            onEvent(.failed(error))
        }
    }

    /// Closes the active segment at `time` and continues in a new one with the same
    /// frame: the old one keeps receiving audio up to `time`, so nothing is lost.
    private func rotateSegment(at time: MonotonicInstant, videoFormat: VideoFormat?) {
        guard let old = active else { return }
        if let retiring { finish(retiring) }
        old.end = time
        old.retireDeadline = clock.now().advanced(byNanoseconds: 2_000_000_000)
        retiring = old
        active = nil
        guard endVideo(of: old) else { return }
        do {
            active = try makeSegment(at: time, videoFormat: videoFormat)
            segmentIndex += 1
            forceNextKeyframe = true
            logger.info("segment \(segmentIndex) started")
        } catch {
            logger.error("next segment could not start: \(error)")
            finish(old)
            retiring = nil
            transition(.writerFailed, error: error.description)
            onEvent(.failed(error))
        }
    }

    private func makeSegment(at start: MonotonicInstant, videoFormat: VideoFormat?) throws(RecorderError) -> SegmentWriter {
        try files.prepare()
        // The frame was captured a little before now; name the file by its capture time.
        let age = Double(clock.now().nanoseconds(since: start)) / 1e9
        let wallStart = Date().addingTimeInterval(-max(0, age))
        let local = LocalTimestamp(wallStart)
        let kind: MediaKind = videoFormat == nil ? .audio : .video
        var video = settings.video
        if let videoFormat { video?.input = videoFormat }
        var metadata = settings.metadata
        metadata["creation_time"] = iso8601UTC(secondsSince1970: Int64(wallStart.timeIntervalSince1970.rounded(.down)))
        var serial = 0
        while true {
            let temp = settings.layout.incomingPath(kind, local, serial: serial)
            do {
                let writer = try MP4Writer(settings: MP4WriterSettings(
                    path: temp, video: videoFormat == nil ? nil : video, audio: settings.audio,
                    metadata: metadata, syncInterval: settings.syncInterval))
                lock.withLock { published.currentFile = settings.layout.finalPath(kind, local) }
                return SegmentWriter(writer: writer, kind: kind, tempPath: temp, localStart: local,
                                     start: start, audioFormat: settings.audio?.input)
            } catch where error.code == .io && serial < 100 && FileManager.default.fileExists(atPath: temp) {
                serial += 1
            } catch {
                throw RecorderError(error)
            }
        }
    }

    private func beginStop(_ point: StopPoint) {
        guard let segment = active else {
            // Stopped before the first frame arrived: nothing was written.
            transition(.finished)
            return
        }
        switch point {
        case .now:
            let now = clock.now()
            stopTime = now
            segment.end = now
            segment.retireDeadline = now.advanced(byNanoseconds: 1_000_000_000)
            retire(segment)
        case .afterQueuedInput:
            drainingQueuedInput = true
        }
    }

    private func retire(_ segment: SegmentWriter) {
        if let retiring, retiring !== segment { finish(retiring) }
        retiring = segment
        active = nil
        endVideo(of: segment)
    }

    /// A retiring segment gets no more frames: its video goes to the file now, and only
    /// its sound tail waits for the sound to catch up with its end.
    /// - Returns: false when that failed (the recording has failed, what was written is kept).
    @discardableResult
    private func endVideo(of segment: SegmentWriter) -> Bool {
        do {
            try segment.writer.finishVideo()
            return true
        } catch {
            fail(segment, error)
            return false
        }
    }

    /// Finishes a retiring segment once its audio has caught up with its end (or
    /// the audio stalled, or there is none).
    private func finishRetiringIfDone(queueEmpty: Bool) {
        if drainingQueuedInput, let segment = active {
            let inputDone = settings.video != nil ? queue.isVideoDone : queue.isAudioDone
            if inputDone || queueEmpty {
                // Every queued frame is written: the recording ends after its last frame,
                // and the audio still queued is cut there.
                drainingQueuedInput = false
                let end = segment.lastVideoTimestamp.map {
                    $0.advanced(byNanoseconds: lastVideoFormat?.frameDurationNanoseconds ?? 0)
                } ?? segment.audioCursor
                stopTime = end
                segment.end = end
                segment.retireDeadline = clock.now().advanced(byNanoseconds: 2_000_000_000)
                retire(segment)
            }
        }
        if let segment = retiring {
            let overdue = segment.retireDeadline.map { clock.now() >= $0 } ?? true
            if segment.audioReachedEnd || !segment.hasAudio || overdue || queue.isAudioDone {
                finish(segment)
                retiring = nil
            }
        }
        if active == nil, retiring == nil, stopTime != nil {
            stopTime = nil
            transition(.finished)
        }
    }

    /// Writes the tail, moves the file into the library and reports it.
    private func finish(_ segment: SegmentWriter) {
        let seconds = segment.writer.secondsWritten
        do {
            try segment.writer.finish()
            let path = try files.moveIntoLibrary(segment.tempPath, kind: segment.kind, time: segment.localStart, seconds: seconds)
            let bytes = segment.writer.bytesWritten
            finishedBytes += bytes
            finishedSeconds += seconds
            lock.withLock { published.finishedFiles.append(path) }
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

    /// A writer failed (disk full, encoder error): end the recording, keep what was
    /// written, and report it.
    private func fail(_ segment: SegmentWriter, _ error: MediaError) {
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

    private func abandon(_ segment: SegmentWriter, reason: String) {
        segment.writer.abandon()
        salvage(segment, after: RecorderError(.writerFailed, reason))
    }

    /// Makes what reached the disk playable and puts it in the library; never leaves
    /// a half-written file there.
    private func salvage(_ segment: SegmentWriter, after error: RecorderError) {
        segment.writer.abandon()
        let salvager = IncomingSalvage(files: files, logger: logger)
        if let path = salvager.salvage(tempPath: segment.tempPath, kind: segment.kind, time: segment.localStart) {
            lock.withLock { published.finishedFiles.append(path) }
            onEvent(.fileFinished(path: path, seconds: segment.writer.secondsWritten, bytes: segment.writer.bytesWritten))
        }
        lock.withLock { published.lastError = error.description }
    }

    /// Stills whose frame never came (no camera picture) fail with a clear message.
    private func expireSnapshotWaiters() {
        let now = clock.now()
        let expired = lock.withLock { () -> [SnapshotWaiter] in
            guard snapshotWaiters.contains(where: { now >= $0.deadline }) else { return [] }
            let overdue = snapshotWaiters.filter { now >= $0.deadline }
            snapshotWaiters.removeAll { now >= $0.deadline }
            return overdue
        }
        for waiter in expired {
            waiter.completion(.failure(RecorderError(.snapshotFailed, "no frame came from the camera in time; check the camera (kioskcam status, kioskcam probe)")))
        }
    }

    private func failSnapshotWaiters(_ reason: String) {
        let waiters = lock.withLock { () -> [SnapshotWaiter] in
            defer { snapshotWaiters.removeAll() }
            return snapshotWaiters
        }
        for waiter in waiters { waiter.completion(.failure(RecorderError(.snapshotFailed, reason))) }
    }

    private func takeSnapshotIfRequested(_ frame: VideoFrame) {
        let waiters = lock.withLock { () -> [SnapshotWaiter] in
            defer { snapshotWaiters.removeAll(keepingCapacity: true) }
            return snapshotWaiters
        }
        guard !waiters.isEmpty else { return }
        let result: Result<String, RecorderError>
        do {
            let encoder: JPEGEncoder
            if let existing = jpegEncoder, existing.input == frame.format {
                encoder = existing
            } else {
                encoder = try JPEGEncoder(input: frame.format, quality: settings.jpegQuality)
                jpegEncoder = encoder
            }
            let bytes = try encoder.encode(frame.buffer.bytes)
            let path = try files.writeFile(bytes, kind: .photo, time: LocalTimestamp(Date()))
            logger.info("snapshot \(path)")
            onEvent(.snapshotSaved(path: path))
            result = .success(path)
        } catch let error as MediaError {
            result = .failure(RecorderError(.snapshotFailed, error.description))
        } catch let error as RecorderError {
            result = .failure(error)
        } catch {
            result = .failure(RecorderError(.snapshotFailed, "\(error)"))
        }
        for waiter in waiters { waiter.completion(result) }
    }

    private func transition(_ event: RecordingEvent, error: String? = nil) {
        let state = lock.withLock { () -> RecordingState? in
            guard (try? machine.apply(event)) != nil else { return nil }
            published.state = machine.state
            if let error { published.lastError = error }
            if machine.state == .idle { published.currentFile = nil }
            return machine.state
        }
        if let state { onEvent(.stateChanged(state)) }
    }

    private func publishProgress() {
        let segment = active ?? retiring
        let bytes = finishedBytes + (active?.writer.bytesWritten ?? 0) + (retiring?.writer.bytesWritten ?? 0)
        let seconds = finishedSeconds + (active?.writer.secondsWritten ?? 0) + (retiring?.writer.secondsWritten ?? 0)
        let frames = (active?.videoFrames ?? 0)
        lock.withLock {
            published.segmentIndex = segmentIndex
            if segment != nil || machine.state == .idle {
                published.bytesWritten = bytes
                published.secondsWritten = seconds
            }
            published.videoFramesWritten = frames
        }
    }
}

/// A still asked for: answered with the next frame, or failed at its deadline.
private struct SnapshotWaiter {
    var deadline: MonotonicInstant
    var completion: @Sendable (Result<String, RecorderError>) -> Void
}
