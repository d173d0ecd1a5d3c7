import Foundation
import KioskCore
import KioskRecording
import Logging

/// The library's upkeep as the foreground commands run it: retention and the disk
/// guard at start-up, hourly, and whenever free space runs low.
public enum LibraryStorage {
    public static func purger(_ configuration: Configuration, logger: Logger) -> LibraryPurger {
        LibraryPurger(layout: LibraryLayout(root: configuration.storage.mediaRoot),
                      retention: RetentionPolicy(retentionDays: configuration.storage.retentionDays),
                      guard: DiskGuardPolicy(floorBytes: configuration.storage.minFreeBytes,
                                             floorPercent: configuration.storage.minFreePercent),
                      logger: logger)
    }

    /// Video plus sound, bits per second: what one hour of recording needs.
    public static func bitrate(_ configuration: Configuration) -> Int {
        configuration.effectiveVideoBitrate + configuration.encoder.audioBitrate
    }

    /// Purges now; returns what the disk guard says about starting a recording.
    @discardableResult
    public static func purge(_ configuration: Configuration, logger: Logger, protecting: Set<CalendarDate> = []) -> StorageVerdict {
        let purger = purger(configuration, logger: logger)
        do {
            let result = try purger.purge(today: CalendarDate(LocalTimestamp(Date())), protected: protecting,
                                          bitrate: bitrate(configuration))
            if result.freedBytes > 0 { logger.notice("library: freed \(ByteCountText.text(result.freedBytes))") }
            if !result.canRecord { return .refuseToStart(result.message ?? "the disk is full: free space, then try again") }
        } catch {
            logger.error("library upkeep failed: \(error)")
        }
        return .ok
    }

    /// The recorder's storage check: below the floor → purge (never today's or the
    /// recording's day); below the hard floor after that → stop recording.
    ///
    /// It runs on the encoder thread every 2 s while recording: the free-space check is
    /// one `statvfs`, but a purge scans the whole library (~0.14 s for 43,000 files), so
    /// below the floor it purges at most once a minute rather than on every check.
    public static func check(_ configuration: Configuration, logger: Logger) -> @Sendable (Bool) -> StorageVerdict {
        check({ configuration }, logger: logger)
    }

    /// The same check, reading the configuration in effect each time (the daemon's
    /// SIGHUP reload changes retention and the floor without a restart).
    public static func check(_ current: @escaping @Sendable () -> Configuration, logger: Logger) -> @Sendable (Bool) -> StorageVerdict {
        let lastPurge = PurgeClock()
        return { recording in
            let configuration = current()
            guard recording else { return purge(configuration, logger: logger) }
            let purger = purger(configuration, logger: logger)
            guard let space = try? purger.checkSpace(bitrate: bitrate(configuration)), space.isBelowFloor else { return .ok }
            if lastPurge.due(every: 60) {
                purge(configuration, logger: logger, protecting: [CalendarDate(LocalTimestamp(Date()))])
            }
            guard let after = try? purger.checkSpace(bitrate: bitrate(configuration)), after.mustStopRecording else { return .ok }
            return .stopRecording("storage nearly full (\(ByteCountText.text(after.freeBytes)) free, below \(ByteCountText.text(after.hardFloorBytes))) "
                                  + "and nothing older is left to delete: the recording was finished to keep it playable; free space on \(configuration.storage.mediaRoot)")
        }
    }
}

/// When a purge last ran, so that a disk stuck below the floor is not rescanned every 2 s.
public final class PurgeClock: @unchecked Sendable {
    private let lock = Lock()
    private var last: Date?

    public init() {}

    /// True (and restarts the interval) when `seconds` have passed since the last time.
    public func due(every seconds: Double) -> Bool {
        lock.withLock {
            if let last, Date().timeIntervalSince(last) < seconds { return false }
            last = Date()
            return true
        }
    }
}
