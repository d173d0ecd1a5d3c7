import Foundation

/// The local time zone as the C library reads it (`TZ`, else `/etc/localtime`): the offset
/// from UTC and the abbreviation in force at an instant.
///
/// Why not `TimeZone.current`: on Linux, Foundation's time zones are ICU's, and asking one
/// for an offset loads ICU's zone code and data, about 1.7 MiB resident in every
/// recording for the date in a file name (pagemap, `kioskcam record`). glibc's
/// `localtime_r` reads the same zoneinfo with a few KiB. `TimeZone` stays for the zones a
/// caller names (tests compare the two).
public enum LocalZone {
    public struct Offset: Sendable, Equatable {
        /// Seconds east of UTC.
        public var seconds: Int
        /// "CET", "CEST", "UTC": what the overlay's `%Z` shows.
        public var abbreviation: String

        public static let utc = Offset(seconds: 0, abbreviation: "UTC")
    }

    /// The offset in force at `unixSeconds`. UTC when the C library cannot say (a moment
    /// beyond `time_t`'s years, a zone file that gives more than a day's offset).
    public static func offset(atUnixSeconds unixSeconds: Int64) -> Offset {
        var time = time_t(clamping: unixSeconds)
        var fields = tm()
        guard localtime_r(&time, &fields) != nil else { return .utc }
        let seconds = Int(fields.tm_gmtoff)
        guard abs(seconds) <= 86_400 else { return .utc }
        let abbreviation = fields.tm_zone.map { String(cString: $0) } ?? ""
        return Offset(seconds: seconds, abbreviation: abbreviation.isEmpty ? "UTC" : abbreviation)
    }

    /// The offset in force at `date`.
    public static func offset(at date: Date) -> Offset {
        offset(atUnixSeconds: wholeSeconds(date))
    }

    /// `date` as whole seconds since 1970, rounded down; 0 for a date that is not a number
    /// and clamped to ±1e15 s (30 million years), so no caller's arithmetic overflows.
    public static func wholeSeconds(_ date: Date) -> Int64 {
        let seconds = date.timeIntervalSince1970
        guard seconds.isFinite else { return 0 }
        return Int64(max(-1e15, min(1e15, seconds.rounded(.down))))
    }
}
