import Foundation
import KioskCore
import Logging

/// The library's upkeep: the purger for a configuration, and a purge now (retention and
/// the disk guard). `StorageGuard` runs it on a schedule, off the encoder thread.
public enum LibraryStorage {
    /// The purger for `configuration`; with uploads on, it holds back the files the
    /// saved upload queue lists (read now, so `kioskcam purge` without a daemon holds them too).
    public static func purger(_ configuration: Configuration, logger: Logger) -> LibraryPurger {
        var purger = LibraryPurger(layout: LibraryLayout(root: configuration.storage.mediaRoot),
                      retention: RetentionPolicy(retentionDays: configuration.storage.retentionDays,
                                                 eventRetentionDays: configuration.storage.eventRetentionDays),
                      guard: DiskGuardPolicy(floorBytes: configuration.storage.minFreeBytes,
                                             floorPercent: configuration.storage.minFreePercent),
                      logger: logger)
        if configuration.upload.isEnabled {
            purger.uploadHold = UploadQueueStore(stateDirectory: configuration.control.stateDirectory).hold()
        }
        return purger
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
}
