import Foundation
import KioskCore
import KioskTestSupport
import Logging
import XCTest

@testable import KioskRecording

/// Retention and the disk guard on real folders: symlinks pointing out of the library,
/// junk names, and a real small filesystem filled up.
final class LibraryPurgerTests: XCTestCase {
    let today = CalendarDate(year: 2026, month: 3, day: 15)!  // a literal, valid date
    let logger = Logger(label: "test")

    func day(_ age: Int) -> CalendarDate { today.adding(days: -age) }

    // MARK: Helpers

    func makeDirectory(_ path: String) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func write(_ path: String, bytes: Int) throws {
        try makeDirectory((path as NSString).deletingLastPathComponent)
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(repeating: 0x5A, count: bytes)), path)
    }

    func symlink(_ path: String, to target: String) throws {
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
    }

    /// Whether something exists at `path` itself (a dangling or any symlink counts; nothing is followed).
    func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    func isSymlink(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFLNK
    }

    /// Everything below `path`, symlinks listed but not followed (`find -P`).
    func listing(_ path: String) throws -> [String] {
        try Tool.run("find", ["-P", path, "-mindepth", "1"]).stdout.split(separator: "\n").map(String.init).sorted()
    }

    func purger(_ root: String, days: Int = 30, guard diskGuard: DiskGuardPolicy = DiskGuardPolicy(floorBytes: 0),
                logger: Logger? = nil) -> LibraryPurger {
        LibraryPurger(layout: LibraryLayout(root: root), retention: RetentionPolicy(retentionDays: days),
                      guard: diskGuard, logger: logger ?? self.logger)
    }

    /// Today and the 39 days before in video, photo and audio (two small files each),
    /// plus everything that must survive a purge. Returns the paths outside the root.
    @discardableResult
    func makeLibrary(root: String, outside: String) throws -> (precious: String, linkTarget: String, directoryTarget: String) {
        for age in 0..<40 {
            for kind in MediaKind.allCases {
                let folder = "\(root)/\(kind.rawValue)/\(day(age).folderName)"
                try write("\(folder)/000000.\(kind.fileExtension)", bytes: 100)
                try write("\(folder)/000100.\(kind.fileExtension)", bytes: 50)
            }
        }
        // Junk: not dates, files at the wrong level, a folder dated in the future.
        try write("\(root)/video/notes/todo.txt", bytes: 10)
        try makeDirectory("\(root)/video/2026-01-01")
        try makeDirectory("\(root)/photo/20261332")
        try makeDirectory("\(root)/audio/202601011")
        try write("\(root)/video/readme.txt", bytes: 10)
        try write("\(root)/photo/20260101", bytes: 10)  // a date's name, but a file
        try write("\(root)/video/20260320/000000.mp4", bytes: 10)
        // A date "folder" that is a symlink to an old folder outside the root.
        let precious = "\(outside)/olddays/precious.mp4"
        try write(precious, bytes: 10)
        try symlink("\(root)/video/20251201", to: "\(outside)/olddays")
        // Symlinks inside an expired folder pointing outside, to a file and to a folder.
        let linkTarget = "\(outside)/target.m4a"
        let directoryTarget = "\(outside)/targetdir/keep.m4a"
        try write(linkTarget, bytes: 10)
        try write(directoryTarget, bytes: 10)
        try symlink("\(root)/audio/\(day(35).folderName)/link.m4a", to: linkTarget)
        try symlink("\(root)/audio/\(day(35).folderName)/dirlink", to: "\(outside)/targetdir")
        // Nested folders inside an expired folder, and a name that is not UTF-8.
        try write("\(root)/video/\(day(33).folderName)/nested/deeper/extra.mp4", bytes: 1000)
        let latin1Name = Array("\(root)/photo/\(day(31).folderName)/caf".utf8CString.dropLast()) + [CChar(bitPattern: 0xE9), 0]
        let fd = open(latin1Name, O_WRONLY | O_CREAT | O_EXCL, 0o644)
        XCTAssertGreaterThanOrEqual(fd, 0, "cannot create a Latin-1 file name")
        close(fd)
        return (precious, linkTarget, "\(outside)/targetdir/keep.m4a")
    }

    // MARK: Scan

    func testScanSeesEveryNameWithoutFollowingSymlinks() throws {
        let folder = TemporaryDirectory()
        let root = folder.path + "/media"
        try makeLibrary(root: root, outside: folder.path + "/outside")

        let scan = try LibraryScanner(layout: LibraryLayout(root: root)).scan()
        XCTAssertEqual(scan.problems, [])
        XCTAssertEqual(scan.entries.filter { $0.kind == .video }.count, 45)
        XCTAssertEqual(scan.entries.filter { $0.kind == .photo }.count, 42)
        XCTAssertEqual(scan.entries.filter { $0.kind == .audio }.count, 41)
        XCTAssertEqual(scan.entries.filter { $0.kind == .screen }.count, 40, "screen recordings are purged like the rest")
        XCTAssertEqual(scan.dateFolders.count, 161, "40 days × 4 kinds + the future folder; the symlink is not one")
        XCTAssertEqual(scan.entries.first { $0.name == "20251201" }?.type, .symlink)
        XCTAssertEqual(scan.entries.first { $0.name == "20260101" }?.type, .file)
        XCTAssertEqual(scan.entries.first { $0.name == "notes" }?.type, .directory)

        let linked = try XCTUnwrap(scan.folders(on: day(35)).first { $0.kind == .audio })
        XCTAssertEqual(linked.files.map(\.name), ["000000.m4a", "000100.m4a"])
        XCTAssertEqual(linked.files.map(\.bytes), [100, 50])
        XCTAssertEqual(linked.bytes, 150, "symlinks are not followed, so their targets do not count")
        XCTAssertEqual(linked.otherEntries, 2)
        let now = Int64(Date().timeIntervalSince1970)
        XCTAssertTrue(linked.files.allSatisfy { abs($0.modified - now) < 600 }, "modification times are read")

        let nested = try XCTUnwrap(scan.folders(on: day(33)).first { $0.kind == .video })
        XCTAssertEqual(nested.bytes, 1150, "real subfolders are summed")
        XCTAssertGreaterThanOrEqual(nested.diskBytes, nested.bytes)

        let days = scan.days
        XCTAssertEqual(days.count, 41)
        XCTAssertEqual(days.first?.date, day(39))
        XCTAssertEqual(days.last?.date, CalendarDate(folderName: "20260320"))
        XCTAssertEqual(days.map(\.date), days.map(\.date).sorted())
    }

    func testMissingRootIsAnEmptyLibraryButHasNoFreeSpace() throws {
        let folder = TemporaryDirectory()
        let scan = try LibraryScanner(layout: LibraryLayout(root: folder.path + "/nothing")).scan()
        XCTAssertEqual(scan, LibraryScan())
        XCTAssertThrowsError(try purger(folder.path + "/nothing").plan(today: today, bitrate: nil)) { error in
            XCTAssertTrue("\(error)".contains("cannot read the free space of \(folder.path)/nothing"), "\(error)")
        }
        let space = try LibraryScanner.freeSpace(of: folder.path)
        XCTAssertGreaterThan(space.free, 0)
        XCTAssertGreaterThanOrEqual(space.total, space.free)
    }

    // MARK: Retention on real folders

    func testDryRunDeletesNothingAndApplyDeletesExactlyTheExpiredDays() throws {
        let folder = TemporaryDirectory()
        let root = folder.path + "/media"
        let outside = folder.path + "/outside"
        let (precious, linkTarget, directoryTarget) = try makeLibrary(root: root, outside: outside)
        let inProgress = day(36)
        let purger = purger(root)
        let before = try listing(folder.path)

        let dry = try purger.dryRun(today: today, protected: [inProgress], bitrate: nil)
        XCTAssertEqual(try listing(folder.path), before, "a dry run deletes nothing")
        let plan = try purger.plan(today: today, protected: [inProgress], bitrate: nil)
        // The same plan (free space on this shared disk may move between the two looks).
        XCTAssertEqual(plan.deletions, dry.deletions)
        XCTAssertEqual(plan.reports, dry.reports)
        XCTAssertEqual(plan.protected, dry.protected)
        XCTAssertEqual(plan.canRecord, dry.canRecord)

        let expired = (30..<40).reversed().filter { $0 != 36 }.map(day)  // oldest first
        XCTAssertEqual(plan.deletions.map(\.relativePath),
                       expired.flatMap { date in MediaKind.allCases.map { "\($0.rawValue)/\(date.folderName)" } })
        XCTAssertEqual(plan.deletions.first?.reason, .age(days: 39))
        XCTAssertTrue(plan.canRecord)
        XCTAssertTrue(plan.protected.contains(inProgress))
        let reports = Set(plan.reports)
        for expected in [LibraryReport(relativePath: "video/20251201", reason: "a symlink, not followed"),
                         LibraryReport(relativePath: "video/notes", reason: "not a date"),
                         LibraryReport(relativePath: "video/2026-01-01", reason: "not a date"),
                         LibraryReport(relativePath: "photo/20261332", reason: "not a date"),
                         LibraryReport(relativePath: "audio/202601011", reason: "not a date"),
                         LibraryReport(relativePath: "video/readme.txt", reason: "a file at the wrong level"),
                         LibraryReport(relativePath: "photo/20260101", reason: "a file at the wrong level"),
                         LibraryReport(relativePath: "video/20260320", reason: "in the future — clock wrong?")] {
            XCTAssertTrue(reports.contains(expected), "missing report \(expected)")
        }
        XCTAssertEqual(plan.reports.count, 8)

        let result = purger.apply(plan)
        XCTAssertEqual(result.failures, [])
        XCTAssertEqual(result.deleted, plan.deletions)
        XCTAssertTrue(result.canRecord)
        XCTAssertNil(result.message)
        XCTAssertGreaterThan(result.freedBytes, 0)

        for age in 0..<40 {
            for kind in MediaKind.allCases {
                let path = "\(root)/\(kind.rawValue)/\(day(age).folderName)"
                XCTAssertEqual(exists(path), age < 30 || age == 36, path)
            }
        }
        // Nothing else went: the listing lost exactly the expired folders and what was in them.
        let expiredPrefixes = expired.flatMap { date in MediaKind.allCases.map { "\(root)/\($0.rawValue)/\(date.folderName)" } }
        let survivors = before.filter { path in !expiredPrefixes.contains { path == $0 || path.hasPrefix($0 + "/") } }
        XCTAssertEqual(try listing(folder.path), survivors)
        // What the symlinks pointed at is untouched.
        XCTAssertTrue(exists(precious), "the file behind a date-folder symlink survives")
        XCTAssertTrue(isSymlink("\(root)/video/20251201"), "the date-folder symlink is reported, not deleted")
        XCTAssertTrue(exists(linkTarget), "the target of a symlink inside a deleted folder survives")
        XCTAssertTrue(exists(directoryTarget), "a folder behind a symlink inside a deleted folder keeps its files")

        // A second purge has nothing left to do.
        let again = try purger.plan(today: today, protected: [inProgress], bitrate: nil)
        XCTAssertEqual(again.deletions, [])
    }

    func testRetentionIsConfigurable() throws {
        let folder = TemporaryDirectory()
        let root = folder.path + "/media"
        for age in 0..<3 { try write("\(root)/photo/\(day(age).folderName)/000000.jpg", bytes: 10) }
        let result = try purger(root, days: 1).purge(today: today, bitrate: nil)
        XCTAssertEqual(result.deleted.map(\.date), [day(2), day(1)], "N=1 deletes yesterday, never today")
        XCTAssertEqual(try listing(root + "/photo"), ["\(root)/photo/\(today.folderName)", "\(root)/photo/\(today.folderName)/000000.jpg"])
    }

    /// Timelapse movies go with their day's retention; today's, newer ones, other names
    /// and a symlink (even to an old day's name) stay.
    func testRetentionDeletesOldDaysTimelapseMovies() throws {
        let folder = TemporaryDirectory()
        let root = folder.path + "/media"
        for age in [0, 1, 2, 5] { try write("\(root)/timelapse/\(day(age).folderName).mp4", bytes: 10) }
        try write("\(root)/timelapse/\(day(5).folderName)-2.mp4", bytes: 10)
        try write("\(root)/timelapse/notes.txt", bytes: 10)
        try write(folder.path + "/outside.mp4", bytes: 10)
        try symlink("\(root)/timelapse/\(day(9).folderName).mp4", to: folder.path + "/outside.mp4")
        let plan = try purger(root, days: 2).dryRun(today: today, bitrate: nil)
        XCTAssertEqual(plan.timelapseMovies, ["\(day(2).folderName).mp4", "\(day(5).folderName)-2.mp4", "\(day(5).folderName).mp4"].sorted())
        XCTAssertTrue(exists("\(root)/timelapse/\(day(5).folderName).mp4"), "a dry run deletes nothing")
        try purger(root, days: 2).purge(today: today, bitrate: nil)
        XCTAssertEqual(try listing(root + "/timelapse"), ["\(root)/timelapse/\(day(0).folderName).mp4", "\(root)/timelapse/\(day(1).folderName).mp4",
                                                          "\(root)/timelapse/\(day(9).folderName).mp4", "\(root)/timelapse/notes.txt"].sorted())
        XCTAssertTrue(exists(folder.path + "/outside.mp4"))
    }

    func testDateOfARecordingInIncomingIsProtected() throws {
        let folder = TemporaryDirectory()
        let root = folder.path + "/media"
        let layout = LibraryLayout(root: root)
        let started = LocalTimestamp(year: 2026, month: 1, day: 1, hour: 23, minute: 59)
        try write(layout.incomingPath(.video, started), bytes: 10)
        try write(layout.finalPath(.video, started), bytes: 10)
        try write("\(root)/video/20260102/000000.mp4", bytes: 10)
        let plan = try purger(root).plan(today: today, bitrate: nil)
        XCTAssertEqual(plan.deletions.map(\.relativePath), ["video/20260102"])
        XCTAssertTrue(plan.protected.contains(CalendarDate(started)))
    }

    func testKindFolderThatIsASymlinkIsNotFollowed() throws {
        let folder = TemporaryDirectory()
        let root = folder.path + "/media"
        let elsewhere = folder.path + "/elsewhere/20250101/old.jpg"
        try write(elsewhere, bytes: 10)
        try makeDirectory(root)
        try symlink(root + "/photo", to: folder.path + "/elsewhere")
        let plan = try purger(root).plan(today: today, bitrate: nil)
        XCTAssertEqual(plan.deletions, [])
        XCTAssertEqual(plan.reports, [LibraryReport(relativePath: "photo", reason: "a symlink, not followed")])
        purger(root).apply(plan)
        XCTAssertTrue(exists(elsewhere))
    }

    func testApplyRefusesTodayAndProtectedDatesWhateverThePlanSays() throws {
        let folder = TemporaryDirectory()
        let root = folder.path + "/media"
        try write("\(root)/video/\(today.folderName)/000000.mp4", bytes: 10)
        try write("\(root)/video/\(day(40).folderName)/000000.mp4", bytes: 10)
        var plan = try purger(root).plan(today: today, protected: [day(40)], bitrate: nil)
        XCTAssertEqual(plan.deletions, [])
        plan.deletions = [.init(kind: .video, date: today, bytes: 10, reason: .space),
                          .init(kind: .video, date: day(40), bytes: 10, reason: .age(days: 40))]
        let result = purger(root).apply(plan)
        XCTAssertEqual(result.deleted, [])
        XCTAssertEqual(result.failures.map(\.relativePath), ["video/\(today.folderName)", "video/\(day(40).folderName)"])
        XCTAssertTrue(exists("\(root)/video/\(today.folderName)/000000.mp4"))
        XCTAssertTrue(exists("\(root)/video/\(day(40).folderName)/000000.mp4"))
    }

    func testReportsAreLoggedOncePerProcess() throws {
        let folder = TemporaryDirectory()
        let root = folder.path + "/media"
        try makeDirectory(root + "/audio/notes")
        let messages = LogCapture()
        let logger = Logger(label: "test") { _ in CapturingLogHandler(capture: messages) }
        let purger = purger(root, logger: logger)
        _ = try purger.plan(today: today, bitrate: nil)
        _ = try purger.plan(today: today, bitrate: nil)
        _ = try self.purger(root, logger: logger).dryRun(today: today, bitrate: nil)
        XCTAssertEqual(messages.all.filter { $0.contains("notes") },
                       ["warning: leaving \(root)/audio/notes alone: not a date"])
    }

    // MARK: Disk guard on a real filesystem

    /// A 4 MiB tmpfs filled with six days and today: a floor over the free space makes
    /// the oldest days go first, until free space is back over it; a floor no deletion
    /// can reach leaves only today, and recording is refused with a clear message.
    /// Three old days of continuous footage with event clips among it, a day of clips only,
    /// their snapshots and event logs, and a clip being written today.
    func makeEventLibrary(root: String) throws {
        for age in [10, 9, 8] {
            let date = day(age).folderName
            try write("\(root)/video/\(date)/120000.mp4", bytes: 40_000)
            try write("\(root)/video/\(date)/120100.mp4", bytes: 40_000)
            try write("\(root)/video/\(date)/120030-motion.mp4", bytes: 20_000)
            try write("\(root)/video/\(date)/\(LibraryIndex.fileName)", bytes: 30)
            try write("\(root)/photo/\(date)/120031-motion.jpg", bytes: 5_000)
            try write("\(root)/audio/\(date)/120000.m4a", bytes: 8_000)
            try write("\(root)/events/\(date).jsonl", bytes: 300)
        }
        try write("\(root)/video/\(day(2).folderName)/080000-manual.mp4", bytes: 20_000)
        try write("\(root)/video/\(day(2).folderName)/\(LibraryIndex.fileName)", bytes: 30)
        try write("\(root)/events/\(day(2).folderName).jsonl", bytes: 300)
        try write("\(root)/video/\(today.folderName)/090000.mp4", bytes: 40_000)
        try write("\(root)/.incoming/video-\(today.folderName)-091500+motion.mp4.part", bytes: 20_000)
    }

    func files(_ root: String) throws -> [String] {
        try listing(root).filter { !$0.hasSuffix("/" + LibraryIndex.fileName) }.map { String($0.dropFirst(root.count + 1)) }
            .filter { $0.contains(".") }
    }

    func testRetentionKeepsEventClipsForTheirOwnPeriod() throws {
        let folder = TemporaryDirectory()
        let root = folder.path
        try makeEventLibrary(root: root)
        let purger = LibraryPurger(layout: LibraryLayout(root: root), retention: RetentionPolicy(retentionDays: 9, eventRetentionDays: 10),
                                   guard: DiskGuardPolicy(floorBytes: 0), logger: logger)
        let plan = try purger.plan(today: today, bitrate: nil)
        XCTAssertEqual(plan.deletions.map(\.description).map { $0.replacingOccurrences(of: #" \(.*\)"#, with: "", options: .regularExpression) }, [
            "video/\(day(10).folderName): 10 days old", "photo/\(day(10).folderName): 10 days old", "audio/\(day(10).folderName): 10 days old",
            "video/\(day(9).folderName), continuous footage: 9 days old", "audio/\(day(9).folderName): 9 days old",
        ])
        XCTAssertEqual(plan.deletions[3].files, ["120000.mp4", "120100.mp4"])
        XCTAssertEqual(plan.eventLogs, [day(10)])
        let result = purger.apply(plan)
        XCTAssertEqual(result.failures, [])
        let left = try files(root)
        XCTAssertFalse(left.contains { $0.contains(day(10).folderName) }, "day 10 is past both periods: \(left)")
        XCTAssertEqual(left.filter { $0.contains(day(9).folderName) },
                       ["events/\(day(9).folderName).jsonl", "photo/\(day(9).folderName)/120031-motion.jpg",
                        "video/\(day(9).folderName)/120030-motion.mp4"], "day 9 keeps its clip, snapshot and log")
        XCTAssertTrue(exists("\(root)/video/\(day(9).folderName)/\(LibraryIndex.fileName)"), "the clip's index line stays")
        XCTAssertEqual(left.filter { $0.contains(day(8).folderName) }.count, 6, "day 8 is younger than both")
    }

    func testTheDiskGuardTakesEveryOlderDaysFootageBeforeAnyClipAndNeverTheClipBeingWritten() throws {
        let folder = TemporaryDirectory()
        let root = folder.path
        try makeEventLibrary(root: root)
        let scan = try LibraryScanner(layout: LibraryLayout(root: root)).scan()
        let total = Int64(1) << 30
        func plan(short: Int64) -> PurgePlan {
            PurgePlanner.plan(scan: scan, freeBytes: 100 << 20, totalBytes: total, today: today, protected: [today], bitrate: nil,
                               retention: RetentionPolicy(retentionDays: 3650), diskGuard: DiskGuardPolicy(floorBytes: (100 << 20) + short),
                               eventLogDays: [day(10), day(9), day(8), day(2)])
        }
        // A little short: the oldest day's footage (two videos and the sound) is enough.
        let little = plan(short: 1)
        XCTAssertEqual(little.deletions.map(\.relativePath), ["video/\(day(10).folderName)", "audio/\(day(10).folderName)"])
        XCTAssertEqual(little.deletions.map(\.share), [.continuous, .all])
        XCTAssertEqual(little.eventLogs, [])

        // Short of more than all the footage: every day's footage, then the oldest clips.
        // The guard counts a day's footage as the day less its clips (the index with the footage).
        let footage = scan.dateFolders.filter { $0.date < today }
            .reduce(Int64(0)) { $0 + $1.diskBytes - PurgePlanner.eventShareBytes($1) }
        let more = plan(short: footage + 1)
        let order = more.deletions.map { "\($0.relativePath) \($0.share.rawValue)" }
        XCTAssertEqual(order, [day(10), day(9), day(8)].flatMap { ["video/\($0.folderName) continuous", "audio/\($0.folderName) all"] }
                       + ["video/\(day(10).folderName) all", "photo/\(day(10).folderName) all"],
                       "the oldest day's clips go last, the rest of its folder with them: \(order)")
        XCTAssertEqual(more.eventLogs, [day(10)], "the log goes with its day's clips")
        let result = LibraryPurger(layout: LibraryLayout(root: root), logger: logger).apply(more)
        XCTAssertEqual(result.failures, [])
        XCTAssertFalse(exists("\(root)/video/\(day(10).folderName)"), "a folder left with only its index goes")
        XCTAssertFalse(exists("\(root)/events/\(day(10).folderName).jsonl"))
        let left = try files(root)
        XCTAssertEqual(left.filter { $0.hasPrefix("video/") }, [
            "video/\(day(9).folderName)/120030-motion.mp4", "video/\(day(8).folderName)/120030-motion.mp4",
            "video/\(day(2).folderName)/080000-manual.mp4", "video/\(today.folderName)/090000.mp4",
        ])
        XCTAssertTrue(left.contains(".incoming/video-\(today.folderName)-091500+motion.mp4.part"), "the clip being written stays")

        // Everything older: every day goes, today's recording and the clip being written stay.
        let all = plan(short: total)
        XCTAssertFalse(all.canRecord)
        XCTAssertFalse(all.deletions.contains { $0.date == today })
        XCTAssertEqual(all.eventLogs, [day(10), day(9), day(8), day(2)])
    }

    func testDiskGuardDeletesOldestDaysOnARealSmallFilesystem() throws {
        let folder = TemporaryDirectory()
        let mountPoint = folder.path + "/tiny"
        try makeDirectory(mountPoint)
        let mounted = try Tool.run("mount", ["-t", "tmpfs", "-o", "size=4m", "tmpfs", mountPoint], allowFailure: true)
        guard mounted.status == 0 else { throw XCTSkip("cannot mount a tmpfs here (\(mounted.stderr)); the HIL guest runs this test (scripts/hil/scenarios/capture.sh)") }
        defer { _ = try? Tool.run("umount", [mountPoint], allowFailure: true) }

        let root = mountPoint + "/media"
        let dayBytes = 384 << 10  // 256 KiB of video + 128 KiB of sound a day
        for age in 0...6 {
            try write("\(root)/video/\(day(age).folderName)/120000.mp4", bytes: 256 << 10)
            if age > 0 { try write("\(root)/audio/\(day(age).folderName)/120000.m4a", bytes: 128 << 10) }
        }
        let (free, _) = try LibraryScanner.freeSpace(of: root)
        // Two days are not enough, three are.
        let floor = free + Int64(2 * dayBytes) + (100 << 10)
        let diskGuard = DiskGuardPolicy(floorBytes: floor)
        let purger = purger(root, days: 3650, guard: diskGuard)

        let plan = try purger.plan(today: today, bitrate: nil)
        XCTAssertEqual(plan.space.floorBytes, floor)
        XCTAssertEqual(plan.deletions.map(\.relativePath), [6, 5, 4].flatMap { ["video/\(day($0).folderName)", "audio/\(day($0).folderName)"] })
        XCTAssertEqual(Set(plan.deletions.map(\.reason)), [.space])
        XCTAssertEqual(plan.bytesToFree, Int64(3 * dayBytes))
        XCTAssertTrue(plan.canRecord)

        let result = purger.apply(plan)
        XCTAssertEqual(result.failures, [])
        let after = try XCTUnwrap(result.freeBytes)
        XCTAssertGreaterThanOrEqual(after, floor, "free space is back over the floor")
        XCTAssertEqual(after, try LibraryScanner.freeSpace(of: root).free)
        XCTAssertTrue(result.canRecord)
        for age in 0...3 { XCTAssertTrue(exists("\(root)/video/\(day(age).folderName)"), "age \(age) stays") }
        for age in 4...6 { XCTAssertFalse(exists("\(root)/video/\(day(age).folderName)"), "age \(age) goes") }

        // A floor of the whole disk: everything but today goes, and recording is refused.
        let greedy = self.purger(root, days: 3650, guard: DiskGuardPolicy(floorPercent: 100))
        let last = try greedy.purge(today: today, bitrate: nil)
        XCTAssertEqual(last.deleted.map(\.date), [day(3), day(3), day(2), day(2), day(1), day(1)])
        XCTAssertFalse(last.canRecord)
        let message = try XCTUnwrap(last.message)
        XCTAssertTrue(message.contains("is below the floor 4.0 MiB"), message)
        XCTAssertTrue(message.contains("(only today's recordings are left)"), message)
        XCTAssertTrue(exists("\(root)/video/\(today.folderName)/120000.mp4"), "today's recording is never deleted")
        let check = try greedy.checkSpace(bitrate: nil)
        XCTAssertTrue(check.isBelowFloor)
        XCTAssertTrue(check.mustStopRecording, "the hard floor is the floor itself below 256 MiB")
    }
}

/// Log lines as "level: message", collected across threads.
final class LogCapture: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []

    func append(_ line: String) { lock.withLock { lines.append(line) } }
    var all: [String] { lock.withLock { lines } }
}

struct CapturingLogHandler: LogHandler {
    let capture: LogCapture
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) { capture.append("\(event.level): \(event.message)") }
}
