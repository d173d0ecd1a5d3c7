import CALSA
import Glibc
import KioskCore

/// The body of an `ALSAMicrophone`'s capture thread: poll, read whole periods into
/// pooled buffers, stamp them, hand them to the sink; recover from overruns and suspends.
///
/// It shares the microphone's PCM, which the microphone closes after this loop has ended.
/// Made and run on the capture thread, and owned by it: not `Sendable`.
final class ALSACaptureLoop {
    /// No audio for this long means the device stalled; the stream is restarted.
    static let stallMilliseconds: Int32 = 2000
    /// Failed restarts (or stalls) in a row before the microphone gives up.
    static let maxConsecutiveFailures = 5

    /// Keeps the PCM open while the loop runs, even if the microphone goes away.
    private let owner: SharedPCM
    private let pcm: OpaquePointer
    private let device: String
    private let setup: CaptureSetup
    private let pool: BufferPool
    private let status: CaptureStatus
    private let sink: CaptureSink
    /// Where a period goes when every pooled buffer is still queued: it must be read
    /// anyway (or the device overruns), and is then counted as dropped.
    private let spare: MediaBuffer
    private var failures = 0
    private var warnedAboutClock = false

    init(pcm owner: SharedPCM, raw pcm: OpaquePointer, device: String, setup: CaptureSetup, pool: BufferPool, status: CaptureStatus,
         sink: CaptureSink) {
        self.owner = owner
        self.pcm = pcm
        self.device = device
        self.setup = setup
        self.pool = pool
        self.status = status
        self.sink = sink
        spare = MediaBuffer(capacity: setup.periodFrames * setup.format.bytesPerFrame)
    }

    /// A period being filled (a read may return part of one).
    private struct Pending {
        var buffer: MediaBuffer
        var pooled: Bool
        var frames = 0
    }

    /// Runs until stopped or until the device is gone; returns why it ended.
    func run(_ thread: CaptureThread) -> SourceEnd {
        let count = Int(snd_pcm_poll_descriptors_count(pcm))
        guard count > 0 else {
            return .failed(ALSAError(device: device, operation: .read, result: count < 0 ? Int32(count) : -EINVAL).description)
        }
        var descriptors = [pollfd](repeating: pollfd(), count: count + 1)
        let filled = descriptors.withUnsafeMutableBufferPointer {
            snd_pcm_poll_descriptors(pcm, $0.baseAddress, UInt32(count))
        }
        guard filled == count else {
            return .failed(ALSAError(device: device, operation: .read, result: filled < 0 ? filled : -EINVAL).description)
        }
        descriptors[count] = pollfd(fd: thread.wakeDescriptor, events: Int16(POLLIN), revents: 0)

        var pending: Pending?
        while !thread.shouldStop {
            let ready = descriptors.withUnsafeMutableBufferPointer {
                poll($0.baseAddress, nfds_t($0.count), Self.stallMilliseconds)
            }
            if thread.shouldStop { break }
            var error: Int32 = 0
            if ready < 0 {
                if errno == EINTR { continue }
                error = -errno
            } else if ready == 0 {
                status.report("\(device): no audio for \(Self.stallMilliseconds / 1000) s; restarting capture")
                error = -EIO
            } else {
                var revents: UInt16 = 0
                let result = descriptors.withUnsafeMutableBufferPointer {
                    snd_pcm_poll_descriptors_revents(pcm, $0.baseAddress, UInt32(count), &revents)
                }
                if result < 0 {
                    error = result
                } else if revents & UInt16(POLLERR) != 0 {
                    error = stateError()
                } else if revents & UInt16(POLLIN) != 0 {
                    error = readAvailable(&pending, thread)
                }
            }
            if error != 0 {
                // A period cut by an overrun has no trustworthy time; the gap shows in
                // the next chunk's timestamp and the aligner fills it.
                pending = nil   // a pooled buffer goes back when its last reference does
                if let end = recover(from: error, thread) { return end }
            }
        }
        return .stopped
    }

    /// Reads every whole period that is ready (bounded by the ring size, so a source
    /// that is never empty, like the `null` PCM, still returns to check for `stop`).
    /// Returns 0, or the negative alsa error that interrupted reading.
    private func readAvailable(_ pending: inout Pending?, _ thread: CaptureThread) -> Int32 {
        let period = setup.periodFrames
        let bytesPerFrame = setup.format.bytesPerFrame
        for _ in 0...(setup.bufferFrames / max(period, 1) + 1) {
            if thread.shouldStop { return 0 }
            var chunk = pending ?? pool.take().map { Pending(buffer: $0, pooled: true) } ?? Pending(buffer: spare, pooled: false)
            let read = snd_pcm_readi(pcm, chunk.buffer.baseAddress + chunk.frames * bytesPerFrame,
                                     snd_pcm_uframes_t(period - chunk.frames))
            if read < 0 {
                pending = chunk
                return read == -Int(EAGAIN) ? 0 : Int32(truncatingIfNeeded: read)
            }
            chunk.frames += read
            guard chunk.frames >= period else {
                pending = chunk
                continue
            }
            pending = nil
            failures = 0
            let timestamp = firstSampleTime(framesInChunk: chunk.frames)
            if chunk.pooled {
                chunk.buffer.byteCount = chunk.frames * bytesPerFrame
                sink.deliver(AudioChunk(buffer: chunk.buffer, format: setup.format, timestamp: timestamp))
            } else {
                status.countDropped()
            }
        }
        return 0
    }

    /// When the just-read chunk's first sample was captured (see `CaptureTiming`).
    private func firstSampleTime(framesInChunk: Int) -> MonotonicInstant {
        let now = CaptureTiming.now()
        var available: snd_pcm_uframes_t = 0
        var stamp = snd_htimestamp_t()
        if snd_pcm_htimestamp(pcm, &available, &stamp) == 0 {
            let stamped = CaptureTiming.instant(stamp)
            // Zero: the driver keeps no timestamps. Far from now: not CLOCK_MONOTONIC.
            if stamped.nanoseconds != 0, abs(now.nanoseconds(since: stamped)) < 1_000_000_000 {
                return CaptureTiming.firstSample(stampedAt: stamped, framesInChunk: framesInChunk,
                                                 framesAvailable: Int(available), sampleRate: setup.format.sampleRate)
            }
        }
        if !warnedAboutClock {
            warnedAboutClock = true
            status.report("\(device): no monotonic driver timestamps; stamping audio from the system clock")
        }
        let queued = max(0, snd_pcm_avail_update(pcm))
        return CaptureTiming.firstSample(stampedAt: now, framesInChunk: framesInChunk,
                                         framesAvailable: queued, sampleRate: setup.format.sampleRate)
    }

    /// The error a POLLERR stands for, from the stream's state.
    private func stateError() -> Int32 {
        switch snd_pcm_state(pcm) {
        case SND_PCM_STATE_XRUN: -EPIPE
        case SND_PCM_STATE_SUSPENDED: -ESTRPIPE
        case SND_PCM_STATE_DISCONNECTED: -ENODEV
        default: -EIO
        }
    }

    /// Recovers from `code`; returns how the loop ends if it cannot.
    private func recover(from code: Int32, _ thread: CaptureThread) -> SourceEnd? {
        switch -code {
        case EPIPE:
            status.countOverrun()
            status.report("\(device): overrun (capture fell behind); audio was lost, its gap stays in the timestamps")
            return restart()
        case ESTRPIPE:
            status.countSuspend()
            status.report("\(device): suspended (system sleep); resuming")
            var result = snd_pcm_resume(pcm)
            var tries = 0
            // -EAGAIN: the device is still waking up. Poll briefly so stop() stays prompt.
            while result == -EAGAIN, tries < 50, !thread.shouldStop {
                usleep(100_000)
                tries += 1
                result = snd_pcm_resume(pcm)
            }
            if result == 0, snd_pcm_state(pcm) == SND_PCM_STATE_RUNNING { return nil }
            // Many capture drivers cannot resume; a fresh start works for all of them.
            return restart()
        case ENODEV, ENOENT, ENXIO:
            return .failed(ALSAError(device: device, operation: .read, result: code).description)
        default:
            return countFailure(ALSAError(device: device, operation: .read, result: code)) ?? restart()
        }
    }

    /// Prepares and starts the stream again.
    private func restart() -> SourceEnd? {
        snd_pcm_drop(pcm)
        var result = snd_pcm_prepare(pcm)
        if result >= 0 { result = snd_pcm_start(pcm) }
        guard result < 0 else { return nil }
        let error = ALSAError(device: device, operation: .recover, result: result)
        if error.code == .deviceMissing { return .failed(error.description) }
        // Not fatal yet: the next poll reports the state again and we retry.
        return countFailure(error)
    }

    private func countFailure(_ error: ALSAError) -> SourceEnd? {
        failures += 1
        status.report("\(error.description) (failure \(failures) of \(Self.maxConsecutiveFailures))")
        guard failures >= Self.maxConsecutiveFailures else { return nil }
        return .failed("\(error.description) Capture gave up after \(failures) failures in a row.")
    }
}
