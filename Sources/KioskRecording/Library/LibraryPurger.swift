import Glibc
import KioskCore
import Logging

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
/// continuous footage first, their event clips (`HHMMSS-motion.mp4`) last. What goes is
/// `PurgePlanner`'s decision (KioskCore, no I/O); this file is the one job of carrying it
/// out safely on a real disk (its length is the care below, not a second job).
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
///
/// Over 400 lines as one thing: the purge's I/O — scan, delete, re-check free space, log
/// — whose every step has a failure the user must read; what to delete is decided by the
/// pure `PurgePlanner` (KioskCore/Library).
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
        var plan = PurgePlanner.plan(scan: scan, freeBytes: free, totalBytes: total, today: today,
                             protected: protected.union(incomingDates()), bitrate: bitrate,
                             retention: retention, diskGuard: diskGuard, eventLogDays: eventLogDays(), hold: uploadHold)
        plan.timelapseMovies = retention.expiredTimelapseFiles(timelapseNames(), today: today)
        logReportsOnce(plan.reports)
        return plan
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
