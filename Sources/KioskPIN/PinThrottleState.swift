import Foundation
import KioskCore

/// The throttling state kept across restarts, in the file `pin-throttle`:
///
///     failures=6
///     locked_until=1718000000.250
///
/// `failures` counts wrong PINs in a row; `locked_until` is the wall-clock time
/// (seconds since 1970, UTC) when the current wait ends. No file: no failures.
public struct PinThrottleState: Sendable, Equatable {
    public var failures: Int
    public var lockedUntil: Double

    public init(failures: Int = 0, lockedUntil: Double = 0) {
        self.failures = failures
        self.lockedUntil = lockedUntil
    }

    /// Reads the file's text; nil when it makes no sense (the caller then assumes the
    /// worst rather than forgetting the failures).
    public init?(parsing text: String) {
        var failures: Int?
        var lockedUntil: Double?
        for line in text.split(whereSeparator: \.isNewline) {
            let parts = line.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2 else { continue }
            switch parts[0] {
            case "failures": failures = Int(parts[1]).flatMap { $0 >= 0 ? $0 : nil }
            case "locked_until": lockedUntil = Double(parts[1]).flatMap { $0.isFinite ? $0 : nil }
            default: continue
            }
        }
        guard let failures, let lockedUntil else { return nil }
        self.init(failures: failures, lockedUntil: lockedUntil)
    }

    public var encoded: String {
        "failures=\(failures)\nlocked_until=\(String(format: "%.3f", lockedUntil))\n"
    }
}
