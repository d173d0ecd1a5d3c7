import Foundation
import Glibc
import KioskCore

/// Records what a microphone delivers: timestamps, byte counts and the first sample of
/// each chunk (recycling buffers at once, as the encoder would), and how it ended.
final class RecordingSink: CaptureSink, @unchecked Sendable {
    struct Chunk {
        var timestamp: MonotonicInstant
        var byteCount: Int
        var format: AudioFormat
        var samples: [Int16]
        /// CLOCK_MONOTONIC when the chunk arrived.
        var deliveredAt: MonotonicInstant
    }

    private let lock = NSCondition()
    private var recorded: [Chunk] = []
    private var endings: [SourceEnd] = []
    private let keep: Int

    /// Blocks the capture thread once, at this chunk index, for this long (to force an overrun).
    private let stall: (chunk: Int, seconds: Double)?

    /// - Parameters:
    ///   - keep: Chunks to keep (later ones are let go unrecorded).
    ///   - stall: Sleep on the capture thread once, at delivery number `chunk`.
    init(keep: Int = 1000, stall: (chunk: Int, seconds: Double)? = nil) {
        self.keep = keep
        self.stall = stall
    }

    var chunks: [Chunk] { lock.lock(); defer { lock.unlock() }; return recorded }
    var ends: [SourceEnd] { lock.lock(); defer { lock.unlock() }; return endings }

    func deliver(_ frame: VideoFrame) {}

    func deliver(_ chunk: AudioChunk) {
        let samples = Array(chunk.buffer.bytes.bindMemory(to: Int16.self))
        let now = monotonicNow()
        let byteCount = chunk.buffer.byteCount
        lock.lock()
        if recorded.count < keep {
            recorded.append(Chunk(timestamp: chunk.timestamp, byteCount: byteCount, format: chunk.format,
                                  samples: samples, deliveredAt: now))
        }
        let index = recorded.count
        lock.broadcast()
        lock.unlock()
        if let stall, stall.chunk == index { usleep(UInt32(stall.seconds * 1e6)) }
    }

    func videoSourceEnded(_ name: String, _ end: SourceEnd) {}

    func audioSourceEnded(_ name: String, _ end: SourceEnd) {
        lock.lock()
        endings.append(end)
        lock.broadcast()
        lock.unlock()
    }

    /// Waits until `count` chunks arrived or the source ended; false on time-out.
    func wait(forChunks count: Int, seconds: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        lock.lock()
        defer { lock.unlock() }
        while recorded.count < count && endings.isEmpty {
            if !lock.wait(until: deadline) { return false }
        }
        return recorded.count >= count
    }
}

func monotonicNow() -> MonotonicInstant {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return MonotonicInstant(nanoseconds: Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec))
}

/// Writes one 20 ms block of mono S16 every 20 ms into a pipe, block n filled with the
/// value n, paced on absolute CLOCK_MONOTONIC deadlines so the average rate is exact.
///
/// It stands in for a sound card's clock: ALSA's `file` plugin reads its `infile` (the
/// pipe's read end, a blocking descriptor) after each read from its `null` slave, so
/// `snd_pcm_readi` returns once per block — real-time pacing without hardware.
final class PacedPipeWriter: @unchecked Sendable {
    let readDescriptor: Int32
    private let writeDescriptor: Int32
    private let lock = NSLock()
    private var stopRequested = false
    private let finished = DispatchSemaphore(value: 0)

    init?() {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return nil }
        readDescriptor = ends[0]
        writeDescriptor = ends[1]
        // Never block the writer on a full pipe once nobody reads any more.
        _ = fcntl(writeDescriptor, F_SETFL, O_NONBLOCK)
    }

    /// asoundrc text defining `pcm.<name>`: the `file` plugin over `null`, reading our pipe.
    func configuration(name: String) -> String {
        "pcm.\(name) { type file slave.pcm null file \"/dev/null\" format raw infile \(readDescriptor) }"
    }

    func start(frames: Int, periodNanoseconds: Int64) {
        let thread = Thread { [self] in
            var block = [Int16](repeating: 0, count: frames)
            let start = monotonicNow()
            var index: Int64 = 0
            while !lock.withLock({ stopRequested }) {
                index += 1
                let due = start.nanoseconds + index * periodNanoseconds
                var deadline = timespec(tv_sec: Int(due / 1_000_000_000), tv_nsec: Int(due % 1_000_000_000))
                while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nil) == EINTR {}
                for i in block.indices { block[i] = Int16(truncatingIfNeeded: index) }
                _ = block.withUnsafeBytes { write(writeDescriptor, $0.baseAddress, $0.count) }
            }
            finished.signal()
        }
        thread.start()
    }

    /// Stops writing; call after the microphone is stopped (its reads block on the pipe).
    func stop() {
        lock.withLock { stopRequested = true }
        finished.wait()
        close(writeDescriptor)
        close(readDescriptor)
    }
}
