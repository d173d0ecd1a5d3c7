/// Slows down password guessing on the web login, per user name and per client address,
/// with the PIN's back-off (`PinThrottle`): a few free attempts, then a wait that doubles.
///
/// Both keys count: guessing one user's password from many addresses is slowed by the
/// user's count, trying many users from one address by the address's. A wait in force
/// refuses the attempt before the password is checked (no hash is computed, so a flood
/// of guesses costs the board nothing). Bounded: at most `capacity` keys are tracked; the
/// ones with the oldest failure go first.
public struct LoginThrottle: Sendable {
    public struct Entry: Sendable, Equatable {
        public var failures: Int
        public var lockedUntil: Double
        public var lastFailureAt: Double
    }

    public enum Key: Hashable, Sendable {
        case user(String)
        case address(String)
    }

    public let policy: PinThrottle
    public let capacity: Int
    private var entries: [Key: Entry] = [:]
    /// Attempts refused without a check, and wrong passwords, since start (status, metrics).
    public private(set) var refusedTotal = 0
    public private(set) var failuresTotal = 0

    public init(policy: PinThrottle = .standard, capacity: Int = 4096) {
        self.policy = policy
        self.capacity = max(2, capacity)
    }

    /// Seconds to wait before `user` may try from `address` (0: now). A wait counts as a refusal.
    public mutating func admit(user: String, address: String, now: Double) -> Int {
        let wait = max(remaining(.user(user), now: now), remaining(.address(address), now: now))
        if wait > 0 { refusedTotal += 1 }
        return Int(wait.rounded(.up))
    }

    /// Counts a wrong password. Returns the wait that now applies (0: none yet).
    @discardableResult
    public mutating func fail(user: String, address: String, now: Double) -> Int {
        failuresTotal += 1
        var wait = 0
        for key in [Key.user(user), .address(address)] {
            var entry = entries[key] ?? Entry(failures: 0, lockedUntil: 0, lastFailureAt: now)
            entry.failures += 1
            entry.lastFailureAt = now
            let seconds = policy.lockoutSeconds(afterFailures: entry.failures)
            if seconds > 0 { entry.lockedUntil = now + Double(seconds) }
            wait = max(wait, seconds)
            entries[key] = entry
        }
        trim()
        return wait
    }

    /// A right password clears the user's and the address's count.
    public mutating func succeed(user: String, address: String) {
        entries[.user(user)] = nil
        entries[.address(address)] = nil
    }

    /// The entry for `key`, for tests and status.
    public func entry(_ key: Key) -> Entry? { entries[key] }

    private func remaining(_ key: Key, now: Double) -> Double {
        guard let entry = entries[key] else { return 0 }
        return policy.remainingSeconds(failures: entry.failures, lockedUntil: entry.lockedUntil, now: now)
    }

    private mutating func trim() {
        guard entries.count > capacity else { return }
        let sorted = entries.sorted { $0.value.lastFailureAt < $1.value.lastFailureAt }
        for (key, _) in sorted.prefix(entries.count - capacity) { entries[key] = nil }
    }
}
