import Foundation

/// The bounded hand-off between capture threads and the encoder thread.
///
/// Video and audio have separate lanes so a burst of one never pushes out the other.
/// When a lane is full the *oldest* item is dropped, recycled and counted: a live
/// camera must never block, and memory must never grow with time. The consumer gets
/// items in timestamp order across both lanes.
///
/// A file replayed as fast as possible has no real time to keep up with; for it the
/// queue applies back-pressure (`.block`) instead, so nothing is dropped.
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
    public let overflow: OverflowPolicy

    public init(videoCapacity: Int, audioCapacity: Int, overflow: OverflowPolicy = .dropOldest) {
        video = RingBuffer(capacity: videoCapacity)
        audio = RingBuffer(capacity: audioCapacity)
        self.overflow = overflow
    }

    public func push(_ frame: VideoFrame) {
        lock.withLock {
            while overflow == .block && video.isFull && !closed { lock.wait() }
            guard !closed else { frame.buffer.recycle(); return }
            if video.isFull {
                video.popFirst()?.buffer.recycle()
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
            guard !closed else { chunk.buffer.recycle(); return }
            if audio.isFull {
                audio.popFirst()?.buffer.recycle()
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
            while video.isEmpty && audio.isEmpty {
                if closed || !lock.wait(until: deadline) { return nil }
            }
            return popEarliest()
        }
    }

    /// The earliest queued item, or nil without waiting.
    public func tryPop() -> CaptureItem? { lock.withLock { popEarliest() } }

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
            while let frame = video.popFirst() { frame.buffer.recycle() }
            while let chunk = audio.popFirst() { chunk.buffer.recycle() }
        }
    }

    public var snapshot: Counters { lock.withLock { counters } }
    public var depth: (video: Int, audio: Int) { lock.withLock { (video.count, audio.count) } }
}
