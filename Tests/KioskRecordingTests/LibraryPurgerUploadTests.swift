import Foundation
import KioskCore
import KioskTestSupport
import Logging
import XCTest

@testable import KioskRecording

/// Retention and the disk guard with files waiting for upload, on real folders.
final class LibraryPurgerUploadTests: XCTestCase {
    let today = CalendarDate(year: 2026, month: 3, day: 15)!  // a literal, valid date

    func write(_ path: String, bytes: Int) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(repeating: 0x5A, count: bytes)), path)
    }

    func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    func testRetentionKeepsFilesWaitingForUploadUntilTheyAreCopied() throws {
        let folder = TemporaryDirectory()
        let root = folder.path
        let old = today.adding(days: -40).folderName
        try write("\(root)/video/\(old)/101455.mp4", bytes: 1000)
        try write("\(root)/video/\(old)/101555.mp4", bytes: 1000)
        try write("\(root)/photo/\(old)/101455.jpg", bytes: 100)
        var purger = LibraryPurger(layout: LibraryLayout(root: root), retention: RetentionPolicy(retentionDays: 30),
                                   guard: DiskGuardPolicy(floorBytes: 0), logger: Logger(label: "test"))
        purger.uploadHold = UploadHold(waiting: ["video/\(old)/101555.mp4", "photo/\(old)/101455.jpg"])

        let plan = try purger.plan(today: today, bitrate: nil)
        XCTAssertEqual(Set(plan.heldForUpload), ["video/\(old)/101555.mp4", "photo/\(old)/101455.jpg"])
        XCTAssertEqual(plan.deletions.count, 1, "\(plan.deletions)")
        XCTAssertEqual(plan.deletions.first?.files, ["101455.mp4"])
        XCTAssertFalse(plan.deletions.first?.isWholeFolder ?? true)
        XCTAssertTrue(plan.unuploadedFiles.isEmpty)
        purger.apply(plan)
        XCTAssertFalse(exists("\(root)/video/\(old)/101455.mp4"))
        XCTAssertTrue(exists("\(root)/video/\(old)/101555.mp4"))
        XCTAssertTrue(exists("\(root)/photo/\(old)/101455.jpg"))

        // Once copied, the next purge takes the rest, folders and all.
        purger.uploadHold = UploadHold()
        try purger.purge(today: today, bitrate: nil)
        XCTAssertFalse(exists("\(root)/video/\(old)"))
        XCTAssertFalse(exists("\(root)/photo/\(old)"))
    }

    /// A day's event log stays while one of its clips waits for upload, and goes with the
    /// last of them.
    func testAnEventLogStaysWhileItsClipWaitsForUpload() throws {
        let folder = TemporaryDirectory()
        let root = folder.path
        let old = today.adding(days: -40).folderName
        try write("\(root)/video/\(old)/101455-motion.mp4", bytes: 1000)
        try write("\(root)/video/\(old)/111455-manual.mp4", bytes: 1000)
        try write("\(root)/events/\(old).jsonl", bytes: 300)
        var purger = LibraryPurger(layout: LibraryLayout(root: root), retention: RetentionPolicy(retentionDays: 30),
                                   guard: DiskGuardPolicy(floorBytes: 0), logger: Logger(label: "test"))
        purger.uploadHold = UploadHold(waiting: ["video/\(old)/101455-motion.mp4"])
        let plan = try purger.plan(today: today, bitrate: nil)
        XCTAssertEqual(plan.eventLogs, [], "the log of a clip still to be copied stays")
        purger.apply(plan)
        XCTAssertFalse(exists("\(root)/video/\(old)/111455-manual.mp4"))
        XCTAssertTrue(exists("\(root)/video/\(old)/101455-motion.mp4"))
        XCTAssertTrue(exists("\(root)/events/\(old).jsonl"))

        purger.uploadHold = UploadHold()
        try purger.purge(today: today, bitrate: nil)
        XCTAssertFalse(exists("\(root)/video/\(old)"))
        XCTAssertFalse(exists("\(root)/events/\(old).jsonl"), "copied: the log goes with the clip")
    }

    func testTheDiskGuardTakesWaitingFilesOnlyToKeepTheDiskFromFillingAndSaysSo() throws {
        let folder = TemporaryDirectory()
        let root = folder.path
        let yesterday = today.adding(days: -1).folderName
        try write("\(root)/video/\(yesterday)/101455.mp4", bytes: 4096)
        var purger = LibraryPurger(layout: LibraryLayout(root: root), retention: RetentionPolicy(retentionDays: 30),
                                   guard: DiskGuardPolicy(floorBytes: Int64.max / 4), logger: Logger(label: "test"))
        purger.uploadHold = UploadHold(waiting: ["video/\(yesterday)/101455.mp4"])
        let plan = try purger.plan(today: today, bitrate: nil)
        XCTAssertTrue(plan.heldForUpload.isEmpty, "retention has nothing to do with a day-old file")
        XCTAssertEqual(plan.unuploadedFiles, ["video/\(yesterday)/101455.mp4"])
        XCTAssertGreaterThan(plan.unuploadedBytes, 0)
        XCTAssertEqual(plan.deletions.first?.reason, .space)
    }
}
