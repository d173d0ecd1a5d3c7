/// Decides when to tell systemd's watchdog that kioskcam is alive.
///
/// A ping from a timer proves only that the timer runs. The gate pings only when every
/// watched thread (the encoder threads, the UI loop) has made progress — its heartbeat
/// counter moved — since the last ping, so a stuck encoder or UI loop stops the pings and
/// systemd restarts the daemon after `WatchdogSec`. A thread stuck longer than
/// `reportAfterSeconds` is reported once (and once more when it recovers), so the log
/// says which part hung before systemd acts.
public struct WatchdogGate: Sendable {
    public struct Part: Sendable, Equatable {
        public var name: String
        var lastBeat: UInt64
        var lastProgress: MonotonicInstant
        var reportedStalled = false
    }

    public private(set) var parts: [Part]
    private var lastPing: MonotonicInstant?
    public let minimumPingInterval: Double
    public let reportAfterSeconds: Double

    /// What one observation asks for.
    public struct Outcome: Sendable, Equatable {
        public var ping = false
        /// Parts that just passed `reportAfterSeconds` without progress, with how long.
        public var stalled: [(name: String, seconds: Double)] = []
        /// Parts reported stalled that moved again.
        public var recovered: [String] = []

        public static func == (a: Outcome, b: Outcome) -> Bool {
            a.ping == b.ping && a.recovered == b.recovered
                && a.stalled.map(\.name) == b.stalled.map(\.name) && a.stalled.map(\.seconds) == b.stalled.map(\.seconds)
        }
    }

    /// - Parameters:
    ///   - names: The watched threads, in the order their beats are given to `observe`.
    public init(names: [String], now: MonotonicInstant, minimumPingInterval: Double = 1, reportAfterSeconds: Double = 5) {
        parts = names.map { Part(name: $0, lastBeat: 0, lastProgress: now) }
        self.minimumPingInterval = minimumPingInterval
        self.reportAfterSeconds = reportAfterSeconds
    }

    /// Takes the threads' current heartbeat counters.
    /// - Parameter beats: One counter per part, in `names` order (a missing one counts as
    ///   no progress).
    public mutating func observe(_ beats: [UInt64], now: MonotonicInstant) -> Outcome {
        var outcome = Outcome()
        for index in parts.indices {
            let beat = index < beats.count ? beats[index] : parts[index].lastBeat
            if beat != parts[index].lastBeat {
                parts[index].lastBeat = beat
                parts[index].lastProgress = now
                if parts[index].reportedStalled {
                    parts[index].reportedStalled = false
                    outcome.recovered.append(parts[index].name)
                }
            } else {
                let quiet = now.seconds(since: parts[index].lastProgress)
                if quiet >= reportAfterSeconds, !parts[index].reportedStalled {
                    parts[index].reportedStalled = true
                    outcome.stalled.append((parts[index].name, quiet))
                }
            }
        }
        let everyPartMoved = parts.allSatisfy { part in lastPing.map { part.lastProgress > $0 } ?? true }
        let due = lastPing.map { now.seconds(since: $0) >= minimumPingInterval } ?? true
        if everyPartMoved && due {
            outcome.ping = true
            lastPing = now
        }
        return outcome
    }
}
