import Foundation
import KioskCore

/// The wall-clock time of a capture instant, for the overlay's date and time: now on the
/// wall clock, less how long ago the frame was captured on the monotonic one (so a frame
/// that waited in a queue shows when it was taken, not when it was drawn).
enum WallClock {
    static func unixSeconds(of time: MonotonicInstant, clock: MonotonicClock) -> Double {
        Date().timeIntervalSince1970 - Double(clock.now().nanoseconds(since: time)) / 1e9
    }
}
