/// A day of the proleptic Gregorian calendar, with no time and no time zone: what a
/// library date folder (`YYYYMMDD`) is named after.
///
/// Retention works in these dates, never in seconds, so month ends, leap days and
/// daylight-saving changes (a 23- or 25-hour day) cannot shift a deletion by a day.
/// Arithmetic is Howard Hinnant's days-from-civil / civil-from-days.
public struct CalendarDate: Comparable, Hashable, Sendable, CustomStringConvertible {
    public let year: Int
    public let month: Int
    public let day: Int

    /// Day numbers are kept within ±1e9 (about ±2.7 million years), so no arithmetic on
    /// a date can overflow, whatever a caller adds.
    static let dayNumberLimit = 1_000_000_000

    /// A valid date, or nil (month outside 1…12, day outside the month).
    public init?(year: Int, month: Int, day: Int) {
        guard (1...12).contains(month), (1...LocalTimestamp.daysIn(month: month, year: year)).contains(day),
              abs(year) < 1_000_000 else { return nil }
        (self.year, self.month, self.day) = (year, month, day)
    }

    /// Parses a date folder's name: exactly 8 ASCII digits `YYYYMMDD` forming a valid
    /// date. "2026-01-01", "20261332", "202601011" and "notes" give nil.
    public init?(folderName: some StringProtocol) {
        var value = 0
        var count = 0
        for byte in folderName.utf8 {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), count < 8 else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
            count += 1
        }
        guard count == 8 else { return nil }
        self.init(year: value / 10_000, month: value / 100 % 100, day: value % 100)
    }

    /// The day `daysSince1970` days after 1970-01-01 (negative: before).
    public init(daysSince1970: Int) {
        let days = min(max(daysSince1970, -Self.dayNumberLimit), Self.dayNumberLimit)
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    }

    /// The date part of a local timestamp. Out-of-range fields roll over the way a
    /// calendar would (month 13 is January of the next year, day 32 of January is
    /// February 1st), so any timestamp gives a date.
    public init(_ timestamp: LocalTimestamp) {
        let clampedYear = min(max(timestamp.year, -1_000_000), 1_000_000)
        let monthsFromZero = clampedYear * 12 + min(max(timestamp.month, -1_000_000), 1_000_000) - 1
        let year = monthsFromZero >= 0 ? monthsFromZero / 12 : (monthsFromZero - 11) / 12
        let month = monthsFromZero - year * 12 + 1
        let firstOfMonth = Self.daysFromCivil(year: year, month: month, day: 1)
        self.init(daysSince1970: firstOfMonth + min(max(timestamp.day, -Self.dayNumberLimit), Self.dayNumberLimit) - 1)
    }

    /// Days since 1970-01-01 (the Unix epoch's date); negative before it.
    public var daysSince1970: Int { Self.daysFromCivil(year: year, month: month, day: day) }

    /// The date `days` days later (earlier when negative).
    public func adding(days: Int) -> CalendarDate {
        let limit = 2 * Self.dayNumberLimit
        return CalendarDate(daysSince1970: daysSince1970 + min(max(days, -limit), limit))
    }

    /// Whole days from `earlier` to this date: 1 for the day after, negative if `earlier` is later.
    public func days(since earlier: CalendarDate) -> Int { daysSince1970 - earlier.daysSince1970 }

    /// `YYYYMMDD`, the date folder's name (the same as `LocalTimestamp.dateStamp`).
    public var folderName: String { Self.pad(year, 4) + Self.pad(month, 2) + Self.pad(day, 2) }

    /// "2026-01-31", for people.
    public var description: String { Self.pad(year, 4) + "-" + Self.pad(month, 2) + "-" + Self.pad(day, 2) }

    public static func < (a: Self, b: Self) -> Bool { (a.year, a.month, a.day) < (b.year, b.month, b.day) }

    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value.magnitude)
        return (value < 0 ? "-" : "") + String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}

/// One name a scan found directly inside `<root>/<kind>/`: a date folder,
/// or something that does not belong there.
public struct LibraryEntry: Hashable, Sendable {
    /// What the name is, as `lstat` says: a symlink is a symlink, never its target.
    public enum EntryType: Hashable, Sendable {
        case directory, symlink, file
        /// A device, pipe or socket.
        case other
    }

    public var kind: MediaKind
    public var name: String
    public var type: EntryType
    /// The date the name spells, when it is a valid `YYYYMMDD`, whatever the type.
    public var date: CalendarDate?

    public init(kind: MediaKind, name: String, type: EntryType) {
        self.kind = kind
        self.name = name
        self.type = type
        self.date = CalendarDate(folderName: name)
    }

    /// `video/20260131`: the entry's path relative to the media root.
    public var relativePath: String { kind.rawValue + "/" + name }
}

/// Which files of a date folder a deletion takes. An event clip and its snapshot
/// (`HHMMSS-motion.mp4`, `HHMMSS-motion.jpg`: a name with a label) are kept by
/// `storage.event_retention_days` and freed last by the disk guard; every other file is
/// continuous footage.
public enum LibraryShare: String, Hashable, Sendable, CaseIterable {
    /// The whole folder.
    case all
    /// Every file but the event clips and snapshots.
    case continuous
    /// Only the event clips and snapshots.
    case events

    /// Whether a file of this name is taken (`.all` takes everything).
    public func takes(fileName name: String) -> Bool {
        switch self {
        case .all: true
        case .continuous: LibraryLayout.eventLabel(ofFileName: name) == nil && name != LibraryIndex.fileName
        case .events: LibraryLayout.eventLabel(ofFileName: name) != nil
        }
    }
}

/// Why a date folder is to be deleted.
public enum DeletionReason: Hashable, Sendable, CustomStringConvertible {
    /// Retention: the folder's date is this many days before today (≥ the retention period).
    case age(days: Int)
    /// The disk guard: free space is below the floor and this is among the oldest days.
    case space

    public var description: String {
        switch self {
        case .age(let days): days == 1 ? "1 day old" : "\(days) days old"
        case .space: "oldest day, deleted to keep the free-space floor"
        }
    }
}

/// What retention decided for one scan of the library: which date folders go, and
/// which names it will not touch but a person should look at.
public struct RetentionPlan: Equatable, Sendable {
    public struct Deletion: Hashable, Sendable {
        public var kind: MediaKind
        public var date: CalendarDate
        public var reason: DeletionReason
        /// The whole folder, or only its continuous footage or its event clips (the two
        /// retention periods differ).
        public var share: LibraryShare

        public init(kind: MediaKind, date: CalendarDate, reason: DeletionReason, share: LibraryShare = .all) {
            self.kind = kind
            self.date = date
            self.reason = reason
            self.share = share
        }

        /// `video/20260131`, relative to the media root.
        public var relativePath: String { kind.rawValue + "/" + date.folderName }
    }

    /// A name that is left alone, and why.
    public struct Report: Hashable, Sendable {
        public enum Reason: Hashable, Sendable, CustomStringConvertible {
            /// A folder whose name is not a valid `YYYYMMDD`.
            case notADate
            /// A symlink, whatever its name or target: never followed, never deleted.
            case symlink
            /// A regular file directly in `video/`, `photo/` or `audio/`.
            case fileAtWrongLevel
            /// A device, pipe or socket directly in a kind folder.
            case specialFile
            /// A date folder dated after today: the clock is wrong now, or was then.
            case inTheFuture

            public var description: String {
                switch self {
                case .notADate: "not a date"
                case .symlink: "a symlink, not followed"
                case .fileAtWrongLevel: "a file at the wrong level"
                case .specialFile: "a device, pipe or socket at the wrong level"
                case .inTheFuture: "in the future — clock wrong?"
                }
            }
        }

        public var kind: MediaKind
        public var name: String
        public var why: Reason

        public init(kind: MediaKind, name: String, why: Reason) {
            self.kind = kind
            self.name = name
            self.why = why
        }

        /// `video/notes`, relative to the media root.
        public var relativePath: String { kind.rawValue + "/" + name }
    }

    /// Date folders to delete, oldest first (video, photo, audio within a day).
    public var deletions: [Deletion]
    /// Names left alone, in the order they were given.
    public var reported: [Report]

    public init(deletions: [Deletion] = [], reported: [Report] = []) {
        self.deletions = deletions
        self.reported = reported
    }
}

/// Age-based retention: a date folder's continuous footage is deleted when today's local
/// date is on or after its date plus `retentionDays` days, its event clips after
/// `eventRetentionDays`; the whole folder when both are due. Pure: the caller scans,
/// supplies "today", and carries out the plan.
public struct RetentionPolicy: Equatable, Sendable {
    /// The default retention period: 30 days.
    public static let defaultRetentionDays = 30

    /// Days a date folder is kept: with 30, the folder of January 1st goes on
    /// January 31st. Values below 1 switch age-based deletion off (the disk guard
    /// still runs) — the harmless reading of a value that configuration should reject.
    public var retentionDays: Int
    /// Days event clips and their snapshots are kept; nil: as long as `retentionDays`.
    /// Below 1: event clips are never deleted for their age.
    public var eventRetentionDays: Int?

    public init(retentionDays: Int = RetentionPolicy.defaultRetentionDays, eventRetentionDays: Int? = nil) {
        self.retentionDays = retentionDays
        self.eventRetentionDays = eventRetentionDays
    }

    /// Decides what goes.
    ///
    /// Never deleted: today's folder, any date in `protected` (the day of the recording
    /// in progress), folders dated after today (reported as a wrong clock), names that
    /// are not valid dates, symlinks, files and special files (all reported).
    /// - Parameters:
    ///   - today: Today's local date.
    ///   - entries: Everything a scan found directly in the kind folders.
    ///   - protected: Dates never to delete, such as the start date of the recording in progress.
    public func decide(today: CalendarDate, entries: [LibraryEntry], protected: Set<CalendarDate> = []) -> RetentionPlan {
        var plan = RetentionPlan()
        for entry in entries {
            switch entry.type {
            case .symlink:
                plan.reported.append(.init(kind: entry.kind, name: entry.name, why: .symlink))
            case .file:
                plan.reported.append(.init(kind: entry.kind, name: entry.name, why: .fileAtWrongLevel))
            case .other:
                plan.reported.append(.init(kind: entry.kind, name: entry.name, why: .specialFile))
            case .directory:
                guard let date = entry.date else {
                    plan.reported.append(.init(kind: entry.kind, name: entry.name, why: .notADate))
                    continue
                }
                if date > today {
                    plan.reported.append(.init(kind: entry.kind, name: entry.name, why: .inTheFuture))
                    continue
                }
                let age = today.days(since: date)
                guard date != today, !protected.contains(date) else { continue }
                let eventDays = eventRetentionDays ?? retentionDays
                let continuousDue = retentionDays >= 1 && age >= retentionDays
                let eventsDue = eventDays >= 1 && age >= eventDays
                let share: LibraryShare
                switch (continuousDue, eventsDue) {
                case (true, true): share = .all
                case (true, false): share = .continuous
                case (false, true): share = .events
                case (false, false): continue
                }
                plan.deletions.append(.init(kind: entry.kind, date: date, reason: .age(days: age), share: share))
            }
        }
        let kindOrder = Dictionary(uniqueKeysWithValues: MediaKind.allCases.enumerated().map { ($1, $0) })
        plan.deletions.sort { ($0.date, kindOrder[$0.kind] ?? 0) < ($1.date, kindOrder[$1.kind] ?? 0) }
        return plan
    }
}
