import Glibc
import KioskCore
import Logging

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

/// What `LibraryPurger.apply` did.
public struct PurgeResult: Equatable, Sendable {
    public struct Failure: Hashable, Sendable, CustomStringConvertible {
        public var kind: MediaKind
        public var date: CalendarDate
        public var message: String

        public var relativePath: String { kind.rawValue + "/" + date.folderName }
        public var description: String { relativePath + ": " + message }
    }

    /// Deletions done (whole date folders, or a folder's footage or clips), in order.
    public var deleted: [PurgePlan.Deletion] = []
    /// Date folders that could not be deleted (completely); what was removed stays removed.
    public var failures: [Failure] = []
    /// Free space measured after the deletions; nil if it could not be read.
    public var freeBytes: Int64?
    /// The floor the plan was made with.
    public var floorBytes: Int64
    /// Whether a recording may start: free space (as measured, else as planned) is at
    /// or over the floor.
    public var canRecord: Bool
    /// Why not, when it may not.
    public var message: String?

    /// Space the deleted folders took.
    public var freedBytes: Int64 { deleted.reduce(0) { $0 + $1.bytes } }
}

/// Free space against the disk guard's thresholds, for a recording in progress.
public struct SpaceCheck: Equatable, Sendable {
    public var freeBytes: Int64
    public var totalBytes: Int64
    public var floorBytes: Int64
    public var hardFloorBytes: Int64
    /// Under the floor: purge old days (the recording's own day protected).
    public var isBelowFloor: Bool { freeBytes < floorBytes }
    /// Under the hard floor: close the segment now, cleanly, before the disk fills.
    public var mustStopRecording: Bool { freeBytes < hardFloorBytes }
}

/// Deletes expired and, when space runs short, the oldest date folders — their
/// continuous footage first, their event clips (`HHMMSS-motion.mp4`) last.
///
/// Only `<root>/{video,photo,audio}/YYYYMMDD` folders, files directly inside them and
/// the event logs of their days (`events/YYYYMMDD.jsonl`) are ever deleted, and never by
/// following a symlink: a date "folder" that is a symlink is reported, a symlink inside
/// a date folder is unlinked itself (its target untouched), and nothing on another
/// filesystem mounted inside a date folder is touched.
///
/// ```swift
/// let purger = LibraryPurger(layout: layout, retention: RetentionPolicy(retentionDays: 30),
///                            guard: DiskGuardPolicy(floorBytes: nil, floorPercent: 5), logger: logger)
/// let result = try purger.purge(today: CalendarDate(LocalTimestamp(Date())), protected: [], bitrate: 9_436_160)
/// guard result.canRecord else { throw … result.message … }
/// ```
public struct LibraryPurger: Sendable {
    public let layout: LibraryLayout
    public var retention: RetentionPolicy
    public var diskGuard: DiskGuardPolicy
    /// Files waiting for their offsite copy: retention leaves them, the disk guard takes
    /// them only to keep the disk from filling, and says so.
    public var uploadHold = UploadHold()
    let logger: Logger

    /// Nested folders inside a date folder are removed to this depth; deeper is a failure.
    static let maximumDepth = 32

    public init(layout: LibraryLayout, retention: RetentionPolicy = RetentionPolicy(),
                guard diskGuard: DiskGuardPolicy = DiskGuardPolicy(), logger: Logger) {
        self.layout = layout
        self.retention = retention
        self.diskGuard = diskGuard
        self.logger = logger
    }

    /// Decides what to delete, deleting nothing. Reports (names left alone) are logged
    /// as warnings once per process and path.
    ///
    /// The dates of recordings still in `<root>/.incoming` (in progress, or awaiting
    /// salvage) are protected in addition to `protected`.
    /// - Parameters:
    ///   - today: Today's local date, e.g. `CalendarDate(LocalTimestamp(Date()))`.
    ///   - protected: Dates never to delete: the start date of the recording in progress.
    ///   - bitrate: Bits per second of the recording in progress or about to start
    ///     (video + sound), if known; the floor keeps an hour of it.
    /// - Throws: `RecorderError.library` when the media root exists but cannot be read,
    ///   or its free space cannot be measured (e.g. it does not exist).
    public func plan(today: CalendarDate, protected: Set<CalendarDate> = [], bitrate: Int?) throws(RecorderError) -> PurgePlan {
        let scan = try LibraryScanner(layout: layout).scan()
        let (free, total) = try LibraryScanner.freeSpace(of: layout.root)
        var plan = Self.plan(scan: scan, freeBytes: free, totalBytes: total, today: today,
                             protected: protected.union(incomingDates()), bitrate: bitrate,
                             retention: retention, diskGuard: diskGuard, eventLogDays: eventLogDays(), hold: uploadHold)
        plan.timelapseMovies = retention.expiredTimelapseFiles(timelapseNames(), today: today)
        logReportsOnce(plan.reports)
        return plan
    }

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
    static func deletion(of folder: LibraryScan.DateFolder, share: LibraryShare, reason: DeletionReason) -> PurgePlan.Deletion? {
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
    static func eventShareBytes(_ folder: LibraryScan.DateFolder) -> Int64 {
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

    /// Plans and logs what a purge would delete, deleting nothing (`kioskcam purge --dry-run`).
    /// - Throws: As `plan`.
    public func dryRun(today: CalendarDate, protected: Set<CalendarDate> = [], bitrate: Int?) throws(RecorderError) -> PurgePlan {
        let plan = try plan(today: today, protected: protected, bitrate: bitrate)
        for deletion in plan.deletions {
            logger.info("would delete \(deletion)")
        }
        for name in plan.timelapseMovies {
            logger.info("would delete \(TimelapseFileName.folderName)/\(name): its day's retention is over")
        }
        if let message = plan.message { logger.warning("\(message)") }
        return plan
    }

    /// Plans and deletes.
    /// - Throws: As `plan`; failures to delete are in the result, not thrown.
    @discardableResult
    public func purge(today: CalendarDate, protected: Set<CalendarDate> = [], bitrate: Int?) throws(RecorderError) -> PurgeResult {
        apply(try plan(today: today, protected: protected, bitrate: bitrate))
    }

    /// Deletes the plan's date folders, each logged at notice level, then measures the
    /// free space again. A deletion dated today or later, or protected, is refused even
    /// if a plan lists it.
    @discardableResult
    public func apply(_ plan: PurgePlan) -> PurgeResult {
        var result = PurgeResult(floorBytes: plan.space.floorBytes, canRecord: plan.canRecord)
        for deletion in plan.deletions {
            guard deletion.date < plan.today, !plan.protected.contains(deletion.date) else {
                let why = deletion.date >= plan.today ? "dated today or later" : "protected (recording in progress)"
                result.failures.append(.init(kind: deletion.kind, date: deletion.date, message: "not deleted: \(why)"))
                continue
            }
            do {
                if deletion.isWholeFolder {
                    try deleteDateFolder(kind: deletion.kind, date: deletion.date)
                } else {
                    try deleteFiles(deletion.files, kind: deletion.kind, date: deletion.date)
                }
                result.deleted.append(deletion)
                logger.notice("deleted \(layout.root)/\(deletion)")
                if !deletion.unuploaded.isEmpty {
                    logger.warning("deleted \(deletion.unuploaded.count) \(deletion.unuploaded.count == 1 ? "file" : "files") (\(ByteCountText.text(deletion.unuploadedBytes))) in \(layout.root)/\(deletion.relativePath) that had not been uploaded yet, to keep the disk from filling; they will not be copied offsite: \(deletion.unuploaded.joined(separator: ", "))")
                }
            } catch {
                result.failures.append(.init(kind: deletion.kind, date: deletion.date, message: error.message))
                logger.error("could not delete \(layout.root)/\(deletion.relativePath): \(error.message)")
            }
        }
        if !plan.heldForUpload.isEmpty {
            logger.info("retention keeps \(plan.heldForUpload.count) expired \(plan.heldForUpload.count == 1 ? "file" : "files") until \(plan.heldForUpload.count == 1 ? "it is" : "they are") uploaded (first: \(plan.heldForUpload[0]))")
        }
        for day in plan.eventLogs where day < plan.today && !plan.protected.contains(day) {
            deleteEventLog(day)
        }
        for name in plan.timelapseMovies {
            deleteTimelapseMovie(name, today: plan.today)
        }
        if let (free, _) = try? LibraryScanner.freeSpace(of: layout.root) {
            result.freeBytes = free
            result.canRecord = free >= result.floorBytes
        } else {
            result.canRecord = plan.canRecord && result.failures.isEmpty
        }
        if !result.canRecord {
            result.message = plan.message ?? "free space \(ByteCountText.text(result.freeBytes ?? 0)) is still below the floor "
                + "\(ByteCountText.text(result.floorBytes)) after deleting \(result.deleted.count) folders"
                + (result.failures.isEmpty ? "" : " (\(result.failures.count) could not be deleted: \(result.failures[0]))")
                + ": free space or lower storage.min_free_* settings"
        }
        return result
    }

    /// Free space against the floor and hard floor, for a recording in progress: cheap
    /// (one `statvfs`), meant to be called every few seconds.
    /// - Throws: `RecorderError.library` when free space cannot be measured.
    public func checkSpace(bitrate: Int?) throws(RecorderError) -> SpaceCheck {
        let (free, total) = try LibraryScanner.freeSpace(of: layout.root)
        return SpaceCheck(freeBytes: free, totalBytes: total,
                          floorBytes: diskGuard.floor(totalBytes: total, currentBitrate: bitrate),
                          hardFloorBytes: diskGuard.hardFloor(totalBytes: total, currentBitrate: bitrate))
    }

    // MARK: Deleting

    /// Removes `<root>/<kind>/<YYYYMMDD>` and everything in it without following any symlink.
    private func deleteDateFolder(kind: MediaKind, date: CalendarDate) throws(RecorderError) {
        guard let folder = try openDateFolder(kind: kind, date: date) else { return }
        defer { close(folder.kindFD) }
        try removeContents(of: folder.folderFD, path: folder.path, device: folder.device, depth: 0)
        guard unlinkat(folder.kindFD, folder.name, AT_REMOVEDIR) == 0 || errno == ENOENT else {
            throw Self.failure("remove", folder.path)
        }
    }

    /// `<root>/<kind>/<YYYYMMDD>` opened without following a symlink at either level.
    private struct OpenedDateFolder {
        /// Both descriptors are the caller's to close.
        let kindFD: Int32, folderFD: Int32
        /// The kind folder's filesystem: nothing on another one is touched.
        let device: dev_t
        let name: String, path: String
    }

    /// Opens a date folder for deleting in or from it; nil when it is already gone.
    private func openDateFolder(kind: MediaKind, date: CalendarDate) throws(RecorderError) -> OpenedDateFolder? {
        let name = date.folderName
        let path = layout.kindDirectory(kind) + "/" + name
        guard CalendarDate(folderName: name) == date else {
            throw RecorderError(.library, "\(path) is not a date folder name; left alone")
        }
        let rootFD = open(layout.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard rootFD >= 0 else { throw Self.failure("open", layout.root) }
        defer { close(rootFD) }
        let kindFD = openat(rootFD, kind.rawValue, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard kindFD >= 0 else {
            if errno == ENOENT { return nil }
            throw Self.failure("open", layout.kindDirectory(kind))
        }
        var kindInfo = stat()
        guard fstat(kindFD, &kindInfo) == 0 else {
            let failure = Self.failure("stat", layout.kindDirectory(kind))
            close(kindFD)
            throw failure
        }
        let folderFD = openat(kindFD, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard folderFD >= 0 else {
            let code = errno
            close(kindFD)
            errno = code
            switch code {
            case ENOENT: return nil  // already gone
            case ELOOP, ENOTDIR: throw RecorderError(.library, "\(path) is not a real folder (a symlink or a file); left alone")
            default: throw Self.failure("open", path)
            }
        }
        return OpenedDateFolder(kindFD: kindFD, folderFD: folderFD, device: kindInfo.st_dev, name: name, path: path)
    }

    /// Removes the named regular files from `<root>/<kind>/<YYYYMMDD>` (a partial
    /// deletion), never following a symlink; then the folder itself when nothing but its
    /// index is left.
    private func deleteFiles(_ names: [String], kind: MediaKind, date: CalendarDate) throws(RecorderError) {
        guard let folder = try openDateFolder(kind: kind, date: date) else { return }
        close(folder.kindFD)
        let folderFD = folder.folderFD, path = folder.path
        defer { close(folderFD) }
        for name in names {
            // Names come from a scan: one path component, never `.`/`..`, never the index.
            guard !name.isEmpty, !name.contains("/"), name != ".", name != "..", name != LibraryIndex.fileName else { continue }
            var info = stat()
            guard fstatat(folderFD, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
                if errno == ENOENT { continue }
                throw Self.failure("stat", path + "/" + name)
            }
            guard info.st_mode & S_IFMT == S_IFREG else { continue }
            guard unlinkat(folderFD, name, 0) == 0 || errno == ENOENT else { throw Self.failure("remove", path + "/" + name) }
        }
        guard onlyIndexLeft(folderFD) else { return }
        try deleteDateFolder(kind: kind, date: date)
    }

    /// Whether the folder open on `fd` holds nothing but (maybe) its index.
    private func onlyIndexLeft(_ fd: Int32) -> Bool {
        let copy = dup(fd)
        guard copy >= 0, let directory = fdopendir(copy) else {
            if copy >= 0 { close(copy) }
            return false
        }
        defer { closedir(directory) }
        var others = 0
        LibraryScanner.forEachEntry(directory) { name, _ in
            if String(cString: name) != LibraryIndex.fileName { others += 1 }
        }
        return others == 0
    }

    /// Deletes `events/YYYYMMDD.jsonl`; a failure is logged, never fatal.
    private func deleteEventLog(_ day: CalendarDate) {
        let path = eventLogDirectory + "/" + day.folderName + ".jsonl"
        let directoryFD = open(eventLogDirectory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard directoryFD >= 0 else { return }
        defer { close(directoryFD) }
        if unlinkat(directoryFD, day.folderName + ".jsonl", 0) == 0 {
            logger.notice("deleted \(path): the event log of a day whose clips are gone")
        } else if errno != ENOENT {
            logger.error("could not delete \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Empties the directory open on `fd` (taking ownership of it), depth first.
    private func removeContents(of fd: Int32, path: String, device: dev_t, depth: Int) throws(RecorderError) {
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            close(fd)
            throw Self.failure("stat", path)
        }
        guard info.st_dev == device else {
            close(fd)
            throw RecorderError(.library, "\(path) is another filesystem mounted inside the library; left alone")
        }
        guard depth < Self.maximumDepth else {
            close(fd)
            throw RecorderError(.library, "\(path) is nested more than \(Self.maximumDepth) folders deep; left alone")
        }
        guard let directory = fdopendir(fd) else {
            let saved = errno
            close(fd)
            errno = saved
            throw Self.failure("read", path)
        }
        defer { closedir(directory) }
        let directoryFD = dirfd(directory)

        // Collect first, then delete: readdir's view of a directory being changed is unspecified.
        var names: [(name: [CChar], isDirectory: Bool)] = []
        LibraryScanner.forEachEntry(directory) { name, result in
            let bytes = Array(UnsafeBufferPointer(start: name, count: strlen(name) + 1))
            let isDirectory = if case .success(let info) = result { (info.st_mode & S_IFMT) == S_IFDIR } else { false }
            names.append((bytes, isDirectory))
        }
        for entry in names {
            let entryPath = path + "/" + String(decoding: entry.name.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if entry.isDirectory {
                let childFD = openat(directoryFD, entry.name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                if childFD >= 0 {
                    try removeContents(of: childFD, path: entryPath, device: device, depth: depth + 1)
                    guard unlinkat(directoryFD, entry.name, AT_REMOVEDIR) == 0 || errno == ENOENT else {
                        throw Self.failure("remove", entryPath)
                    }
                    continue
                }
                // Replaced by a symlink or file since it was listed: unlink it as such.
                guard errno == ELOOP || errno == ENOTDIR else {
                    if errno == ENOENT { continue }
                    throw Self.failure("open", entryPath)
                }
            }
            // unlink never follows a symlink: the link goes, its target stays.
            guard unlinkat(directoryFD, entry.name, 0) == 0 || errno == ENOENT else {
                throw Self.failure("remove", entryPath)
            }
        }
    }

    private static func failure(_ operation: String, _ path: String) -> RecorderError {
        RecorderError(.library, "cannot \(operation) \(path): \(String(cString: strerror(errno)))")
    }

    // MARK: Helpers

    private var eventLogDirectory: String { EventLogFile(root: layout.root).directory }

    /// The regular files in `<root>/timelapse` (symlinks and folders are not movies).
    private func timelapseNames() -> [String] {
        guard let directory = opendir(layout.timelapseDirectory) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        LibraryScanner.forEachEntry(directory) { name, result in
            guard case .success(let info) = result, info.st_mode & S_IFMT == S_IFREG else { return }
            names.append(String(cString: name))
        }
        return names
    }

    /// Deletes one expired timelapse movie (never today's: `expiredTimelapseFiles` decided).
    private func deleteTimelapseMovie(_ name: String, today: CalendarDate) {
        guard let (day, _) = TimelapseFileName.parse(name), day < today else { return }
        let directoryFD = open(layout.timelapseDirectory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard directoryFD >= 0 else { return }
        defer { close(directoryFD) }
        if unlinkat(directoryFD, name, 0) == 0 {
            logger.notice("deleted \(layout.timelapseDirectory)/\(name): its day's retention is over")
        } else if errno != ENOENT {
            logger.error("could not delete \(layout.timelapseDirectory)/\(name): \(String(cString: strerror(errno)))")
        }
    }

    /// The days that have an event log (`events/YYYYMMDD.jsonl`).
    private func eventLogDays() -> [CalendarDate] {
        guard let directory = opendir(eventLogDirectory) else { return [] }
        defer { closedir(directory) }
        var days: [CalendarDate] = []
        LibraryScanner.forEachEntry(directory) { name, result in
            let text = String(cString: name)
            guard text.hasSuffix(".jsonl"), case .success(let info) = result, info.st_mode & S_IFMT == S_IFREG,
                  let day = CalendarDate(folderName: text.dropLast(6)) else { return }
            days.append(day)
        }
        return days
    }

    /// Start dates of the recordings in `<root>/.incoming`: in progress, or left by a
    /// crash for salvage to move into those dates' folders.
    private func incomingDates() -> Set<CalendarDate> {
        guard let directory = opendir(layout.incomingDirectory) else { return [] }
        defer { closedir(directory) }
        var dates: Set<CalendarDate> = []
        LibraryScanner.forEachEntry(directory) { name, _ in
            if let (_, time) = LibraryLayout.parseIncomingName(String(cString: name)) { dates.insert(CalendarDate(time)) }
        }
        return dates
    }

    private func logReportsOnce(_ reports: [LibraryReport]) {
        for report in reports where Self.reported.withLock({ $0.insert(layout.root + "/" + report.relativePath).inserted }) {
            logger.warning("leaving \(layout.root)/\(report.relativePath) alone: \(report.reason)")
        }
    }

    /// Paths already reported by any purger in this process, so a stray name in the
    /// library is logged once, not at every purge.
    private static let reported = Locked<Set<String>>([])
}
