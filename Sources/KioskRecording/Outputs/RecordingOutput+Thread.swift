import Foundation
import KioskCore
import KioskMedia
import Logging

// The recording output's own thread: its state, the loop that takes packets and controls
// from the queue, and what a packet or a control does. Where files begin, are cut and end
// is in RecordingOutput+Segments.swift; the thread-safe face in RecordingOutput.swift.

extension RecordingOutput {
    /// What only the output thread touches: the segments being written (FFmpeg, not
    /// `Sendable`) and the recording's bookkeeping. It lives on that thread's stack.
    struct OutputThread {
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

    mutating func write(_ packet: EncodedPacket, _ parameters: StreamParameters, to segment: Segment) {
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
}
