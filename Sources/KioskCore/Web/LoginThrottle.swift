/// Slows down password guessing on the web login, per user name and per client address,
/// with the PIN's back-off (`PinThrottle`): a few free attempts, then a wait that doubles.
///
/// Both keys count: guessing one user's password from many addresses is slowed by the
/// user's count, trying many users from one address by the address's. A wait in force
/// refuses the attempt before the password is checked (no hash is computed, so a flood
/// of guesses costs the board nothing). Bounded: at most `capacity` keys are tracked; the
/// ones not locked and with the oldest failure go first.
///
/// A check takes 0.1–0.3 s (PBKDF2) and is counted when it ends, so guesses sent in
/// parallel would all be admitted before the first miss counts: `admit` also counts the
/// checks in flight, and lets a key have only as many as it has free attempts left (one
/// once they are spent). Every admitted check ends in `fail`, `succeed` or `release`.
///
/// A user's lock would also lock out the user's own NVR, and anyone may cause it by
/// guessing: so an address the user logged in from within `knownForSeconds` is not held
/// by the user's lock (its own address count still applies), and a right password from
/// there while the user is locked leaves the user's count as it is, so the guesser gains
/// nothing from the NVR's logins.
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
    /// Checks admitted and not yet ended, per key (bounded by the connections).
    private var inFlight: [Key: Int] = [:]
    /// When each user last logged in from each address (at most `capacity`, oldest go).
    private var known: [KnownPair: Double] = [:]
    public static let knownForSeconds = 7 * 86_400.0

    private struct KnownPair: Hashable, Sendable {
        var user: String
        var address: String
    }
    /// Attempts refused without a check, and wrong passwords, since start (status, metrics).
    public private(set) var refusedTotal = 0
    public private(set) var failuresTotal = 0

    public init(policy: PinThrottle = .standard, capacity: Int = 4096) {
        self.policy = policy
        self.capacity = max(2, capacity)
    }

    /// Seconds to wait before `user` may try from `address` (0: now, and the check is
    /// counted as in flight until `fail`, `succeed` or `release`). A wait counts as a
    /// refusal; while a key's free attempts are all in flight, the wait is one second.
    public mutating func admit(user: String, address: String, now: Double) -> Int {
        let both = [Key.user(user), .address(address)]
        // A known address answers to its own count only.
        let holding = isKnown(user: user, address: address, now: now) ? [Key.address(address)] : both
        var wait = holding.map { remaining($0, now: now) }.max() ?? 0
        if wait == 0, holding.contains(where: { inFlight[$0, default: 0] >= checksAllowedInFlight($0) }) { wait = 1 }
        guard wait == 0 else {
            refusedTotal += 1
            return Int(wait.rounded(.up))
        }
        for key in both { inFlight[key, default: 0] += 1 }
        return 0
    }

    /// An admitted check that ended neither right nor wrong (no users, the file unreadable).
    public mutating func release(user: String, address: String) {
        end([.user(user), .address(address)])
    }

    /// Counts a wrong password. Returns the wait that now applies (0: none yet).
    @discardableResult
    public mutating func fail(user: String, address: String, now: Double) -> Int {
        end([.user(user), .address(address)])
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

    /// A right password clears the address's count, and the user's unless the user is
    /// locked (a known address got through), and makes the address known for the user.
    public mutating func succeed(user: String, address: String, now: Double) {
        end([.user(user), .address(address)])
        if remaining(.user(user), now: now) == 0 { entries[.user(user)] = nil }
        entries[.address(address)] = nil
        known[KnownPair(user: user, address: address)] = now
        if known.count > capacity {
            for (pair, _) in known.sorted(by: { $0.value < $1.value }).prefix(known.count - capacity) { known[pair] = nil }
        }
    }

    /// The entry for `key`, for tests and status.
    public func entry(_ key: Key) -> Entry? { entries[key] }

    private func isKnown(user: String, address: String, now: Double) -> Bool {
        guard let at = known[KnownPair(user: user, address: address)] else { return false }
        return now - at <= Self.knownForSeconds
    }

    private func remaining(_ key: Key, now: Double) -> Double {
        guard let entry = entries[key] else { return 0 }
        return policy.remainingSeconds(failures: entry.failures, lockedUntil: entry.lockedUntil, now: now)
    }

    /// Checks a key may have in flight: its free attempts left, at least one.
    private func checksAllowedInFlight(_ key: Key) -> Int {
        max(1, policy.failuresBeforeLockout - (entries[key]?.failures ?? 0))
    }

    private mutating func end(_ keys: [Key]) {
        for key in keys {
            guard let count = inFlight[key] else { continue }
            inFlight[key] = count > 1 ? count - 1 : nil
        }
    }

    /// Over capacity, the entries that lock nothing go first, oldest failure first: a
    /// flood of other names and addresses must not evict a lock in force.
    private mutating func trim() {
        guard entries.count > capacity else { return }
        let sorted = entries.sorted {
            ($0.value.failures >= policy.failuresBeforeLockout ? 1 : 0, $0.value.lastFailureAt)
                < ($1.value.failures >= policy.failuresBeforeLockout ? 1 : 0, $1.value.lastFailureAt)
        }
        for (key, _) in sorted.prefix(entries.count - capacity) { entries[key] = nil }
    }
}
