import FuzzSupport
import Foundation
import KioskCore
import KioskRecording

/// A day's `.index` file, however damaged: `LibraryIndex.parse` on the text, the listing
/// that reads it from a real date folder, and the name parsers that go with library
/// names (date folders, temp-file names, time stamps).
///
/// Properties beyond "no trap":
/// - every duration read is finite and not negative;
/// - `LibraryIndex.line` for any name without a tab or newline and any number reads back
///   to that name and the number rounded to milliseconds (clamped to 0…1e9 s);
/// - the listing shows, for each recording, exactly the duration the index gives;
/// - each name parser's result writes back to a name that parses to the same value;
/// - the same text read as a day's event log (`EventLogListing`): every event it keeps
///   has finite numbers and reads back from its own line unchanged.
func fuzzLibraryIndex(_ bytes: UnsafeRawBufferPointer) {
    var reader = FuzzReader(bytes)
    // The first 8 bytes are also a Double for `line(name:seconds:)`: any bit pattern.
    let seconds = Double(bitPattern: reader.integer(UInt64.self))
    let text = String(decoding: bytes, as: UTF8.self)

    let durations = LibraryIndex.parse(text)
    for (name, value) in durations {
        Fuzz.require(value.isFinite && value >= 0, "duration \(value) for \(name)")
        // Lines and fields are split by Character, so "\r\n" (one Character) may be in a name.
        Fuzz.require(!name.contains(Character("\t")) && !name.contains(Character("\n")), "a name with a tab or newline")
        checkLine(name: name, seconds: value)
        checkNames(name)
    }
    if let first = durations.keys.min() { checkLine(name: first, seconds: seconds) }
    checkLine(name: "000000.mp4", seconds: seconds)
    checkNames(text)
    for line in text.split(separator: "\n").prefix(8) { checkNames(String(line)) }
    checkListing(bytes, durations: durations)
    checkEventLog(text)
}

/// The text as an event log: what is kept is sane and writes back as itself.
func checkEventLog(_ text: String) {
    let listing = EventLogListing(text: text)
    Fuzz.require(listing.unreadableLines >= 0, "a negative count")
    for event in listing.events {
        Fuzz.require(event.start.isFinite && event.clipStart.isFinite && event.peakScore.isFinite, "event \(event.id): a number is not finite")
        Fuzz.require(EventMessage(line: event.line) == event, "event \(event.id) does not read back from \(event.line)")
    }
}

/// `line` then `parse` gives the name back with the duration to the millisecond.
func checkLine(name: String, seconds: Double) {
    let line = LibraryIndex.line(name: name, seconds: seconds)
    Fuzz.require(line.hasSuffix("\n") && line.filter({ $0 == "\n" }).count == 1, "more than one line for \(name)")
    let parsed = LibraryIndex.parse(line)
    let clamped = seconds.isFinite ? min(max(0, seconds), 1e9) : 0
    guard let value = parsed[name], parsed.count == 1 else {
        return Fuzz.require(false, "\(name.debugDescription), \(seconds) does not read back from \(line.debugDescription): \(parsed)")
    }
    Fuzz.require(abs(value - clamped) <= 0.0005 + clamped * 1e-15, "\(seconds) s read back as \(value)")
}

/// Each name parser against its own writer.
func checkNames(_ name: String) {
    if let date = CalendarDate(folderName: name) {
        Fuzz.require(date.folderName == name, "date folder \(name) writes back as \(date.folderName)")
    }
    if let time = LocalTimestamp(parsing: Substring(name)) {
        Fuzz.require(LocalTimestamp(parsing: Substring(time.description)) == time, "time stamp \(name) writes back as \(time)")
        Fuzz.require(CalendarDate(year: time.year, month: time.month, day: time.day) != nil, "time stamp \(name) has no date")
    }
    if let (kind, time) = LibraryLayout.parseIncomingName(name) {
        let label = LibraryLayout.parseIncomingLabel(name)
        Fuzz.require(label.map(LibraryLayout.isValidLabel) ?? true, "temp name \(name) gave the label \(label ?? "")")
        let path = LibraryLayout(root: "/m").incomingPath(kind, time, label: label)
        let written = String(path.split(separator: "/").last ?? "")
        guard let again = LibraryLayout.parseIncomingName(written) else {
            return Fuzz.require(false, "temp name \(name) writes back as \(written), which does not parse")
        }
        Fuzz.require(again.kind == kind && again.time == time, "temp name \(name) parses differently from \(written)")
        Fuzz.require(LibraryLayout.parseIncomingLabel(written) == label, "temp name \(name) loses its label in \(written)")
    }
    if let label = LibraryLayout.eventLabel(ofFileName: name) {
        // An event file's name: retention keeps it by event_retention_days. It must be one
        // the library writes, and the shares must split it one way only.
        Fuzz.require(LibraryLayout.isValidLabel(label), "file name \(name) gave the label \(label)")
        Fuzz.require(LibraryShare.events.takes(fileName: name) && !LibraryShare.continuous.takes(fileName: name),
                     "event file \(name) is not only in the events share")
        let digits = name.utf8.prefix(6).map { Int($0) - 48 }
        if let time = LocalTimestamp(parsing: Substring("20261124-" + name.prefix(6))), digits.allSatisfy({ (0...9).contains($0) }),
           let kind = MediaKind.allCases.first(where: { name.hasSuffix("." + $0.fileExtension) }) {
            let suffix = name.dropFirst(7 + label.utf8.count).dropLast(kind.fileExtension.count + 1)
            let attempt = suffix.isEmpty ? 0 : Int(suffix.dropFirst()) ?? -1
            let written = String(LibraryLayout(root: "/m").finalPath(kind, time, attempt: attempt, label: label).split(separator: "/").last ?? "")
            Fuzz.require(written == name, "event file \(name) writes back as \(written)")
        }
    } else if name != LibraryIndex.fileName {
        Fuzz.require(LibraryShare.continuous.takes(fileName: name), "file \(name) is in no share")
    }
}

/// The same text as a real day's `.index` beside a few recordings, listed.
func checkListing(_ bytes: UnsafeRawBufferPointer, durations: [String: Double]) {
    let listing = LibraryListing(layout: Library.layout)
    let indexPath = Library.dayFolder + "/" + LibraryIndex.fileName
    guard FileManager.default.createFile(atPath: indexPath, contents: Data(bytes)) else {
        return Fuzz.require(false, "cannot write \(indexPath)")
    }
    let recordings = listing.recordings(on: Library.day, probeMissing: false)
    Fuzz.require(recordings.count == Library.recordings.count, "listed \(recordings.count) recordings")
    for recording in recordings {
        let name = String(recording.path.split(separator: "/").last ?? "")
        Fuzz.require(recording.seconds == durations[name],
                     "\(name) listed with \(String(describing: recording.seconds)), the index says \(String(describing: durations[name]))")
    }
}

/// One date folder with recordings named as kioskcam names them, made once.
enum Library {
    static let day = "20260304"
    static let recordings = ["050607.mp4", "050607-1.mp4", "235959.mp4"]
    static let layout = LibraryLayout(root: FuzzScratch.path + "/media")
    static let dayFolder: String = {
        let folder = layout.kindDirectory(.video) + "/" + day
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for name in recordings + [".050607.mp4", "notes.txt"] {
            _ = FileManager.default.createFile(atPath: folder + "/" + name, contents: Data([0]))
        }
        return folder
    }()
}

@main
enum Main {
    static func main() { Fuzz.main("FuzzLibraryIndex", fuzzLibraryIndex) }
}
