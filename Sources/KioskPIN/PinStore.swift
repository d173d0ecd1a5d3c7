import Foundation
import KioskCore

/// What `kioskcam pin status` shows; never the PIN or its hash.
public struct PinStatus: Sendable, Equatable {
    /// No PIN was ever set: the factory default (1234) unlocks the screen.
    public var isDefault: Bool
    /// Wrong PINs in a row.
    public var failures: Int
    /// Seconds before the next attempt is checked (0: now).
    public var waitSeconds: Int
    /// PBKDF2 iterations of the stored hash (nil for the factory default).
    public var iterations: Int?
}

/// The PIN lock's storage: a salted slow hash and the throttling state, in
/// root-only files in the state directory (`[control] state_directory`):
///
/// - `pin` — one line, `pbkdf2-sha256$<iterations>$<salt base64>$<hash base64>` (see
///   `PinHash`), mode 0600. Missing: the factory-default PIN 1234 is in force.
/// - `pin-throttle` — failures in a row and when the current wait ends (see
///   `PinThrottleState`), mode 0600. Missing: no failures.
/// - `pin.lock` — an empty file to `flock`, so that the daemon and the CLI can use the
///   store at the same time.
///
/// The directory is created with mode 0700 when missing. Files are replaced
/// atomically (temp, fsync, rename). Every call re-reads the files, so a PIN set by
/// `kioskcam pin set` applies to the running daemon's next check. The PIN and the hash
/// never appear in errors or logs.
public struct PinStore: Sendable {
    /// In force until a PIN is set.
    public static let factoryDefaultPIN = "1234"
    /// PINs have exactly this many digits.
    public static let length = PinEntry.length

    public let directory: String
    public let throttle: PinThrottle
    /// PBKDF2 iterations for PINs set from now on.
    public let iterations: Int

    public var pinPath: String { directory + "/pin" }
    public var throttlePath: String { directory + "/pin-throttle" }
    public var lockPath: String { directory + "/pin.lock" }

    /// - Parameters:
    ///   - directory: The state directory, e.g. `Configuration.control.stateDirectory`.
    ///   - throttle: The waiting policy, e.g. `Configuration.lock.throttle`.
    ///   - iterations: PBKDF2 iterations for new hashes (at least 100,000).
    public init(directory: String, throttle: PinThrottle = .standard, iterations: Int = PinHash.defaultIterations) {
        self.directory = directory.count > 1 && directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        self.throttle = throttle
        self.iterations = max(PinHash.minimumIterations, iterations)
    }

    // MARK: Rules for a new PIN

    /// Whether `pin` is one of the first guesses anyone tries: one digit four times
    /// (0000 … 9999), or four digits counting up or down by one (0123 … 6789,
    /// 9876 … 3210). The factory default 1234 is one of them.
    public static func isTrivial(_ pin: String) -> Bool {
        let digits = pin.compactMap(\.wholeNumberValue)
        guard digits.count == pin.count, digits.count > 1 else { return false }
        let steps = Set(zip(digits, digits.dropFirst()).map { $1 - $0 })
        return steps == [0] || steps == [1] || steps == [-1]
    }

    /// Checks a new PIN.
    /// - Parameter allowTrivial: Accept PINs that `isTrivial` refuses (`--force`).
    /// - Throws: `PinStoreError.invalidPIN` unless it is exactly four ASCII digits;
    ///   `.trivialPIN` for an easy guess.
    public static func validate(_ pin: String, allowTrivial: Bool = false) throws(PinStoreError) {
        guard pin.utf8.count == length, pin.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            throw PinStoreError(.invalidPIN, operation: "set the PIN", detail: "a PIN is exactly \(length) digits 0–9",
                                hint: "enter \(length) digits and nothing else")
        }
        guard allowTrivial || !isTrivial(pin) else {
            throw PinStoreError(.trivialPIN, operation: "set the PIN",
                                detail: "that PIN is among the first anyone would guess (one digit repeated, or digits counting up or down)",
                                hint: "choose another, or give --force to use it anyway")
        }
    }

    // MARK: Operations

    /// Stores a new PIN and clears the failure count.
    /// - Parameters:
    ///   - pin: Four digits.
    ///   - allowTrivial: Accept an easy guess such as 0000 or 1234.
    /// - Throws: `PinStoreError`: `.invalidPIN`, `.trivialPIN`, or a file error naming
    ///   the path (`.permissionDenied`: run as root or check [control] state_directory).
    public func setPIN(_ pin: String, allowTrivial: Bool = false) throws(PinStoreError) {
        try Self.validate(pin, allowTrivial: allowTrivial)
        try StateFiles.ensureDirectory(directory)
        let hash = try PinHash(pin: pin, iterations: iterations)
        try StoreLock.holding(lockPath) { () throws(PinStoreError) in
            try StateFiles.writeAtomically(hash.encoded, to: pinPath, directory: directory)
            try StateFiles.remove(throttlePath, directory: directory)
        }
    }

    /// Checks a PIN, counting a wrong one towards the throttling wait.
    ///
    /// While a wait runs the PIN is not checked at all (`.throttled`), so guessing
    /// costs the full wait. A right PIN clears the failure count.
    /// - Parameters:
    ///   - pin: What was typed (anything that is not the PIN counts as wrong).
    ///   - now: The wall clock (injected by tests).
    /// - Returns: `.right`, `.wrong(waitSeconds:)` (0: try again at once) or `.throttled(waitSeconds:)`.
    /// - Throws: `PinStoreError` when the files cannot be read or written, or the PIN file is corrupt.
    public func verify(_ pin: String, now: Date = Date()) throws(PinStoreError) -> PinCheckResult {
        try StateFiles.ensureDirectory(directory)
        return try StoreLock.holding(lockPath) { () throws(PinStoreError) in try verifyHoldingLock(pin, now: now) }
    }

    private func verifyHoldingLock(_ pin: String, now: Date) throws(PinStoreError) -> PinCheckResult {
        let clock = now.timeIntervalSince1970
        let (stored, garbled) = try readThrottleState(now: clock)
        var state = stored
        let wait = throttle.remainingSeconds(failures: state.failures, lockedUntil: state.lockedUntil, now: clock)
        if wait > 0 {
            if garbled || state.lockedUntil - clock > wait {
                // The clock went back: keep the wait at one step from now, for good.
                state.lockedUntil = clock + wait
                try writeThrottleState(state)
            }
            return .throttled(waitSeconds: Int(wait.rounded(.up)))
        }
        let right: Bool
        if let text = try StateFiles.read(pinPath) {
            right = try PinHash(parsing: text, path: pinPath).matches(pin)
        } else {
            right = constantTimeEqual(Array(pin.utf8), Array(Self.factoryDefaultPIN.utf8))
        }
        if right {
            if state.failures != 0 { try StateFiles.remove(throttlePath, directory: directory) }
            return .right
        }
        state.failures += 1
        let lockout = throttle.lockoutSeconds(afterFailures: state.failures)
        state.lockedUntil = clock + Double(lockout)
        try writeThrottleState(state)
        return .wrong(waitSeconds: lockout)
    }

    /// Whether the factory default is in force, and the throttling state. Reads only.
    /// - Throws: `PinStoreError` when the files cannot be read (usually: not root) or the PIN file is corrupt.
    public func status(now: Date = Date()) throws(PinStoreError) -> PinStatus {
        let clock = now.timeIntervalSince1970
        let text = try StateFiles.read(pinPath)
        let hash = try text.map { (text) throws(PinStoreError) in try PinHash(parsing: text, path: pinPath) }
        let (state, _) = try readThrottleState(now: clock)
        let wait = throttle.remainingSeconds(failures: state.failures, lockedUntil: state.lockedUntil, now: clock)
        return PinStatus(isDefault: hash == nil, failures: state.failures, waitSeconds: Int(wait.rounded(.up)),
                         iterations: hash?.iterations)
    }

    /// Whether the factory-default PIN is in force (for `ScreenStatus.defaultPinWarning`).
    /// - Throws: `PinStoreError` when the state directory cannot be looked at.
    public func isDefault() throws(PinStoreError) -> Bool {
        try !StateFiles.exists(pinPath)
    }

    // MARK: Throttle file

    /// The stored state, and whether the file was garbled (the state is then made up and
    /// should be written back).
    private func readThrottleState(now: Double) throws(PinStoreError) -> (PinThrottleState, garbled: Bool) {
        guard let text = try StateFiles.read(throttlePath) else { return (PinThrottleState(), false) }
        if let state = PinThrottleState(parsing: text) { return (state, false) }
        // Only root can write here, and writes are atomic; if it is garbled anyway, wait
        // as after the first lockout rather than forget the failures.
        let failures = throttle.failuresBeforeLockout
        let state = PinThrottleState(failures: failures, lockedUntil: now + Double(throttle.lockoutSeconds(afterFailures: failures)))
        return (state, true)
    }

    private func writeThrottleState(_ state: PinThrottleState) throws(PinStoreError) {
        try StateFiles.writeAtomically(state.encoded, to: throttlePath, directory: directory)
    }
}
