import Foundation

/// The bounded hand-off between capture threads and the encoder thread.
///
/// Video and audio have separate lanes so a burst of one never pushes out the other.
/// When a lane is full the *oldest* item is dropped (its buffer goes back to its pool) and counted: a live
/// camera must never block, and memory must never grow with time. The consumer gets
/// items in timestamp order across both lanes.
///
/// A file replayed as fast as possible has no real time to keep up with; for it the
/// queue applies back-pressure (`.block`) instead, so nothing is dropped, and merges
/// strictly by time: an item is handed out only once the other lane has a later one
/// (or has finished), so a fast audio file cannot run ahead of the video.
public final class CaptureQueue: @unchecked Sendable {
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

    private let lock = Lock()
    private var video: RingBuffer<VideoFrame>
    private var audio: RingBuffer<AudioChunk>
    private var counters = Counters()
    private var closed = false
    /// A lane whose source has delivered its last item (or that has no source).
    private var videoFinished: Bool
    private var audioFinished: Bool
    public let overflow: OverflowPolicy

    /// - Parameters:
    ///   - expectsVideo: Whether a video source feeds this queue (strict merging waits for it).
    ///   - expectsAudio: Whether an audio source feeds this queue.
    public init(videoCapacity: Int, audioCapacity: Int, overflow: OverflowPolicy = .dropOldest,
                expectsVideo: Bool = true, expectsAudio: Bool = true) {
        video = RingBuffer(capacity: videoCapacity)
        audio = RingBuffer(capacity: audioCapacity)
        self.overflow = overflow
        videoFinished = !expectsVideo
        audioFinished = !expectsAudio
    }

    /// The video source delivered its last frame.
    public func finishVideo() { lock.withLock { videoFinished = true; lock.broadcast() } }

    /// The audio source delivered its last chunk.
    public func finishAudio() { lock.withLock { audioFinished = true; lock.broadcast() } }

    /// Whether the video source has finished and every frame has been taken.
    public var isVideoDone: Bool { lock.withLock { videoFinished && video.isEmpty } }

    /// Whether the audio source has finished and every chunk has been taken.
    public var isAudioDone: Bool { lock.withLock { audioFinished && audio.isEmpty } }

    public func push(_ frame: VideoFrame) {
        lock.withLock {
            while overflow == .block && video.isFull && !closed { lock.wait() }
            guard !closed else { return }
            if video.isFull {
                _ = video.popFirst()   // its buffer goes back when the last holder lets go
                counters.droppedVideoFrames += 1
            }
            video.append(frame)
            counters.maxVideoDepth = max(counters.maxVideoDepth, video.count)
            lock.broadcast()
        }
    }

    public func push(_ chunk: AudioChunk) {
        lock.withLock {
            while overflow == .block && audio.isFull && !closed { lock.wait() }
            guard !closed else { return }
            if audio.isFull {
                _ = audio.popFirst()
                counters.droppedAudioChunks += 1
            }
            audio.append(chunk)
            lock.broadcast()
        }
    }

    /// The earliest queued item, waiting up to `timeout` seconds for one.
    /// Returns nil on time-out, or once the queue is closed and drained.
    public func pop(timeout: Double) -> CaptureItem? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        return lock.withLock {
            while !canPop {
                if closed || !lock.wait(until: deadline) { return closed ? popEarliest() : nil }
            }
            return popEarliest()
        }
    }

    /// The earliest queued item, or nil without waiting.
    public func tryPop() -> CaptureItem? { lock.withLock { canPop ? popEarliest() : nil } }

    /// Live: anything queued. Replay (`.block`): only once the order across lanes is known.
    private var canPop: Bool {
        if video.isEmpty && audio.isEmpty { return false }
        guard overflow == .block else { return true }
        return (!video.isEmpty || videoFinished) && (!audio.isEmpty || audioFinished)
    }

    private func popEarliest() -> CaptureItem? {
        // Producers may be waiting for room (`.block`).
        if overflow == .block { lock.broadcast() }
        switch (video.first, audio.first) {
        case (let v?, let a?):
            return v.timestamp <= a.timestamp ? video.popFirst().map(CaptureItem.video) : audio.popFirst().map(CaptureItem.audio)
        case (.some, nil): return video.popFirst().map(CaptureItem.video)
        case (nil, .some): return audio.popFirst().map(CaptureItem.audio)
        case (nil, nil): return nil
        }
    }

    /// Stops accepting items and wakes the consumer; queued items can still be popped.
    public func close() { lock.withLock { closed = true; lock.broadcast() } }

    /// Recycles everything still queued.
    public func drain() {
        lock.withLock {
            video.removeAll()
            audio.removeAll()
        }
    }

    public var snapshot: Counters { lock.withLock { counters } }
    public var depth: (video: Int, audio: Int) { lock.withLock { (video.count, audio.count) } }
}
