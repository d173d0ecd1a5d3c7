/// What to delete from the media library, decided on a scan and the free space, with
/// no I/O: retention first, then the disk guard on what retention leaves, each folder
/// taken whole or by its share (continuous footage, event clips), files waiting for
/// their offsite copy held back by age and named when the disk guard takes them.
/// `LibraryPurger` (KioskRecording) scans, asks this, and deletes.
/// A name in the library that the purger leaves alone but a person should look at.
public struct LibraryReport: Hashable, Sendable, CustomStringConvertible {
    /// Relative to the media root, e.g. `video/notes`.
    public var relativePath: String
    /// "not a date", "a symlink, not followed", "a file at the wrong level", …
    public var reason: String

    public init(relativePath: String, reason: String) {
        self.relativePath = relativePath
        self.reason = reason
    }

    public var description: String { relativePath + ": " + reason }
}

/// What one purge would do: the date folders to delete (retention, then the disk
/// guard), the names left alone, and whether a recording may start afterwards.
public struct PurgePlan: Equatable, Sendable {
    public struct Deletion: Hashable, Sendable, CustomStringConvertible {
        public var kind: MediaKind
        public var date: CalendarDate
        /// Space on disk the folder (or the files) takes now: what deleting it frees.
        public var bytes: Int64
        public var reason: DeletionReason
        /// `.all`: the folder goes. Otherwise only `files`, the folder's continuous
        /// footage or its event clips (the folder goes too once nothing else is left).
        public var share: LibraryShare
        /// The names of the files a partial deletion takes; empty for `.all` (unless
        /// files are held for upload: then the others, by name).
        public var files: [String]
        /// Files retention leaves because they wait for their offsite copy (the folder stays).
        public var heldForUpload: [String] = []
        /// Files waiting for upload that the disk guard takes all the same, and their
        /// bytes: they go without an offsite copy, and the purge says so.
        public var unuploaded: [String] = []
        public var unuploadedBytes: Int64 = 0

        public init(kind: MediaKind, date: CalendarDate, bytes: Int64, reason: DeletionReason,
                    share: LibraryShare = .all, files: [String] = []) {
            self.kind = kind
            self.date = date
            self.bytes = bytes
            self.reason = reason
            self.share = share
            self.files = files
        }

        /// Whether the whole folder goes (else only `files`).
        public var isWholeFolder: Bool { share == .all && heldForUpload.isEmpty }

        /// `video/20260131`, relative to the media root.
        public var relativePath: String { kind.rawValue + "/" + date.folderName }
        /// "whole folder", "continuous footage (3 files)", "event clips (1 file)".
        public var what: String {
            let count = files.count == 1 ? "1 file" : "\(files.count) files"
            if !heldForUpload.isEmpty {
                let held = heldForUpload.count == 1 ? "1 file" : "\(heldForUpload.count) files"
                return "\(count), \(held) kept for upload"
            }
            switch share {
            case .all: return "whole folder"
            case .continuous: return "continuous footage (\(count))"
            case .events: return "event clips (\(count))"
            }
        }
        public var description: String {
            isWholeFolder ? "\(relativePath) (\(ByteCountText.text(bytes))): \(reason)"
                : "\(relativePath), \(what) (\(ByteCountText.text(bytes))): \(reason)"
        }
    }

    /// The date the plan was made for; `apply` never deletes it.
    public var today: CalendarDate
    /// Dates never deleted: the caller's plus those of recordings in `.incoming`.
    public var protected: Set<CalendarDate>
    /// Retention's deletions (oldest first), then the disk guard's (continuous footage
    /// oldest first, then event clips oldest first).
    public var deletions: [Deletion]
    /// Days whose event log (`events/YYYYMMDD.jsonl`) goes: their clips' retention is
    /// over, or the disk guard deleted their clips.
    public var eventLogs: [CalendarDate] = []
    /// Timelapse movies (`timelapse/20261101.mp4`) whose day retention is over.
    public var timelapseMovies: [String] = []
    /// Names left alone, with the reason.
    public var reports: [LibraryReport]
    /// Files (`video/20261101/101455.mp4`) retention would delete but leaves, because
    /// they wait for their offsite copy.
    public var heldForUpload: [String] = []
    /// Files the disk guard deletes though they wait for upload, and their bytes.
    public var unuploadedFiles: [String] {
        deletions.flatMap { deletion in deletion.unuploaded.map { deletion.relativePath + "/" + $0 } }
    }
    public var unuploadedBytes: Int64 { deletions.reduce(0) { $0 + $1.unuploadedBytes } }
    /// The disk guard's view: floor, hard floor, free space (after retention's
    /// deletions), and whether a recording may start.
    public var space: DiskGuardPlan

    /// Whether a recording may start once the deletions are done.
    public var canRecord: Bool { space.canRecord }
    /// Why not, when it may not: a message for the person at the device.
    public var message: String? { space.message }
    /// What the deletions free, in bytes.
    public var bytesToFree: Int64 { deletions.reduce(0) { $0 + $1.bytes } }
}

public enum PurgePlanner {
    /// The decision on a scan already made: retention first, then the disk guard on
    /// what retention leaves (its projected free space counting retention's deletions).
    /// - Parameter eventLogDays: The days that have an event log (`events/YYYYMMDD.jsonl`).
    public static func plan(scan: LibraryScan, freeBytes: Int64, totalBytes: Int64, today: CalendarDate,
                            protected: Set<CalendarDate>, bitrate: Int?,
                            retention: RetentionPolicy, diskGuard: DiskGuardPolicy,
                            eventLogDays: [CalendarDate] = [], hold: UploadHold = UploadHold()) -> PurgePlan {
        var left = scan
        var deletions: [PurgePlan.Deletion] = []
        var heldForUpload: [String] = []
        /// Days with an event clip retention leaves for its upload: their event log stays too.
        var heldEventDays: Set<CalendarDate> = []
        /// Takes a share of a folder still in `left` into `deletions`, and out of `left`.
        func take(_ share: LibraryShare, kind: MediaKind, date: CalendarDate, reason: DeletionReason) {
            guard let index = left.dateFolders.firstIndex(where: { $0.kind == kind && $0.date == date }),
                  var deletion = deletion(of: left.dateFolders[index], share: share, reason: reason) else { return }
            if !hold.isEmpty {
                let folder = left.dateFolders[index]
                let names = deletion.share == .all ? folder.files.map(\.name).filter { $0 != LibraryIndex.fileName } : deletion.files
                let sizes = Dictionary(folder.files.map { ($0.name, $0.diskBytes) }, uniquingKeysWith: { a, _ in a })
                if case .age = reason {
                    // Age waits for the upload: the folder keeps the files still to be copied.
                    let (deletable, held) = hold.retentionSplit(kind: kind, date: date, names: names)
                    if held.contains(where: { LibraryLayout.eventLabel(ofFileName: $0) != nil }) { heldEventDays.insert(date) }
                    if !held.isEmpty {
                        guard !deletable.isEmpty else { heldForUpload += held.map { folder.relativePath + "/" + $0 }; return }
                        deletion.files = deletable
                        deletion.heldForUpload = held
                        deletion.bytes = deletable.reduce(0) { $0 + (sizes[$1] ?? 0) }
                        heldForUpload += held.map { folder.relativePath + "/" + $0 }
                    }
                } else {
                    deletion.unuploaded = hold.unuploaded(kind: kind, date: date, names: names)
                    deletion.unuploadedBytes = deletion.unuploaded.reduce(0) { $0 + (sizes[$1] ?? 0) }
                }
            }
            deletions.append(deletion)
            if deletion.isWholeFolder {
                left.dateFolders.remove(at: index)
            } else {
                let taken = Set(deletion.files)
                left.dateFolders[index].files.removeAll { taken.contains($0.name) }
                left.dateFolders[index].diskBytes -= deletion.bytes
            }
        }

        let decided = retention.decide(today: today, entries: scan.entries, protected: protected)
        for expired in decided.deletions { take(expired.share, kind: expired.kind, date: expired.date, reason: expired.reason) }
        let freedByAge = deletions.reduce(Int64(0)) { $0 + $1.bytes }
        let (projected, overflow) = freeBytes.addingReportingOverflow(freedByAge)
        var eventBytes: [CalendarDate: Int64] = [:]
        for folder in left.dateFolders { eventBytes[folder.date, default: 0] += eventShareBytes(folder) }
        let space = diskGuard.plan(freeBytes: overflow ? Int64.max : projected, totalBytes: totalBytes, bitrate: bitrate,
                                   days: left.days, eventBytes: eventBytes, today: today, protected: protected)
        for day in space.deletions {
            for folder in left.folders(on: day.date) { take(day.share, kind: folder.kind, date: day.date, reason: .space) }
        }

        // An event log goes with its day's clips: by their retention (unless a clip of the
        // day still waits for its upload), or when the guard took them.
        let eventDays = retention.eventRetentionDays ?? retention.retentionDays
        let clipsTaken = Set(space.deletions.filter { $0.share != .continuous }.map(\.date))
        let eventLogs = eventLogDays.filter { day in
            day < today && !protected.contains(day)
                && ((eventDays >= 1 && today.days(since: day) >= eventDays && !heldEventDays.contains(day)) || clipsTaken.contains(day))
        }.sorted()
        let reports = decided.reported.map { LibraryReport(relativePath: $0.relativePath, reason: $0.why.description) }
            + scan.problems.map { LibraryReport(relativePath: $0.relativePath, reason: $0.reason) }
        var plan = PurgePlan(today: today, protected: protected, deletions: deletions, eventLogs: eventLogs,
                             reports: reports, space: space)
        plan.heldForUpload = heldForUpload
        return plan
    }

    /// What taking `share` of `folder` deletes, or nil when it holds nothing of that share.
    /// A folder with only continuous footage goes whole for `.continuous`, one with only
    /// event clips whole for `.events`; a mixed one loses only the files of the share.
    /// Subfolders and other odd entries count as footage (they go with the whole folder).
    public static func deletion(of folder: LibraryScan.DateFolder, share: LibraryShare, reason: DeletionReason) -> PurgePlan.Deletion? {
        let (clips, footage, hasFootage) = split(folder)
        let whole = PurgePlan.Deletion(kind: folder.kind, date: folder.date, bytes: folder.diskBytes, reason: reason)
        func part(_ files: [LibraryScan.File]) -> PurgePlan.Deletion {
            PurgePlan.Deletion(kind: folder.kind, date: folder.date, bytes: files.reduce(0) { $0 + $1.diskBytes },
                               reason: reason, share: share, files: files.map(\.name))
        }
        switch share {
        case .all: return whole
        case .continuous: return clips.isEmpty ? whole : hasFootage ? part(footage) : nil
        case .events: return !hasFootage ? whole : clips.isEmpty ? nil : part(clips)
        }
    }

    /// The space taking the event share of `folder` frees (all of it when it holds only clips).
    public static func eventShareBytes(_ folder: LibraryScan.DateFolder) -> Int64 {
        let (clips, _, hasFootage) = split(folder)
        guard !clips.isEmpty else { return 0 }
        return hasFootage ? clips.reduce(0) { $0 + $1.diskBytes } : folder.diskBytes
    }

    /// A folder's files as event clips and continuous footage (each name read once; the
    /// index is neither), and whether anything but clips is in it.
    private static func split(_ folder: LibraryScan.DateFolder)
        -> (clips: [LibraryScan.File], footage: [LibraryScan.File], hasFootage: Bool) {
        var clips: [LibraryScan.File] = [], footage: [LibraryScan.File] = []
        for file in folder.files where file.name != LibraryIndex.fileName {
            if LibraryShare.events.takes(fileName: file.name) { clips.append(file) } else { footage.append(file) }
        }
        return (clips, footage, !footage.isEmpty || folder.otherEntries > 0)
    }
}
