import Foundation

/// The kinds of media the library holds, each in its own tree: camera video, stills,
/// sound, and screen recordings (`kioskcam broadcast --to library`), purged like the rest.
public enum MediaKind: String, CaseIterable, Sendable, Codable {
    case video, photo, audio, screen

    public var fileExtension: String {
        switch self {
        case .video, .screen: "mp4"
        case .photo: "jpg"
        case .audio: "m4a"
        }
    }

    /// Moving pictures (a camera recording or a screen recording): what the player
    /// decodes and shows, as opposed to a still or sound only.
    public var isMovie: Bool { self == .video || self == .screen }
}

/// A local calendar date and time of day, as used in library names.
public struct LocalTimestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var year: Int, month: Int, day: Int
    public var hour: Int, minute: Int, second: Int

    public init(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0) {
        (self.year, self.month, self.day) = (year, month, day)
        (self.hour, self.minute, self.second) = (hour, minute, second)
    }

    /// The local time of `date` in the system's zone (`LocalZone`: the C library's, not
    /// ICU's).
    public init(_ date: Date) {
        let seconds = LocalZone.wholeSeconds(date)
        self.init(unixSeconds: seconds, utcOffsetSeconds: LocalZone.offset(atUnixSeconds: seconds).seconds)
    }

    /// The local time of `date` in `timeZone`, a zone named by the caller.
    public init(_ date: Date, timeZone: TimeZone) {
        self.init(unixSeconds: LocalZone.wholeSeconds(date), utcOffsetSeconds: timeZone.secondsFromGMT(for: date))
    }

    /// The wall-clock time `utcOffsetSeconds` east of UTC at the instant `unixSeconds`:
    /// pure arithmetic (`CalendarDate`'s civil-from-days). The offset is held within a day
    /// and the instant within `CalendarDate`'s range, so nothing overflows.
    public init(unixSeconds: Int64, utcOffsetSeconds: Int) {
        let limit = Int64(CalendarDate.dayNumberLimit) * 86_400
        let local = max(-limit, min(limit, unixSeconds)) + Int64(max(-86_400, min(86_400, utcOffsetSeconds)))
        let (date, secondOfDay, _) = civilTime(local)
        self.init(year: date.year, month: date.month, day: date.day,
                  hour: secondOfDay / 3600, minute: secondOfDay / 60 % 60, second: secondOfDay % 60)
    }

    /// `YYYYMMDD`: the name of the date folder.
    public var dateStamp: String { pad(year, 4) + pad(month, 2) + pad(day, 2) }
    /// `HHMMSS`: the base name of a recording.
    public var timeStamp: String { pad(hour, 2) + pad(minute, 2) + pad(second, 2) }
    public var description: String { dateStamp + "-" + timeStamp }

    /// "2026-11-22 01:45:00", for people.
    public var readable: String {
        pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + " " + pad(hour, 2) + ":" + pad(minute, 2) + ":" + pad(second, 2)
    }

    public static func < (a: Self, b: Self) -> Bool {
        (a.year, a.month, a.day, a.hour, a.minute, a.second) < (b.year, b.month, b.day, b.hour, b.minute, b.second)
    }

    /// Parses `YYYYMMDD-HHMMSS` (the form used in temp-file names).
    public init?(parsing text: Substring) {
        let parts = text.split(separator: "-")
        guard parts.count == 2, parts[0].count == 8, parts[1].count == 6,
              parts[0].allSatisfy(\.isASCIIDigit), parts[1].allSatisfy(\.isASCIIDigit),
              let d = Int(parts[0]), let t = Int(parts[1]) else { return nil }
        self.init(year: d / 10000, month: d / 100 % 100, day: d % 100,
                  hour: t / 10000, minute: t / 100 % 100, second: t % 100)
        guard (1...12).contains(month), (1...Self.daysIn(month: month, year: year)).contains(day),
              hour < 24, minute < 60, second < 61 else { return nil }
    }

    /// Days in a month of the proleptic Gregorian calendar.
    public static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}

/// "2026-11-22T01:23:26Z" for `secondsSince1970`: the MP4 `creation_time`. Pure
/// arithmetic (`CalendarDate`'s civil-from-days), so the encoder thread never waits
/// for a date formatter or time-zone database.
public func iso8601UTC(secondsSince1970: Int64) -> String {
    let (date, secondOfDay, _) = civilTime(secondsSince1970)
    return pad(date.year, 4) + "-" + pad(date.month, 2) + "-" + pad(date.day, 2) + "T"
        + pad(secondOfDay / 3600, 2) + ":" + pad(secondOfDay / 60 % 60, 2) + ":" + pad(secondOfDay % 60, 2) + "Z"
}

/// "Sun, 06 Nov 1994 08:49:37 GMT" for `secondsSince1970`: HTTP's date (RFC 9110's
/// IMF-fixdate, `Last-Modified`), in English whatever the locale, without a formatter.
public func httpDate(secondsSince1970: Int64) -> String {
    let (date, secondOfDay, days) = civilTime(secondsSince1970)
    let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][Int(((days % 7) + 7) % 7)]  // 1970-01-01: a Thursday
    let month = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"][date.month - 1]
    return weekday + ", " + pad(date.day, 2) + " " + month + " " + pad(date.year, 4) + " "
        + pad(secondOfDay / 3600, 2) + ":" + pad(secondOfDay / 60 % 60, 2) + ":" + pad(secondOfDay % 60, 2) + " GMT"
}

/// The UTC date, second of the day and day number of `secondsSince1970`, held within
/// `CalendarDate`'s range first: the seconds may come from a file's mtime, and
/// `Int64.min - 86_399` would trap.
private func civilTime(_ secondsSince1970: Int64) -> (date: CalendarDate, secondOfDay: Int, days: Int64) {
    let limit = Int64(CalendarDate.dayNumberLimit) * 86_400
    let seconds = max(-limit, min(limit, secondsSince1970))
    let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
    return (CalendarDate(daysSince1970: Int(days)), Int(seconds - days * 86_400), days)
}

private func pad(_ value: Int, _ width: Int) -> String {
    let digits = String(value)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}

/// Where things live under the media root. Pure path arithmetic; no file access.
///
/// ```
/// <root>/video/YYYYMMDD/HHMMSS.mp4
/// <root>/photo/YYYYMMDD/HHMMSS.jpg
/// <root>/audio/YYYYMMDD/HHMMSS.m4a
/// <root>/screen/YYYYMMDD/HHMMSS.mp4                     (screen broadcasts kept in the library)
/// <root>/timelapse/YYYYMMDD.mp4                          (`[timelapse]`: a movie a day)
/// <root>/.incoming/<kind>-YYYYMMDD-HHMMSS.<ext>.part   (being written)
/// <root>/.quarantine/<name>                             (salvage could not repair it; kept for a person)
/// ```
/// The temp area sits inside the root so the final move is a same-filesystem rename.
public struct LibraryLayout: Sendable, Equatable {
    public var root: String

    public init(root: String) {
        var trimmed = root
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        self.root = trimmed
    }

    /// `<root>/timelapse`: the timelapse's movies, one a day (`TimelapseFileName`).
    public var timelapseDirectory: String { root + "/" + TimelapseFileName.folderName }

    public static let incomingFolderName = ".incoming"
    public static let quarantineFolderName = ".quarantine"
    public static let partSuffix = ".part"

    /// The root with exactly one trailing slash, so "/" does not give "//video".
    private var prefix: String { root.hasSuffix("/") ? root : root + "/" }

    public var incomingDirectory: String { prefix + Self.incomingFolderName }

    /// Where files salvage cannot repair are kept: never deleted, never retried.
    public var quarantineDirectory: String { prefix + Self.quarantineFolderName }

    public func kindDirectory(_ kind: MediaKind) -> String { prefix + kind.rawValue }

    public func dateDirectory(_ kind: MediaKind, _ time: LocalTimestamp) -> String {
        kindDirectory(kind) + "/" + time.dateStamp
    }

    /// The library path for a recording that started at `time`. `attempt` > 0 gives
    /// `HHMMSS-1.mp4`, `HHMMSS-2.mp4`… for a second recording in the same second; a
    /// `label` (an event clip's trigger) goes after the time: `HHMMSS-motion.mp4`.
    public func finalPath(_ kind: MediaKind, _ time: LocalTimestamp, attempt: Int = 0, label: String? = nil) -> String {
        let labelPart = label.flatMap { Self.isValidLabel($0) ? "-" + $0 : nil } ?? ""
        let suffix = attempt == 0 ? "" : "-\(attempt)"
        return dateDirectory(kind, time) + "/" + time.timeStamp + labelPart + suffix + "." + kind.fileExtension
    }

    /// The temp path a recording is written to until it is finished.
    /// `serial` separates segments started in the same second; a `label` is kept in the
    /// name (`+motion`) so that salvage after a crash gives the clip its name.
    public func incomingPath(_ kind: MediaKind, _ time: LocalTimestamp, serial: Int = 0, label: String? = nil) -> String {
        let serialPart = serial == 0 ? "" : "~\(serial)"
        let labelPart = label.flatMap { Self.isValidLabel($0) ? "+" + $0 : nil } ?? ""
        return incomingDirectory + "/" + kind.rawValue + "-" + time.description + serialPart + labelPart
            + "." + kind.fileExtension + Self.partSuffix
    }

    /// A name label: 1…16 lowercase ASCII letters (a trigger's name), nothing that could
    /// read as a time, a serial or a path.
    public static func isValidLabel(_ label: String) -> Bool {
        (1...16).contains(label.utf8.count) && label.utf8.allSatisfy { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) }
    }

    /// The label of a finished file's name (`101455-motion.mp4`, `101455-motion-1.mp4`,
    /// `101455-motion.jpg`), if any: such a file belongs to an event, which retention
    /// keeps by `event_retention_days` and the disk guard frees last. `101455.mp4`,
    /// `101455-1.mp4` and names that are not recordings have none.
    public static func eventLabel(ofFileName name: String) -> String? {
        let bytes = Array(name.utf8)
        guard bytes.count <= 64, bytes.count > 8, bytes[0..<6].allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              bytes[6] == UInt8(ascii: "-"), let dot = bytes.lastIndex(of: UInt8(ascii: ".")), dot > 7,
              MediaKind.allCases.contains(where: { Array($0.fileExtension.utf8) == Array(bytes[(dot + 1)...]) }) else { return nil }
        let parts = bytes[7..<dot].split(separator: UInt8(ascii: "-"), omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count) else { return nil }
        if parts.count == 2 {
            // An attempt number as `finalPath` writes it: 1…9999, no leading zero.
            guard !parts[1].isEmpty, parts[1].count <= 4, parts[1].first != UInt8(ascii: "0"),
                  parts[1].allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        }
        let label = String(decoding: parts[0], as: UTF8.self)
        return isValidLabel(label) ? label : nil
    }

    /// The label of a temp file's name (`video-20261124-101455+motion.mp4.part`), if any.
    public static func parseIncomingLabel(_ name: String) -> String? {
        guard parseIncomingName(name) != nil, let plus = name.lastIndex(of: "+"),
              let dot = name[plus...].firstIndex(of: ".") else { return nil }
        let label = String(name[name.index(after: plus)..<dot])
        return isValidLabel(label) ? label : nil
    }

    /// Recovers kind and start time from a temp file's name, for salvage after a crash.
    public static func parseIncomingName(_ name: String) -> (kind: MediaKind, time: LocalTimestamp)? {
        guard name.hasSuffix(partSuffix) else { return nil }
        let stem = name.dropLast(partSuffix.count)
        guard let dash = stem.firstIndex(of: "-"),
              let kind = MediaKind(rawValue: String(stem[..<dash])),
              stem.hasSuffix("." + kind.fileExtension) else { return nil }
        var timePart = stem[stem.index(after: dash)...].dropLast(kind.fileExtension.count + 1)
        if let plus = timePart.firstIndex(of: "+") {
            guard isValidLabel(String(timePart[timePart.index(after: plus)...])) else { return nil }
            timePart = timePart[..<plus]
        }
        if let tilde = timePart.firstIndex(of: "~") {
            let serial = timePart[timePart.index(after: tilde)...]
            guard !serial.isEmpty, serial.allSatisfy(\.isASCIIDigit) else { return nil }
            timePart = timePart[..<tilde]
        }
        guard let time = LocalTimestamp(parsing: timePart) else { return nil }
        return (kind, time)
    }
}
