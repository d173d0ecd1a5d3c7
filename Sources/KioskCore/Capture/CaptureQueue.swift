import Foundation

/// The bounded hand-off between capture threads and the encoder thread.
///
/// Video and audio have separate lanes so a burst of one never pushes out the other.
/// When a lane is full the *oldest* item is dropped (its buffer goes back to its pool) and counted: a live
/// camera must never block, and memory must never grow with time. The consumer gets
/// items in timestamp order across both lanes — except when both lanes are full: then
/// the encoder has fallen behind on both, the sound lane (a second deep, against a few
/// frames of video) always holds the older head, and oldest-first would hand out only
/// sound while every video frame is dropped (seen in the HIL guest under load: tens of
/// seconds without a picture). Then the lanes take turns.
///
/// A file replayed as fast as possible has no real time to keep up with; for it the
/// queue applies back-pressure (`.block`) instead, so nothing is dropped, and merges
/// strictly by time: an item is handed out only once the other lane has a later one
/// (or has finished), so a fast audio file cannot run ahead of the video.
public final class CaptureQueue: Sendable {
    public enum OverflowPolicy: Sendable {
        /// Live capture: drop the oldest item and count it.
        case dropOldest
        /// Offline replay: the producer waits for room.
        case block
    }

    public struct Counters: Sendable, Equatable {
        public var droppedVideoFrames = 0
        public var droppedAudioChunks = 0
        public var maxVideoDepth = 0
        public init() {}
    }

    private struct State {
        var video: RingBuffer<VideoFrame>
        var audio: RingBuffer<AudioChunk>
        var counters = Counters()
        var closed = false
        /// A lane whose source has delivered its last item (or that has no source).
        var videoFinished: Bool
        var audioFinished: Bool
        /// The lane the last item came from (for taking turns when both are full).
        var lastWasVideo = false

        /// Live: anything queued. Replay (`.block`): only once the order across lanes is known.
        func canPop(_ overflow: OverflowPolicy) -> Bool {
            if video.isEmpty && audio.isEmpty { return false }
            guard overflow == .block else { return true }
            return (!video.isEmpty || videoFinished) && (!audio.isEmpty || audioFinished)
        }

        mutating func popEarliest(_ overflow: OverflowPolicy) -> CaptureItem? {
            let takeVideo: Bool
            switch (video.first, audio.first) {
            case (let v?, let a?):
                let behindOnBoth = overflow == .dropOldest && video.isFull && audio.isFull
                takeVideo = behindOnBoth ? !lastWasVideo : v.timestamp <= a.timestamp
            case (.some, nil): takeVideo = true
            case (nil, .some): takeVideo = false
            case (nil, nil): return nil
            }
            lastWasVideo = takeVideo
            return takeVideo ? video.popFirst().map(CaptureItem.video) : audio.popFirst().map(CaptureItem.audio)
        }
    }

    /// Producers wait in it for room (`.block`), the consumer for an item.
    private let state: Locked<State>
    public let overflow: OverflowPolicy

    /// - Parameters:
    ///   - expectsVideo: Whether a video source feeds this queue (strict merging waits for it).
    ///   - expectsAudio: Whether an audio source feeds this queue.
    public init(videoCapacity: Int, audioCapacity: Int, overflow: OverflowPolicy = .dropOldest,
                expectsVideo: Bool = true, expectsAudio: Bool = true) {
        state = Locked(State(video: RingBuffer(capacity: videoCapacity), audio: RingBuffer(capacity: audioCapacity),
                             videoFinished: !expectsVideo, audioFinished: !expectsAudio))
        self.overflow = overflow
    }

    /// The video source delivered its last frame.
    public func finishVideo() {
        state.withLock { $0.videoFinished = true }
        state.wakeWaiters()
    }

    /// The audio source delivered its last chunk.
    public func finishAudio() {
        state.withLock { $0.audioFinished = true }
        state.wakeWaiters()
    }

    /// Whether the video source has finished and every frame has been taken.
    public var isVideoDone: Bool { state.withLock { $0.videoFinished && $0.video.isEmpty } }

    /// Whether the audio source has finished and every chunk has been taken.
    public var isAudioDone: Bool { state.withLock { $0.audioFinished && $0.audio.isEmpty } }

    public func push(_ frame: VideoFrame) {
        let overflow = overflow
        state.withLock(waitingUntil: { overflow != .block || !$0.video.isFull || $0.closed }) { state in
            guard !state.closed else { return }
            if state.video.isFull {
                _ = state.video.popFirst()   // its buffer goes back when the last holder lets go
                state.counters.droppedVideoFrames += 1
            }
            state.video.append(frame)
            state.counters.maxVideoDepth = max(state.counters.maxVideoDepth, state.video.count)
        }
        state.wakeWaiters()
    }

    public func push(_ chunk: AudioChunk) {
        let overflow = overflow
        state.withLock(waitingUntil: { overflow != .block || !$0.audio.isFull || $0.closed }) { state in
            guard !state.closed else { return }
            if state.audio.isFull {
                _ = state.audio.popFirst()
                state.counters.droppedAudioChunks += 1
            }
            state.audio.append(chunk)
        }
        state.wakeWaiters()
    }

    /// The earliest queued item, waiting up to `timeout` seconds for one.
    /// Returns nil on time-out, or once the queue is closed and drained.
    public func pop(timeout: Double) -> CaptureItem? {
        let overflow = overflow
        let item = state.withLock(waitingUntil: { $0.canPop(overflow) || $0.closed },
                                  deadline: Date(timeIntervalSinceNow: timeout)) { state -> CaptureItem? in
            state.canPop(overflow) || state.closed ? state.popEarliest(overflow) : nil
        }
        // Producers may be waiting for room (`.block`).
        if overflow == .block { state.wakeWaiters() }
        return item
    }

    /// The earliest queued item, or nil without waiting.
    public func tryPop() -> CaptureItem? {
        let overflow = overflow
        let item = state.withLock { $0.canPop(overflow) ? $0.popEarliest(overflow) : nil }
        if overflow == .block { state.wakeWaiters() }
        return item
    }

    /// Stops accepting items and wakes the consumer; queued items can still be popped.
    public func close() {
        state.withLock { $0.closed = true }
        state.wakeWaiters()
    }

    /// Recycles everything still queued.
    public func drain() {
        state.withLock {
            $0.video.removeAll()
            $0.audio.removeAll()
        }
    }

    public var snapshot: Counters { state.withLock { $0.counters } }
    public var depth: (video: Int, audio: Int) { state.withLock { ($0.video.count, $0.audio.count) } }
}
