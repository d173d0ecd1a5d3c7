import Foundation
import Glibc
import KioskCore

/// The event log on disk: `<media root>/events/YYYYMMDD.jsonl`, one `EventMessage` per
/// line, every message of an event in the file of the day it started. Lines are
/// appended whole with one `write` on an `O_APPEND` descriptor (so a reader never sees
/// two lines interleaved) and the file is synced when an event ends; a line torn by a
/// power cut is skipped by the reader (`EventLogListing`).
public struct EventLogFile: Sendable {
    public let root: String

    public init(root: String) {
        self.root = root
    }

    public var directory: String { (root.hasSuffix("/") ? root : root + "/") + "events" }

    /// The log of one day.
    public func path(forDay day: String) -> String { directory + "/" + day + ".jsonl" }

    /// Appends a message to the log of the day `day` (its event's start, `YYYYMMDD`).
    /// - Throws: `RecorderError(.library)` naming the file and what to do when it cannot be written.
    public func append(_ message: EventMessage, day: String) throws(RecorderError) {
        guard CalendarDate(folderName: day) != nil else {
            throw RecorderError(.library, "event log: \(day) is not a day (YYYYMMDD)")
        }
        if mkdir(directory, 0o755) != 0, errno != EEXIST {
            throw Self.failure("create the event log folder", directory)
        }
        let path = path(forDay: day)
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw Self.failure("open the event log", path) }
        defer { close(fd) }
        let bytes = Array((message.line + "\n").utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count else { throw Self.failure("write the event log", path) }
        if message.type == .end { _ = fdatasync(fd) }
    }

    /// The days that have a log, oldest first.
    public func days() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.compactMap { name -> String? in
            guard name.hasSuffix(".jsonl") else { return nil }
            let day = String(name.dropLast(6))
            return CalendarDate(folderName: day) == nil ? nil : day
        }.sorted()
    }

    /// One day's events (the last message about each); a log larger than 64 MiB is read
    /// only as far as that (a day of events is a few hundred kilobytes).
    public func listing(day: String) -> EventLogListing {
        guard let handle = FileHandle(forReadingAtPath: path(forDay: day)) else { return EventLogListing(text: "") }
        defer { try? handle.close() }
        let data = (try? handle.read(upToCount: 64 << 20)) ?? Data()
        return EventLogListing(text: String(decoding: data, as: UTF8.self))
    }

    private static func failure(_ operation: String, _ path: String) -> RecorderError {
        let code = errno
        let reason = String(cString: strerror(code))
        let hint = code == ENOSPC ? "free space on the storage" : "check that kioskcam may write to \(path)"
        return RecorderError(.library, "cannot \(operation) \(path): \(reason); \(hint)")
    }
}
