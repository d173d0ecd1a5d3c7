import Foundation
import Glibc
import KioskCore
import Logging
import SystemPackage

/// The Prometheus textfile node_exporter's textfile collector reads.
///
/// Each write goes to a temp file in the same folder and is renamed over the old one, so
/// the collector never reads half a file (it would drop every metric in it).
public struct MetricsTextfile: Sendable {
    public let path: String

    public init(path: String) { self.path = path }

    /// Writes `snapshot` atomically, mode 0644 (node_exporter runs as its own user).
    /// - Throws: `MetricsWriteError` naming the file and the fix (a missing folder, no permission, a full disk).
    public func write(_ snapshot: MetricsSnapshot) throws(MetricsWriteError) {
        let bytes = Array(MetricsFormatter.text(snapshot).utf8)
        let folder = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        // A leading dot and no .prom suffix: the collector ignores the temp file.
        let temp = folder + "/." + name + ".tmp-\(getpid())"
        let fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            let error = Errno(rawValue: errno)
            let fix = error == .noSuchFileOrDirectory
                ? "create the folder \(folder) (installing prometheus-node-exporter does) or set control.metrics_file = \"\""
                : "check the folder's permissions or set control.metrics_file"
            throw MetricsWriteError(path: path, message: "cannot write the metrics file \(path): \(error); \(fix)")
        }
        fchmod(fd, 0o644)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        let writeError = Errno(rawValue: errno)
        close(fd)
        guard written == bytes.count else {
            unlink(temp)
            throw MetricsWriteError(path: path, message: "cannot write the metrics file \(path): \(writeError); is the disk full?")
        }
        guard rename(temp, path) == 0 else {
            let error = Errno(rawValue: errno)
            unlink(temp)
            throw MetricsWriteError(path: path, message: "cannot replace the metrics file \(path): \(error)")
        }
    }

    /// Removes the file, so a stopped daemon exports nothing rather than stale numbers.
    public func remove() { unlink(path) }
}

public struct MetricsWriteError: Error, CustomStringConvertible, Equatable {
    public var path: String
    public var message: String
    public var description: String { message }
}

/// Rewrites the metrics file every `interval` seconds on its own thread, from a snapshot
/// the daemon provides. A failing write is logged once (and again when it changes or
/// recovers), not every few seconds. `stop()` ends the thread and removes the file.
public final class MetricsTextfileWriter: Sendable {
    public let file: MetricsTextfile
    public let intervalSeconds: Double
    private let thread: RepeatingThread
    private let stopped = Locked(false)

    /// Starts writing at once, then every `intervalSeconds`.
    public init(path: String, intervalSeconds: Double, logger: Logger, snapshot: @escaping @Sendable () -> MetricsSnapshot) {
        let file = MetricsTextfile(path: path)
        self.file = file
        self.intervalSeconds = max(0.05, intervalSeconds)
        // The last write's error, so that a failure is logged once, not every round.
        let lastError = Locked<String?>(nil)
        thread = RepeatingThread(name: "kioskcam.metrics", interval: self.intervalSeconds) { _ in
            Self.writeOnce(file, snapshot(), lastError: lastError, logger: logger)
        }
        thread.start()
    }

    private static func writeOnce(_ file: MetricsTextfile, _ snapshot: MetricsSnapshot, lastError: Locked<String?>, logger: Logger) {
        do {
            try file.write(snapshot)
            if lastError.withLock({ last in defer { last = nil }; return last != nil }) {
                logger.notice("metrics file written again", metadata: ["path": "\(file.path)"])
            }
        } catch {
            let message = error.message
            let repeated = lastError.withLock { last in defer { last = message }; return last == message }
            if !repeated { logger.warning("\(message)") }
        }
    }

    /// Ends the thread (waiting for a write in progress) and removes the file. Idempotent;
    /// blocking.
    public func stop() {
        guard !stopped.withLock({ stopped in defer { stopped = true }; return stopped }) else { return }
        thread.stop()
        file.remove()
    }
}
