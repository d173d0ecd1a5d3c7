extension Configuration {
    /// The screensaver and PIN lock.
    public struct Lock: Sendable, Equatable {
        /// Seconds without a touch on the live screen before the PIN screen appears
        /// (not while recording, taking a still or playing media).
        public var idleSeconds: Double = 60
        /// Seconds without a touch on the PIN screen before the panel goes dark; nil: never.
        public var blankSeconds: Double? = 120
        /// Wrong PINs allowed before the first wait.
        public var failuresBeforeLockout = PinThrottle.standard.failuresBeforeLockout
        /// The first wait; each further wrong PIN doubles it.
        public var lockoutSeconds = PinThrottle.standard.firstLockoutSeconds
        /// The doubling stops here.
        public var maxLockoutSeconds = PinThrottle.standard.maximumLockoutSeconds
        /// Show the PIN screen at start-up, so that a restart (or a power cut) never
        /// unlocks the device; false suits a demo.
        public var startLocked = true

        public init() {}

        /// The throttling policy these settings describe.
        public var throttle: PinThrottle {
            PinThrottle(failuresBeforeLockout: failuresBeforeLockout, firstLockoutSeconds: lockoutSeconds,
                        maximumLockoutSeconds: max(lockoutSeconds, maxLockoutSeconds))
        }
    }

    /// The keys of the `[lock]` section.
    static var lockSchema: [ConfigKey] {
        [
            .number("lock.idle_seconds", 1...86_400, unit: " seconds") { c, v in c.lock.idleSeconds = v },
            .number("lock.blank_seconds", 0...86_400, unit: " seconds (0: never blank)") { c, v in
                c.lock.blankSeconds = v == 0 ? nil : v
            },
            .integer("lock.failures_before_lockout", 1...100) { c, v in c.lock.failuresBeforeLockout = v },
            .integer("lock.lockout_seconds", 1...3600, unit: " seconds") { c, v in c.lock.lockoutSeconds = v },
            .integer("lock.max_lockout_seconds", 1...604_800, unit: " seconds") { c, v in c.lock.maxLockoutSeconds = v },
            ConfigKey(path: "lock.start_locked", allowed: "true or false") { c, value in
                guard case .boolean(let locked) = value else { return false }
                c.lock.startLocked = locked
                return true
            },
        ]
    }
}
