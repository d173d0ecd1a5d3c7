/// How long to wait after wrong PINs (repeated failures slow down further
/// attempts): the first few are free, then a wait that doubles with each further miss.
///
/// With the standard policy, the 5th wrong PIN in a row costs 30 s, the 6th 60 s,
/// the 7th 120 s, and so on up to an hour, so guessing all 10,000 four-digit PINs
/// takes about a year.
public struct PinThrottle: Sendable, Equatable {
    /// Wrong PINs in a row that cost nothing.
    public var failuresBeforeLockout: Int
    /// The wait after the `failuresBeforeLockout`-th wrong PIN.
    public var firstLockoutSeconds: Int
    /// The doubling stops here.
    public var maximumLockoutSeconds: Int

    public init(failuresBeforeLockout: Int, firstLockoutSeconds: Int, maximumLockoutSeconds: Int) {
        self.failuresBeforeLockout = max(1, failuresBeforeLockout)
        self.firstLockoutSeconds = max(1, firstLockoutSeconds)
        self.maximumLockoutSeconds = max(self.firstLockoutSeconds, maximumLockoutSeconds)
    }

    /// 5 free attempts, then 30 s doubling up to one hour.
    public static let standard = PinThrottle(failuresBeforeLockout: 5, firstLockoutSeconds: 30, maximumLockoutSeconds: 3600)

    /// The wait that starts when the `failures`-th wrong PIN in a row is entered (0: none).
    public func lockoutSeconds(afterFailures failures: Int) -> Int {
        guard failures >= failuresBeforeLockout else { return 0 }
        var seconds = firstLockoutSeconds
        // Doubling in a loop (at most ~30 steps before the cap) cannot overflow.
        for _ in 0..<(failures - failuresBeforeLockout) {
            seconds *= 2
            if seconds >= maximumLockoutSeconds { return maximumLockoutSeconds }
        }
        return min(seconds, maximumLockoutSeconds)
    }

    /// Seconds still to wait, given the stored state and the wall clock now.
    ///
    /// The end of the wait is stored as wall-clock time so that it survives a restart.
    /// If the clock was set back, the stored end may lie far in the future; the wait
    /// is never longer than the current step from now.
    /// - Parameters:
    ///   - failures: Wrong PINs in a row so far.
    ///   - lockedUntil: Wall-clock seconds (since 1970) when the wait ends.
    ///   - now: Wall-clock seconds now.
    public func remainingSeconds(failures: Int, lockedUntil: Double, now: Double) -> Double {
        let step = Double(lockoutSeconds(afterFailures: failures))
        guard step > 0, lockedUntil > now else { return 0 }
        return min(lockedUntil - now, step)
    }
}

/// The answer to one PIN check, from `PinStore.verify` to `ScreenController.pinChecked`.
public enum PinCheckResult: Sendable, Equatable, CustomStringConvertible {
    /// The PIN is right; the failure count is reset.
    case right
    /// The PIN is wrong; the next attempt is possible after `waitSeconds` (0: at once).
    case wrong(waitSeconds: Int)
    /// Too many wrong PINs: the PIN was not checked; try again in `waitSeconds`.
    case throttled(waitSeconds: Int)
    /// The PIN could not be checked (the store is unreadable); `reason` says why.
    case unavailable(reason: String)

    public var description: String {
        switch self {
        case .right: "right"
        case .wrong(let wait): wait > 0 ? "wrong (wait \(wait) s)" : "wrong"
        case .throttled(let wait): "throttled (wait \(wait) s)"
        case .unavailable(let reason): "unavailable: \(reason)"
        }
    }
}
