import CSystemd
import Foundation

/// Tells systemd how the service is doing (`Type=notify`): ready, watchdog pings,
/// reloading, stopping, and a one-line status for `systemctl status`.
///
/// Outside systemd (no `NOTIFY_SOCKET`) every call is a cheap no-op.
public struct SystemdNotifier: Sendable {
    /// How often to ping the watchdog: half of `WatchdogSec`, or nil without a watchdog.
    public let watchdogInterval: Double?

    public init() {
        var microseconds: UInt64 = 0
        if sd_watchdog_enabled(0, &microseconds) > 0, microseconds > 0 {
            watchdogInterval = Double(microseconds) / 2e6
        } else {
            watchdogInterval = nil
        }
    }

    /// Whether a service manager listens (systemd sets `NOTIFY_SOCKET`).
    public var isSupervised: Bool { ProcessInfo.processInfo.environment["NOTIFY_SOCKET"] != nil }

    public func ready(status: String) { send("READY=1\nSTATUS=\(status)") }
    public func watchdog() { send("WATCHDOG=1") }
    public func status(_ text: String) { send("STATUS=\(text)") }
    public func reloading() {
        // systemd ≥ 253 wants a monotonic timestamp with RELOADING=1; older ones ignore it.
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let microseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
        send("RELOADING=1\nMONOTONIC_USEC=\(microseconds)")
    }
    public func stopping() { send("STOPPING=1") }

    private func send(_ message: String) {
        guard isSupervised else { return }
        _ = sd_notify(0, message)
    }
}
