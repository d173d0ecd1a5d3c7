import Glibc
import KioskCore

/// Capture-time arithmetic for ALSA chunks, kept apart so it can be checked by hand.
enum CaptureTiming {
    /// The capture time of a chunk's first sample.
    ///
    /// `snd_pcm_htimestamp` returns a pair that belongs together: the instant `stampedAt`
    /// at which the hardware pointer stood where `framesAvailable` frames were captured
    /// but not yet read by us. We have just read the chunk, so the ring buffer holds, in
    /// capture order: the chunk's `framesInChunk` frames (now ours), then the
    /// `framesAvailable` frames still queued, the last of which was captured at
    /// `stampedAt`. The chunk's first sample is therefore
    /// `framesInChunk + framesAvailable` frames older than `stampedAt`.
    ///
    /// The same formula serves the fallback (no driver timestamp): `stampedAt` is "now"
    /// from CLOCK_MONOTONIC and `framesAvailable` the frames still queued, which is the
    /// chunk's duration back from now plus whatever is still waiting behind it.
    static func firstSample(stampedAt: MonotonicInstant, framesInChunk: Int, framesAvailable: Int,
                            sampleRate: Int) -> MonotonicInstant {
        let frames = Int64(max(0, framesInChunk) + max(0, framesAvailable))
        return stampedAt.advanced(byNanoseconds: -(frames * 1_000_000_000 / Int64(max(sampleRate, 1))))
    }

    /// CLOCK_MONOTONIC now, the clock every kioskcam source stamps with.
    static func now() -> MonotonicInstant {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return instant(time)
    }

    static func instant(_ time: timespec) -> MonotonicInstant {
        MonotonicInstant(nanoseconds: Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec))
    }
}
