import Foundation
import KioskCore

/// Sits between the capture sources and the recorder: passes everything on untouched
/// and keeps a copy of the newest frame, at most `framesPerSecond` times a second, for
/// the screen's preview.
///
/// The copy is taken only when the screen is not reading the previous one (a try-lock):
/// the preview drops frames, the recording never does, and the capture thread never
/// waits for the screen.
public final class PreviewTap: CaptureSink, @unchecked Sendable {
    private let downstream: CaptureSink
    private let soundOnly: CaptureSink?
    private let minimumInterval: Int64
    private let latchLock = NSLock()
    // Guarded by `latchLock`.
    private var latest: VideoFrame?
    private var latestIsNew = false
    private var lastCopy: MonotonicInstant?
    private var skipped = 0
    private let poolLock = NSLock()
    private var audioPool: BufferPool?  // guarded by poolLock

    /// - Parameters:
    ///   - downstream: Where every frame and chunk goes (the recorder).
    ///   - soundOnly: Also gets every audio chunk (the sound-only recorder).
    ///   - framesPerSecond: The most preview frames worth copying per second.
    public init(downstream: CaptureSink, soundOnly: CaptureSink? = nil, framesPerSecond: Int) {
        self.downstream = downstream
        self.soundOnly = soundOnly
        minimumInterval = 1_000_000_000 / Int64(max(1, framesPerSecond))
    }

    public func deliver(_ frame: VideoFrame) {
        copyForPreview(frame)
        downstream.deliver(frame)
    }

    public func deliver(_ chunk: AudioChunk) {
        if let soundOnly, let copied = copy(chunk) { soundOnly.deliver(copied) }
        downstream.deliver(chunk)
    }

    public func videoSourceEnded(_ name: String, _ end: SourceEnd) { downstream.videoSourceEnded(name, end) }

    public func audioSourceEnded(_ name: String, _ end: SourceEnd) {
        soundOnly?.audioSourceEnded(name, end)
        downstream.audioSourceEnded(name, end)
    }

    /// Each recorder recycles what it is given, so the second one gets its own copy,
    /// from a pool sized on the first chunk (50 chunks: about a second of sound). When
    /// the pool is empty the sound-only recorder is behind and the chunk is dropped, as
    /// its own queue would.
    private func copy(_ chunk: AudioChunk) -> AudioChunk? {
        let size = chunk.buffer.byteCount
        let pool = poolLock.withLock { () -> BufferPool in
            if let audioPool, audioPool.bufferCapacity >= size { return audioPool }
            let made = BufferPool(bufferCapacity: max(size * 2, 4096), count: 50)
            audioPool = made
            return made
        }
        guard let buffer = pool.take() else { return nil }
        buffer.baseAddress.copyMemory(from: chunk.buffer.baseAddress, byteCount: size)
        buffer.byteCount = size
        return AudioChunk(buffer: buffer, format: chunk.format, timestamp: chunk.timestamp)
    }

    /// Preview frames not copied because the screen was busy with the previous one.
    public var skippedFrames: Int { latchLock.withLock { skipped } }

    private func copyForPreview(_ frame: VideoFrame) {
        guard latchLock.try() else { return }   // the screen is reading: skip this one
        defer { latchLock.unlock() }
        if let lastCopy, frame.timestamp.nanoseconds(since: lastCopy) < minimumInterval { return }
        lastCopy = frame.timestamp
        let size = frame.buffer.byteCount
        var copy = latest
        if copy == nil || copy!.buffer.capacity < size {
            copy = VideoFrame(buffer: MediaBuffer(capacity: size), format: frame.format,
                              timestamp: frame.timestamp, sequence: frame.sequence)
        }
        guard var target = copy else { return }
        target.buffer.baseAddress.copyMemory(from: frame.buffer.baseAddress, byteCount: size)
        target.buffer.byteCount = size
        target.format = frame.format
        target.timestamp = frame.timestamp
        target.sequence = frame.sequence
        if latestIsNew { skipped += 1 }
        latest = target
        latestIsNew = true
    }

    /// Runs `body` with the newest frame if one arrived since the last call; capture
    /// skips its preview copies while `body` runs.
    /// - Returns: Whether there was a new frame.
    @discardableResult
    public func withNewFrame(_ body: (VideoFrame) -> Void) -> Bool {
        latchLock.lock()
        defer { latchLock.unlock() }
        guard latestIsNew, let latest else { return false }
        latestIsNew = false
        body(latest)
        return true
    }
}
