/// When the timelapse takes a frame: the first one captured at or after each multiple of
/// the interval, on capture time (not the time the frame reached the branch), so a busy
/// camera thread never shifts the spacing.
///
/// The next frame is due one interval after the last was *due*, not after it came, so
/// the spacing does not drift by a frame period each time; after a gap longer than an
/// interval (the camera was unplugged) it starts again from the frame that ends the gap
/// instead of taking a burst of frames to catch up.
public struct TimelapseSchedule: Sendable, Equatable {
    public let intervalNanoseconds: Int64
    /// A frame this much before its time is taken (cameras jitter by a few milliseconds).
    public let earlyToleranceNanoseconds: Int64
    private var nextDue: MonotonicInstant?

    /// - Parameter intervalSeconds: At least 1.
    public init(intervalSeconds: Int) {
        intervalNanoseconds = Int64(max(1, min(intervalSeconds, 86_400))) * 1_000_000_000
        earlyToleranceNanoseconds = min(intervalNanoseconds / 4, 20_000_000)
    }

    /// Whether the frame captured at `time` is one to keep (and, if so, books the next).
    public mutating func takes(_ time: MonotonicInstant) -> Bool {
        if let nextDue, time.nanoseconds(since: nextDue) < -earlyToleranceNanoseconds { return false }
        let following = (nextDue ?? time).advanced(byNanoseconds: intervalNanoseconds)
        nextDue = time.nanoseconds(since: following) >= 0 ? time.advanced(byNanoseconds: intervalNanoseconds) : following
        return true
    }
}

/// The names of the timelapse movies: `timelapse/YYYYMMDD.mp4`, one a day, and
/// `YYYYMMDD-2.mp4`, `-3` … when a day's movie cannot be continued (the camera's size
/// or the encoder changed, or the file is damaged beyond its last whole frame).
public enum TimelapseFileName {
    public static let folderName = "timelapse"

    /// "20261129.mp4" for part 1, "20261129-2.mp4" for part 2.
    public static func name(for day: CalendarDate, part: Int = 1) -> String {
        part <= 1 ? day.folderName + ".mp4" : day.folderName + "-\(part).mp4"
    }

    /// The day and part of a timelapse movie's name; nil for any other name.
    public static func parse(_ name: some StringProtocol) -> (day: CalendarDate, part: Int)? {
        guard name.hasSuffix(".mp4") else { return nil }
        let stem = name.dropLast(4)
        let pieces = stem.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard let day = CalendarDate(folderName: pieces[0]) else { return nil }
        guard pieces.count == 2 else { return (day, 1) }
        let digits = pieces[1]
        guard !digits.isEmpty, digits.count <= 4, digits.first != "0", digits.allSatisfy({ $0.isASCII && $0.isNumber }),
              let part = Int(digits), part >= 2 else { return nil }
        return (day, part)
    }
}

extension RetentionPolicy {
    /// The timelapse movies retention deletes: those of days as old as a recording's date
    /// folder that goes (`retentionDays`); never today's, a future day's or a name that is
    /// not a timelapse movie's.
    public func expiredTimelapseFiles(_ names: [String], today: CalendarDate) -> [String] {
        guard retentionDays >= 1 else { return [] }
        return names.filter { name in
            guard let (day, _) = TimelapseFileName.parse(name) else { return false }
            return day < today && today.days(since: day) >= retentionDays
        }.sorted()
    }
}

extension CalendarDate {
    /// The local date of the instant `unixSeconds`, in a zone `utcOffsetSeconds` east of UTC.
    public init(unixSeconds: Int64, utcOffsetSeconds: Int) {
        self.init(LocalTimestamp(unixSeconds: unixSeconds, utcOffsetSeconds: utcOffsetSeconds))
    }
}
