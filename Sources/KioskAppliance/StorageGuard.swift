import Foundation
import KioskCore
import KioskRecording
import Logging

/// The disk guard and retention on a thread of their own.
///
/// The recorder asks every 2 s, on its encoder thread, whether it may go on; a purge
/// scans and deletes whole days (0.1 s for 43,000 files, far longer on a slow SD card),
/// and frames would pile up and drop while it ran there. So the guard measures free
/// space on its own thread every 2 s, purges when space runs low (at most once a
/// minute, never today's day) and every hour for retention, and the encoder thread only
/// reads its last answer. Before a recording starts the check runs in full on the
/// caller's thread (a command thread, never the encoder), so a start below the floor
/// purges first and is refused only if that does not help.
public final class StorageGuard: @unchecked Sendable {
    private let configuration: @Sendable () -> Configuration
    private let logger: Logger
    private let lock = Lock()
    private var verdict: StorageVerdict = .ok   // guarded by `lock`
    private var thread: RepeatingThread?
    // Owned by the guard's thread.
    private var lastLowSpacePurge: Date?
    private var lastRetention = Date()

    /// Seconds between measurements, between low-space purges, and between retention runs.
    static let measureInterval = 2.0
    static let lowSpacePurgeInterval = 60.0
    static let retentionInterval = 3600.0

    /// - Parameter configuration: The configuration in effect, read at each round (SIGHUP
    ///   changes retention and the floor without a restart).
    public init(configuration: @escaping @Sendable () -> Configuration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        thread = nil
        thread = RepeatingThread(name: "kioskcam.storage", interval: Self.measureInterval) { [weak self] woken in
            self?.round(retentionNow: woken)
        }
    }

    /// The recorder's `storageCheck`.
    public var check: @Sendable (_ recording: Bool) -> StorageVerdict {
        { [self] recording in recording ? lock.withLock { verdict } : checkBeforeStart() }
    }

    /// Starts the guard's thread; its first round measures at once.
    public func start() { thread?.start() }

    /// Stops the thread and waits for it (a purge in progress finishes first). Blocking.
    public func stop() { thread?.stop() }

    /// Asks for a retention and disk-guard purge on the guard's thread soon (after a
    /// reload, say); returns at once.
    public func purgeSoon() { thread?.wake() }

    /// Runs a full purge now, on the caller's thread: what the disk guard says about starting.
    func checkBeforeStart() -> StorageVerdict {
        let verdict = LibraryStorage.purge(configuration(), logger: logger)
        if case .refuseToStart = verdict {} else { lock.withLock { self.verdict = .ok } }
        return verdict
    }

    private func round(retentionNow: Bool) {
        let now = Date()
        if retentionNow || now.timeIntervalSince(lastRetention) >= Self.retentionInterval {
            lastRetention = now
            LibraryStorage.purge(configuration(), logger: logger, protecting: [CalendarDate(LocalTimestamp(now))])
        }
        let measured = measure(now: now)
        lock.withLock { verdict = measured }
    }

    /// Below the floor: purge (at most once a minute, never today's day). Below the hard
    /// floor after that: the recording must end now, while the file can still be finished.
    private func measure(now: Date) -> StorageVerdict {
        let configuration = configuration()
        let purger = LibraryStorage.purger(configuration, logger: logger)
        let bitrate = LibraryStorage.bitrate(configuration)
        guard let space = try? purger.checkSpace(bitrate: bitrate), space.isBelowFloor else { return .ok }
        if lastLowSpacePurge.map({ now.timeIntervalSince($0) >= Self.lowSpacePurgeInterval }) ?? true {
            lastLowSpacePurge = now
            LibraryStorage.purge(configuration, logger: logger, protecting: [CalendarDate(LocalTimestamp(now))])
        }
        guard let after = try? purger.checkSpace(bitrate: bitrate), after.mustStopRecording else { return .ok }
        return .stopRecording("storage nearly full (\(ByteCountText.text(after.freeBytes)) free, below \(ByteCountText.text(after.hardFloorBytes))) "
                              + "and nothing older is left to delete: the recording was finished to keep it playable; free space on \(configuration.storage.mediaRoot)")
    }
}
