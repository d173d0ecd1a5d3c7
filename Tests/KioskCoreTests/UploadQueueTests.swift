import XCTest
@testable import KioskCore

/// The upload's pure rules: which files are queued and as what kind, object keys, the
/// queue file (any bytes in, never a trap), backoff, and what retention may delete.
final class UploadQueueTests: XCTestCase {
    func file(_ text: String, file: StaticString = #filePath, line: UInt = #line) throws -> LibraryFilePath {
        try XCTUnwrap(LibraryFilePath(relative: text), text, file: file, line: line)
    }

    // MARK: Which files

    func testOnlyFinishedLibraryFilesAreQueued() throws {
        let root = "/var/lib/kioskcam/media"
        XCTAssertEqual(LibraryFilePath(absolute: root + "/video/20261122/101455.mp4", root: root)?.relativePath, "video/20261122/101455.mp4")
        XCTAssertEqual(LibraryFilePath(absolute: root + "/photo/20261122/101455-motion.jpg", root: root + "/")?.relativePath,
                       "photo/20261122/101455-motion.jpg")
        let refused = [
            root + "/.incoming/video-20261122-101455.mp4.part",  // being written
            root + "/video/20261122/101455.mp4.part",
            root + "/video/20261122/.index",
            root + "/video/20261122/101455.m4a",  // wrong extension for the tree
            root + "/video/2026-11-22/101455.mp4",  // not a date folder
            root + "/video/20261332/101455.mp4",
            root + "/video/101455.mp4",  // wrong level
            root + "/video/20261122/sub/101455.mp4",
            root + "/video/20261122/../../etc/passwd.mp4",
            root + "/events/20261122.jsonl",
            "/elsewhere/video/20261122/101455.mp4",
            root + "x/video/20261122/101455.mp4",
            root + "/video/20261122/10 1455.mp4",
            root + "/video/20261122/" + String(repeating: "1", count: 200) + ".mp4",
        ]
        for path in refused { XCTAssertNil(LibraryFilePath(absolute: path, root: root), path) }
    }

    func testKindsPutEventFilesUnderEventsOnly() throws {
        XCTAssertEqual(try file("video/20261122/101455.mp4").uploadKind, .video)
        XCTAssertEqual(try file("video/20261122/101455-1.mp4").uploadKind, .video)
        XCTAssertEqual(try file("video/20261122/101455-motion.mp4").uploadKind, .events)
        XCTAssertEqual(try file("video/20261122/101455-manual-2.mp4").uploadKind, .events)
        XCTAssertEqual(try file("photo/20261122/101455.jpg").uploadKind, .photo)
        XCTAssertEqual(try file("photo/20261122/101455-motion.jpg").uploadKind, .events)
        XCTAssertEqual(try file("audio/20261122/101455.m4a").uploadKind, .audio)
    }

    // MARK: Keys

    func testKeysArePrefixDeviceAndLibraryPath() throws {
        let location = try XCTUnwrap(S3Location(url: "s3://kiosk-footage/site-a/cams/"))
        XCTAssertEqual(location.bucket, "kiosk-footage")
        XCTAssertEqual(location.prefix, "site-a/cams")
        let clip = try file("video/20261122/101455-motion.mp4")
        XCTAssertEqual(location.key(for: clip, deviceID: "3F2504E0-4F89-11D3-9A0C-0305E82C3301"),
                       "site-a/cams/3F2504E0-4F89-11D3-9A0C-0305E82C3301/video/20261122/101455-motion.mp4")
        XCTAssertEqual(location.key(for: clip, deviceID: nil), "site-a/cams/video/20261122/101455-motion.mp4")
        XCTAssertEqual(location.key(for: clip, deviceID: "../evil"), "site-a/cams/video/20261122/101455-motion.mp4")
        let bare = try XCTUnwrap(S3Location(url: "s3://bucket"))
        XCTAssertEqual(bare.key(for: clip, deviceID: "abc-1"), "abc-1/video/20261122/101455-motion.mp4")
        XCTAssertEqual(bare.objectURL(endpoint: "http://127.0.0.1:9000/", key: "k/a.mp4"), "http://127.0.0.1:9000/bucket/k/a.mp4")
    }

    func testBadURLsAndEndpointsAreRefused() {
        for url in ["", "s3://", "s3://ab", "s3://Bucket/x", "s3://-bucket", "s3://bucket-", "s3://bu..cket", "s3://bucket//x",
                    "s3://bucket/a//b", "s3://bucket/../x", "s3://bucket/a b", "s3://bucket/ä", "http://bucket/x",
                    "s3://" + String(repeating: "b", count: 64)] {
            XCTAssertNil(S3Location(url: url), url)
        }
        for good in ["http://127.0.0.1:9000", "https://s3.example.net", "https://s3.example.net/", "http://[::1]:9000", "http://minio"] {
            XCTAssertTrue(S3Location.isValidEndpoint(good), good)
        }
        for bad in ["127.0.0.1:9000", "ftp://x", "http://", "http://host:0", "http://host:70000", "http://host/path",
                    "http://user@host", "http://ho st", "http://host:9000x"] {
            XCTAssertFalse(S3Location.isValidEndpoint(bad), bad)
        }
    }

    // MARK: The queue file

    func testTheQueueRoundTripsAndKeepsItsOrder() throws {
        var queue = UploadQueue()
        queue.add(.init(file: try file("video/20261122/101455.mp4"), bytes: 1_000_000))
        queue.add(.init(file: try file("photo/20261122/101500.jpg"), bytes: 20_000, attempts: 3, notBefore: 1_790_000_000))
        queue.add(.init(file: try file("audio/20261121/235959.m4a"), bytes: 0))
        queue.add(.init(file: try file("video/20261122/101455.mp4"), bytes: 1_000_001))  // an update keeps the place
        let (parsed, damaged) = UploadQueue.parse(Array(queue.render().utf8))
        XCTAssertEqual(damaged, 0)
        XCTAssertEqual(parsed, queue)
        XCTAssertEqual(parsed.entries.map(\.file.relativePath),
                       ["video/20261122/101455.mp4", "photo/20261122/101500.jpg", "audio/20261121/235959.m4a"])
        XCTAssertEqual(parsed.bytes, 1_020_001)
        XCTAssertTrue(queue.render().hasPrefix("# kioskcam upload queue 1\n"))
    }

    func testDamagedLinesAreCountedAndSkipped() {
        let text = """
        # kioskcam upload queue 1
        0\t0\t10\tvideo/20261122/101455.mp4
        0\t0\t10
        x\t0\t10\tvideo/20261122/101456.mp4
        -1\t0\t10\tvideo/20261122/101457.mp4
        0\t99999999999999999999\t10\tvideo/20261122/101458.mp4
        0\t0\t10\t.incoming/video-20261122-101459.mp4.part
        0\t0\t10\tvideo/20261122/101500.mp4\textra
        2\t1790000000\t5\tphoto/20261122/101501.jpg

        """
        let (queue, damaged) = UploadQueue.parse(Array(text.utf8))
        XCTAssertEqual(queue.entries.map(\.file.relativePath), ["video/20261122/101455.mp4", "photo/20261122/101501.jpg"])
        XCTAssertEqual(damaged, 6)
        XCTAssertEqual(queue.entries.last?.attempts, 2)
    }

    func testAnyBytesParseWithoutATrap() {
        var generator = SystemRandomNumberGenerator()
        let valid = Array("0\t0\t10\tvideo/20261122/101455.mp4\n".utf8)
        let alphabet = Array("0123456789\t\n/.-#mp4jpgvideo20261122\u{0}\u{FF}".utf8)
        for round in 0..<3000 {
            var bytes: [UInt8]
            switch round % 3 {
            case 0: bytes = (0..<Int.random(in: 0...300, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            case 1: bytes = (0..<Int.random(in: 0...300, using: &generator)).map { _ in alphabet.randomElement(using: &generator) ?? 0 }
            default:
                bytes = valid + valid
                for _ in 0..<Int.random(in: 1...6, using: &generator) {
                    bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
                }
            }
            let (queue, damaged) = UploadQueue.parse(bytes)
            XCTAssertGreaterThanOrEqual(damaged, 0)
            XCTAssertLessThanOrEqual(queue.count, bytes.count)
            // Whatever was accepted renders and parses back the same.
            XCTAssertEqual(UploadQueue.parse(Array(queue.render().utf8)).queue, queue)
        }
        let huge = Array(repeating: UInt8(ascii: "9"), count: 100_000)
        XCTAssertEqual(UploadQueue.parse(huge).damagedLines, 1)
    }

    func testDueEntriesFailuresAndUploadNow() throws {
        var queue = UploadQueue()
        let a = try file("video/20261122/101455.mp4"), b = try file("video/20261122/101555.mp4")
        queue.add(.init(file: a, bytes: 1))
        queue.add(.init(file: b, bytes: 1))
        let backoff = UploadBackoff(initialSeconds: 10, maximumSeconds: 900)
        XCTAssertEqual(queue.next(now: 1000)?.file, a)
        queue.failed(a, now: 1000, backoff: backoff, jitter: 0)
        XCTAssertEqual(queue.entries[0].attempts, 1)
        XCTAssertEqual(queue.entries[0].notBefore, 1010)
        XCTAssertEqual(queue.next(now: 1000)?.file, b, "a waiting file lets the next one go")
        queue.failed(a, now: 1010, backoff: backoff, jitter: 0)
        XCTAssertEqual(queue.entries[0].notBefore, 1030)
        queue.makeAllDue()
        XCTAssertEqual(queue.next(now: 0)?.file, a)
        // A wait from a clock that was set back is cut to the longest wait.
        queue.add(.init(file: a, bytes: 1, attempts: 2, notBefore: 5_000_000_000))
        queue.clampWaits(now: 2000, backoff: backoff)
        XCTAssertEqual(queue.entries[0].notBefore, 2900)
        queue.remove(a)
        XCTAssertEqual(queue.relativePaths, ["video/20261122/101555.mp4"])
    }

    func testBackoffDoublesUpToItsCapAndJitterOnlyShortens() {
        let backoff = UploadBackoff(initialSeconds: 10, maximumSeconds: 900)
        XCTAssertEqual((0...9).map { backoff.delay(failures: $0) }, [0, 10, 20, 40, 80, 160, 320, 640, 900, 900])
        XCTAssertEqual(backoff.delay(failures: Int.max), 900)
        XCTAssertEqual(backoff.delay(failures: 1, jitter: 1), 8)
        XCTAssertEqual(backoff.delay(failures: 1, jitter: .nan), 10)
        XCTAssertEqual(backoff.delay(failures: 1, jitter: 7), 8)
        XCTAssertEqual(backoff.notBefore(now: Int64.max - 1, failures: 3), Int64.max)
        XCTAssertEqual(UploadBackoff(initialSeconds: .infinity, maximumSeconds: -1), UploadBackoff(initialSeconds: 10, maximumSeconds: 10))
    }

    // MARK: Retention and the disk guard

    func testRetentionHoldsWaitingFilesAndTheGuardNamesThem() throws {
        let date = try XCTUnwrap(CalendarDate(year: 2026, month: 11, day: 1))
        let hold = UploadHold(waiting: ["video/20261101/101455.mp4", "photo/20261101/101455.jpg"])
        let (deletable, held) = hold.retentionSplit(kind: .video, date: date, names: ["101455.mp4", "101555.mp4", "101455-motion.mp4"])
        XCTAssertEqual(deletable, ["101555.mp4", "101455-motion.mp4"])
        XCTAssertEqual(held, ["101455.mp4"])
        XCTAssertEqual(hold.unuploaded(kind: .video, date: date, names: ["101455.mp4", "101555.mp4"]), ["101455.mp4"])
        XCTAssertEqual(hold.unuploaded(kind: .audio, date: date, names: ["101455.mp4"]), [], "the kind is part of the name")
        XCTAssertTrue(UploadHold().retentionSplit(kind: .video, date: date, names: ["a.mp4"]).held.isEmpty)
    }

    // MARK: The day's index

    func testUploadedMarksLeaveOldIndexReadersAlone() {
        let text = LibraryIndex.line(name: "101455.mp4", seconds: 60) + LibraryIndex.line(name: "101555.mp4", seconds: 30.5)
            + LibraryIndex.uploadedLine(name: "101455.mp4", etag: "\"0123456789abcdef0123456789abcdef\"\n\t")
        XCTAssertEqual(LibraryIndex.parse(text), ["101455.mp4": 60, "101555.mp4": 30.5])
        XCTAssertEqual(LibraryIndex.uploadedNames(text), ["101455.mp4"])
        XCTAssertEqual(LibraryIndex.uploadedLine(name: "a.mp4", etag: ""), "a.mp4\tuploaded\t-\n")
    }

    // MARK: Configuration

    func testUploadSettingsAndTheirErrors() throws {
        let c = try Configuration(toml: """
        [upload]
        url = "s3://footage/board"
        endpoint = "http://127.0.0.1:9000"
        access_key_id = "kiosk"
        secret_access_key_file = "/etc/kioskcam/s3-secret"
        max_kbps = 800
        """)
        XCTAssertTrue(c.upload.isEnabled)
        XCTAssertEqual(c.upload.location?.bucket, "footage")
        XCTAssertEqual(c.upload.maxBytesPerSecond, 100_000)
        XCTAssertEqual(c.upload.kinds, Set(UploadKind.allCases))
        XCTAssertNil(c.upload.problem)
        XCTAssertEqual(Configuration().upload.effectiveEndpoint, "https://s3.us-east-1.amazonaws.com")
        XCTAssertFalse(Configuration().upload.isEnabled)
        XCTAssertNil(Configuration().upload.problem)

        let refused: [(String, String)] = [
            ("url = \"https://bucket/x\"", "s3://BUCKET/PREFIX"),
            ("url = \"s3://My_Bucket\"", "lowercase letters"),
            ("endpoint = \"127.0.0.1:9000\"", "http://127.0.0.1:9000"),
            ("region = \"EU West\"", "lowercase letters, digits and hyphens"),
            ("access_key_id = \"key:with:colons\"", "the secret goes in secret_access_key_file"),
            ("secret_access_key_file = \"s3-secret\"", "absolute path"),
            ("kinds = []", "one or more of \"video\", \"photo\", \"audio\", \"events\""),
            ("kinds = [\"videos\"]", "one or more of"),
            ("kinds = \"video\"", "a list"),
            ("max_kbps = -1", "0 to 10000000"),
            ("delete_after_upload = \"yes\"", "true or false"),
            ("secret_access_key = \"abc\"", "[upload] knows: access_key_id, delete_after_upload"),
        ]
        for (line, expected) in refused {
            do throws(ConfigurationError) {
                _ = try Configuration(toml: "[upload]\n" + line + "\n")
                XCTFail("\(line) should be refused")
            } catch {
                XCTAssertTrue(error.description.contains(expected), "\(line): \(error)")
                XCTAssertTrue(error.description.contains("upload."), "\(line): names the key: \(error)")
            }
        }
        var missing = Configuration().upload
        missing.url = "s3://footage"
        XCTAssertEqual(missing.problem?.key, "upload.access_key_id")
        missing.accessKeyID = "kiosk"
        XCTAssertEqual(missing.problem?.key, "upload.secret_access_key_file")
        XCTAssertTrue(missing.problem?.description.contains("chmod 600") ?? false)
    }
}
