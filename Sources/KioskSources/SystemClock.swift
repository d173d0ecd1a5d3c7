import Glibc
import KioskCore

/// CLOCK_MONOTONIC — the clock V4L2 buffer timestamps and ALSA's monotonic
/// timestamps use, so every source shares one time line.
public struct SystemClock: MonotonicClock {
    public init() {}

    public func now() -> MonotonicInstant {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return MonotonicInstant(nanoseconds: Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec))
    }

    /// Sleeps until `instant` (absolute, so periodic loops do not drift).
    public static func sleep(until instant: MonotonicInstant) {
        var deadline = timespec(tv_sec: Int(instant.nanoseconds / 1_000_000_000),
                                tv_nsec: Int(instant.nanoseconds % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nil) == EINTR {}
    }
}
