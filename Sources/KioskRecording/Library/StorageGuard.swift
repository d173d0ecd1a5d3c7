import Foundation
import KioskCore
import Logging

/// The disk guard and retention on a thread of their own.
///
/// The recorder asks every 2 s, on its encoder thread, whether it may go on; a purge
/// scans and deletes whole days (0.1 s for 43,000 files, far longer on a slow SD card),
/// and frames would pile up and drop while it ran there. So the guard measures free
/// space on its own thread every 2 s, purges when space runs low (at most once a
/// minute, never today's day) and at start and every hour for retention, and the encoder thread only
/// reads its last answer. Before a recording starts the check runs in full on the
/// caller's thread (a command thread, never the encoder), so a start below the floor
/// purges first and is refused only if that does not help.
public final class StorageGuard: Sendable {
    private let configuration: @Sendable () -> Configuration
    private let logger: Logger
    /// The last measurement's answer, which the encoder thread reads.
    private let verdict = Locked(StorageVerdict.ok)
    private let thread: RepeatingThread
    /// When the guard's thread last purged (only that thread uses it).
    private struct Schedule {
        var lastLowSpacePurge: Date?
        /// Never: retention runs in the first round, at start-up (as the seed purges at
        /// launch), not only an hour later — a board off for a month starts clean.
        var lastRetention = Date.distantPast
    }

    /// Seconds between measurements, between low-space purges, and between retention runs.
    static let measureInterval = 2.0
    static let lowSpacePurgeInterval = 60.0
    static let retentionInterval = 3600.0

    /// - Parameter configuration: The configuration in effect, read at each round (SIGHUP
    ///   changes retention and the floor without a restart).
    public init(configuration: @escaping @Sendable () -> Configuration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        let verdict = verdict
        let schedule = Locked(Schedule())
        thread = RepeatingThread(name: "kioskcam.storage", interval: Self.measureInterval) { woken in
            let measured = Self.round(retentionNow: woken, configuration(), schedule: schedule, logger: logger)
            verdict.withLock { $0 = measured }
        }
    }

    /// The recorder's `storageCheck`.
    public var check: @Sendable (_ recording: Bool) -> StorageVerdict {
        { [self] recording in recording ? verdict.withLock { $0 } : checkBeforeStart() }
    }

    /// Starts the guard's thread; its first round measures at once.
    public func start() { thread.start() }

    /// Stops the thread and waits for it (a purge in progress finishes first). Blocking.
    public func stop() { thread.stop() }

    /// Asks for a retention and disk-guard purge on the guard's thread soon (after a
    /// reload, say); returns at once.
    public func purgeSoon() { thread.wake() }

    /// Runs a full purge now, on the caller's thread: what the disk guard says about starting.
    func checkBeforeStart() -> StorageVerdict {
        let verdict = LibraryStorage.purge(configuration(), logger: logger)
        if case .refuseToStart = verdict {} else { self.verdict.withLock { $0 = .ok } }
        return verdict
    }

    /// One round of the guard's thread: retention when due (or woken), then a measurement.
    private static func round(retentionNow: Bool, _ configuration: Configuration, schedule: Locked<Schedule>,
                              logger: Logger) -> StorageVerdict {
        let now = Date()
        let retentionDue = schedule.withLock { schedule -> Bool in
            guard retentionNow || now.timeIntervalSince(schedule.lastRetention) >= retentionInterval else { return false }
            schedule.lastRetention = now
            return true
        }
        if retentionDue {
            LibraryStorage.purge(configuration, logger: logger, protecting: [CalendarDate(LocalTimestamp(now))])
        }
        return measure(now: now, configuration, schedule: schedule, logger: logger)
    }

    /// Below the floor: purge (at most once a minute, never today's day). Below the hard
    /// floor after that: the recording must end now, while the file can still be finished.
    private static func measure(now: Date, _ configuration: Configuration, schedule: Locked<Schedule>,
                                logger: Logger) -> StorageVerdict {
        let purger = LibraryStorage.purger(configuration, logger: logger)
        let bitrate = LibraryStorage.bitrate(configuration)
        guard let space = try? purger.checkSpace(bitrate: bitrate), space.isBelowFloor else { return .ok }
        let purgeDue = schedule.withLock { schedule -> Bool in
            guard schedule.lastLowSpacePurge.map({ now.timeIntervalSince($0) >= lowSpacePurgeInterval }) ?? true else { return false }
            schedule.lastLowSpacePurge = now
            return true
        }
        if purgeDue {
            LibraryStorage.purge(configuration, logger: logger, protecting: [CalendarDate(LocalTimestamp(now))])
        }
        guard let after = try? purger.checkSpace(bitrate: bitrate), after.mustStopRecording else { return .ok }
        return .stopRecording("storage nearly full (\(ByteCountText.text(after.freeBytes)) free, below \(ByteCountText.text(after.hardFloorBytes))) "
                              + "and nothing older is left to delete: the recording was finished to keep it playable; free space on \(configuration.storage.mediaRoot)")
    }
}
