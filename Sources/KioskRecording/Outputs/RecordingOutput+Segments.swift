import Foundation
import KioskCore
import KioskMedia
import Logging

// Where a recording's files begin, are cut and end, on the output thread: the first
// segment, cuts at a keyframe without losing or repeating a packet, limits, the disk
// floor, finishing into the library, and salvage after a failure.

extension RecordingOutput.OutputThread {
    mutating func openFirstSegment(at start: MonotonicInstant, videoParameters: StreamParameters?) {
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
    mutating func rotateSegment(at time: MonotonicInstant, videoParameters: StreamParameters?) {
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
    mutating func reachedLimit(at time: MonotonicInstant) -> Bool {
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
    mutating func checkStorageWhileRecording() {
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

    mutating func beginStop(_ point: StopPoint, at time: MonotonicInstant) {
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

    mutating func retire(_ segment: Segment) {
        if let retiring, retiring !== segment { finish(retiring) }
        retiring = segment
        if active === segment { active = nil }
    }

    /// Finishes a retiring segment once its video and sound have reached its end (or
    /// the encoder stalled, or there is none).
    mutating func finishRetiringIfDone() {
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
    mutating func fail(_ segment: Segment, _ error: MediaError) {
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

    mutating func abandon(_ segment: Segment, reason: String) {
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

    mutating func transition(_ event: RecordingEvent, error: String? = nil) {
        let state = shared.withLock { shared -> RecordingState? in
            guard (try? shared.machine.apply(event)) != nil else { return nil }
            shared.published.state = shared.machine.state
            if let error { shared.published.lastError = error }
            if shared.machine.state == .idle { shared.published.currentFile = nil }
            return shared.machine.state
        }
        if let state { onEvent(.stateChanged(state)) }
    }

    mutating func publishProgress() {
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
