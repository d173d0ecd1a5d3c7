import Crypto
import Foundation
import Glibc
import KioskCore
import KioskRecording
import KioskTestSupport
import KioskUpload
import Logging
import XCTest

/// Uploads against a real S3 server (moto, started here): files arrive byte-identical,
/// the queue survives a server cut and a restart, `max_kbps` holds, and bad settings
/// are clear errors.
final class UploaderTests: XCTestCase {
    let logger = Logger(label: "test")

    /// A media root, a state directory and a secret file under one temp folder.
    struct Board {
        let folder = TemporaryDirectory("kioskcam-upload")
        var media: String { folder.path + "/media" }
        var state: String { folder.path + "/state" }
        var secretFile: String { folder.path + "/s3-secret" }

        init() throws {
            try FileManager.default.createDirectory(atPath: folder.path + "/state", withIntermediateDirectories: true)
            try "testing-secret-key\n".write(toFile: folder.path + "/s3-secret", atomically: true, encoding: .utf8)
        }

        /// Writes `bytes` random bytes at `relative` below the media root.
        @discardableResult
        func write(_ relative: String, bytes: Int) throws -> [UInt8] {
            var generator = SystemRandomNumberGenerator()
            let data = (0..<bytes).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let path = media + "/" + relative
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(data).write(to: URL(fileURLWithPath: path))
            return data
        }

        func upload(_ server: MotoServer, bucket: String = "footage", maxKbps: Int = 0) -> Configuration.Upload {
            var upload = Configuration.Upload()
            upload.url = "s3://\(bucket)/boards"
            upload.endpoint = server.endpoint
            upload.accessKeyID = "testing"
            upload.secretAccessKeyFile = secretFile
            upload.maxKbps = maxKbps
            return upload
        }

        func settings(_ upload: Configuration.Upload) -> Uploader.Settings {
            var settings = Uploader.Settings(upload: upload, layout: LibraryLayout(root: media), stateDirectory: state, deviceID: "board-1")
            settings.backoff = UploadBackoff(initialSeconds: 1, maximumSeconds: 2)
            settings.pollSeconds = 0.5
            return settings
        }
    }

    func client(_ upload: Configuration.Upload) throws -> S3Client {
        S3Client(.init(endpoint: upload.effectiveEndpoint, location: try XCTUnwrap(upload.location), region: upload.region,
                       accessKeyID: upload.accessKeyID, secretAccessKey: "testing-secret-key"))
    }

    func testFilesArriveByteIdenticalAndAreMarkedInTheIndex() throws {
        let server = try MotoServer()
        defer { server.stop() }
        let board = try Board()
        let upload = board.upload(server)
        try client(upload).createBucket()
        let files = ["video/20261122/101455.mp4": 3_000_123, "photo/20261122/101500-motion.jpg": 40_000,
                     "audio/20261122/101600.m4a": 1, "video/20261122/101700.mp4": 0]
        var contents: [String: [UInt8]] = [:]
        for (name, size) in files { contents[name] = try board.write(name, bytes: size) }

        let uploader = try Uploader(board.settings(upload), logger: logger)
        uploader.start()
        defer { uploader.stop() }
        for name in files.keys.sorted() { uploader.enqueue(path: board.media + "/" + name) }
        uploader.enqueue(path: board.media + "/.incoming/video-20261122-101800.mp4.part")  // never queued
        XCTAssertTrue(waitUntil(60, interval: 0.05) { uploader.queue.isEmpty }, "queue left: \(uploader.queue.entries.map(\.file))")

        let s3 = try client(upload)
        for (name, bytes) in contents {
            let file = try XCTUnwrap(LibraryFilePath(relative: name))
            XCTAssertEqual(uploader.key(for: file), "boards/board-1/" + name)
            XCTAssertEqual(try s3.getObject(key: uploader.key(for: file)), bytes, name)
        }
        let figures = uploader.figures
        XCTAssertEqual(figures.uploadedFiles, 4)
        XCTAssertEqual(figures.uploadedBytes, 3_040_124)
        XCTAssertNil(figures.lastError)
        let index = try String(contentsOfFile: board.media + "/video/20261122/.index", encoding: .utf8)
        XCTAssertEqual(LibraryIndex.uploadedNames(index), ["101455.mp4", "101700.mp4"])
        XCTAssertTrue(index.contains("101455.mp4\tuploaded\t" + Insecure.MD5.hash(data: contents["video/20261122/101455.mp4"] ?? [])
            .map { String(format: "%02x", $0) }.joined()), index)
        XCTAssertTrue(FileManager.default.fileExists(atPath: board.media + "/video/20261122/101455.mp4"), "delete_after_upload is off")
        let saved = try UploadQueueStore(stateDirectory: board.state).load()
        XCTAssertTrue(saved.queue.isEmpty)
    }

    func testAKindNotChosenIsNotQueuedAndDeleteAfterUploadDeletes() throws {
        let server = try MotoServer()
        defer { server.stop() }
        let board = try Board()
        var upload = board.upload(server)
        upload.kinds = [.events]
        upload.deleteAfterUpload = true
        try client(upload).createBucket()
        try board.write("video/20261122/101455.mp4", bytes: 100)
        let clip = try board.write("video/20261122/101455-motion.mp4", bytes: 100)
        let uploader = try Uploader(board.settings(upload), logger: logger)
        uploader.enqueue(path: board.media + "/video/20261122/101455.mp4")
        uploader.enqueue(path: board.media + "/video/20261122/101455-motion.mp4")
        XCTAssertEqual(uploader.queue.entries.map(\.file.relativePath), ["video/20261122/101455-motion.mp4"])
        uploader.start()
        defer { uploader.stop() }
        XCTAssertTrue(waitUntil(30, interval: 0.05) { uploader.queue.isEmpty })
        XCTAssertEqual(try client(upload).getObject(key: "boards/board-1/video/20261122/101455-motion.mp4"), clip)
        XCTAssertFalse(FileManager.default.fileExists(atPath: board.media + "/video/20261122/101455-motion.mp4"))
        XCTAssertTrue(FileManager.default.fileExists(atPath: board.media + "/video/20261122/101455.mp4"))
    }

    /// A sound recording deleted after its upload takes its waveform picture with it.
    func testDeleteAfterUploadTakesASoundRecordingsWaveform() throws {
        let server = try MotoServer()
        let board = try Board()
        var upload = board.upload(server)
        upload.kinds = [.audio]
        upload.deleteAfterUpload = true
        try client(upload).createBucket()
        try board.write("audio/20261122/101500.m4a", bytes: 300)
        try board.write("audio/20261122/101500.png", bytes: 50)
        let uploader = try Uploader(board.settings(upload), logger: logger)
        uploader.enqueue(path: board.media + "/audio/20261122/101500.m4a")
        uploader.start()
        defer { uploader.stop() }
        XCTAssertTrue(waitUntil(30, interval: 0.05) { uploader.queue.isEmpty })
        XCTAssertEqual(try client(upload).getObject(key: "boards/board-1/audio/20261122/101500.m4a").count, 300)
        XCTAssertFalse(FileManager.default.fileExists(atPath: board.media + "/audio/20261122/101500.m4a"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: board.media + "/audio/20261122/101500.png"), "the waveform went too")
    }

    func testACutServerAndARestartStillCompleteTheQueue() throws {
        var server: MotoServer? = try MotoServer()
        let port = try XCTUnwrap(server?.port)
        let board = try Board()
        // Slow enough that the cut lands in the middle of the first file.
        let upload = try board.upload(XCTUnwrap(server), maxKbps: 800)
        try client(upload).createBucket()
        let first = try board.write("video/20261122/101455.mp4", bytes: 1_500_000)
        let second = try board.write("photo/20261122/101500.jpg", bytes: 50_000)

        var uploader: Uploader? = try Uploader(board.settings(upload), logger: logger)
        uploader?.enqueue(path: board.media + "/video/20261122/101455.mp4", bytes: 1_500_000)
        uploader?.enqueue(path: board.media + "/photo/20261122/101500.jpg", bytes: 50_000)
        uploader?.start()
        XCTAssertTrue(waitUntil(30, interval: 0.05) { (uploader?.figures.currentBytesSent ?? 0) > 100_000 }, "the upload never got going")
        server?.stop()  // the cut
        server = nil
        XCTAssertTrue(waitUntil(30, interval: 0.05) { (uploader?.figures.failures ?? 0) >= 1 }, "the cut was not noticed")
        XCTAssertNotNil(uploader?.figures.lastError)
        uploader?.stop()  // the daemon stops
        uploader = nil

        let saved = try UploadQueueStore(stateDirectory: board.state).load()
        XCTAssertEqual(saved.damagedLines, 0)
        XCTAssertEqual(saved.queue.entries.map(\.file.relativePath), ["video/20261122/101455.mp4", "photo/20261122/101500.jpg"])
        XCTAssertGreaterThanOrEqual(saved.queue.entries.first?.attempts ?? 0, 1)

        // The server comes back (empty: moto keeps nothing), and so does the daemon.
        let restored = try MotoServer(port: port)
        defer { restored.stop() }
        var fast = upload
        fast.maxKbps = 0
        try client(fast).createBucket()
        let restarted = try Uploader(board.settings(fast), logger: logger)
        XCTAssertEqual(restarted.queue.count, 2, "the queue was read back")
        restarted.start()
        defer { restarted.stop() }
        XCTAssertTrue(waitUntil(60, interval: 0.05) { restarted.queue.isEmpty }, "queue left: \(restarted.queue.entries.map(\.file))")
        let s3 = try client(fast)
        XCTAssertEqual(try s3.getObject(key: "boards/board-1/video/20261122/101455.mp4"), first)
        XCTAssertEqual(try s3.getObject(key: "boards/board-1/photo/20261122/101500.jpg"), second)
        XCTAssertTrue(try UploadQueueStore(stateDirectory: board.state).load().queue.isEmpty)
    }

    func testMaxKbpsHoldsWithinTenPercent() throws {
        let server = try MotoServer()
        defer { server.stop() }
        let board = try Board()
        let upload = board.upload(server, maxKbps: 400)
        let s3 = try client(upload)
        try s3.createBucket()
        let bytes = 2_000_000
        let data = try board.write("video/20261122/101455.mp4", bytes: bytes)
        let started = Date()
        let result = try s3.putFile(board.media + "/video/20261122/101455.mp4", key: "rate/101455.mp4", contentType: "video/mp4",
                                    maxBytesPerSecond: upload.maxBytesPerSecond)
        let seconds = Date().timeIntervalSince(started)
        let expected = Double(bytes) * 8 / 400_000  // 40 s
        XCTAssertEqual(result.bytes, Int64(bytes))
        XCTAssertEqual(seconds, expected, accuracy: expected * 0.1, "\(bytes) bytes at 400 kbit/s took \(seconds) s")
        XCTAssertEqual(try s3.getObject(key: "rate/101455.mp4"), data)
    }

    func testBadSettingsAreClearErrors() throws {
        let board = try Board()
        var upload = Configuration.Upload()
        upload.url = "s3://footage"
        upload.endpoint = "http://127.0.0.1:9"
        upload.accessKeyID = "testing"
        func failure(_ upload: Configuration.Upload) -> UploadError? {
            do {
                _ = try Uploader(board.settings(upload), logger: logger)
                return nil
            } catch {
                return error
            }
        }
        XCTAssertEqual(failure(upload)?.code, .configuration)
        XCTAssertTrue(failure(upload)?.message.contains("secret_access_key_file") ?? false)

        upload.secretAccessKeyFile = board.folder.path + "/missing"
        let missing = try XCTUnwrap(failure(upload))
        XCTAssertEqual(missing.code, .credentials)
        XCTAssertTrue(missing.message.contains("[upload] secret_access_key_file"), missing.message)
        XCTAssertTrue(missing.message.contains("No such file"), missing.message)
        XCTAssertTrue(missing.message.contains("create it"), missing.message)

        try "\n  \n".write(toFile: board.folder.path + "/empty", atomically: true, encoding: .utf8)
        upload.secretAccessKeyFile = board.folder.path + "/empty"
        XCTAssertTrue(failure(upload)?.message.contains("is empty: put the bucket user's secret") ?? false, "\(String(describing: failure(upload)))")

        upload.secretAccessKeyFile = board.folder.path
        XCTAssertTrue(failure(upload)?.message.contains("not a regular file") ?? false)

        if getuid() != 0 {
            try "secret".write(toFile: board.folder.path + "/locked", atomically: true, encoding: .utf8)
            chmod(board.folder.path + "/locked", 0)
            upload.secretAccessKeyFile = board.folder.path + "/locked"
            XCTAssertTrue(failure(upload)?.message.contains("Permission denied") ?? false)
        }
    }

    func testServerFailuresNameTheFix() throws {
        let board = try Board()
        try board.write("video/20261122/101455.mp4", bytes: 10)
        let path = board.media + "/video/20261122/101455.mp4"
        // Nothing listens on this port.
        var upload = Configuration.Upload()
        upload.url = "s3://footage"
        upload.endpoint = "http://127.0.0.1:\(try freeLoopbackPort())"
        upload.accessKeyID = "testing"
        let nowhere = try client(upload)
        do throws(UploadError) {
            _ = try nowhere.putFile(path, key: "k.mp4", contentType: "video/mp4")
            XCTFail("uploaded to nothing")
        } catch {
            XCTAssertEqual(error.code, .network)
            XCTAssertTrue(error.message.contains("cannot connect") && error.message.contains("[upload] endpoint"), error.message)
        }
        // A bucket that does not exist.
        let server = try MotoServer()
        defer { server.stop() }
        let missing = try client(board.upload(server, bucket: "no-such-bucket"))
        do throws(UploadError) {
            _ = try missing.putFile(path, key: "k.mp4", contentType: "video/mp4")
            XCTFail("uploaded to a missing bucket")
        } catch {
            XCTAssertEqual(error.code, .server)
            XCTAssertEqual(error.httpStatus, 404)
            XCTAssertTrue(error.message.contains("NoSuchBucket") && error.message.contains("create it"), error.message)
        }
        // A file that is gone.
        let present = try client(board.upload(server))
        do throws(UploadError) {
            _ = try present.putFile(path + ".gone", key: "k.mp4", contentType: "video/mp4")
            XCTFail("uploaded a missing file")
        } catch {
            XCTAssertEqual(error.code, .file)
            XCTAssertFalse(error.isRetryable)
        }
    }

    /// moto checks no signature, so the requests go once more to a server that checks
    /// them by AWS's documented steps (written apart from libcurl): libcurl's SigV4 with
    /// the unsigned payload is accepted (and the server's check of the Content-MD5 we
    /// send passes), and a wrong secret, key id or region is refused with S3's own codes.
    func testSignaturesFollowAWSSignatureVersion4() throws {
        let board = try Board()
        let bytes = try board.write("video/20261122/101455-motion.mp4", bytes: 200_000)
        let path = board.media + "/video/20261122/101455-motion.mp4"
        let port = try freeLoopbackPort()
        let verifier = Process()
        verifier.executableURL = URL(fileURLWithPath: try requiredProgram("python3", package: "python3"))
        verifier.arguments = [Package.root() + "/Tests/KioskUploadTests/Servers/sigv4_server.py", String(port),
                              "testing", "testing-secret-key", "eu-central-1"]
        let log = Pipe()
        verifier.standardOutput = log
        try verifier.run()
        defer {
            kill(verifier.processIdentifier, SIGKILL)
            verifier.waitUntilExit()
        }
        XCTAssertTrue(waitUntil(10, interval: 0.05) { isListening(port: port) }, "the verifying server did not start")

        func client(secret: String = "testing-secret-key", keyID: String = "testing", region: String = "eu-central-1") throws -> S3Client {
            var upload = Configuration.Upload()
            upload.url = "s3://footage/site-a"
            upload.endpoint = "http://127.0.0.1:\(port)"
            upload.region = region
            upload.accessKeyID = keyID
            return S3Client(.init(endpoint: upload.effectiveEndpoint, location: try XCTUnwrap(upload.location), region: region,
                                  accessKeyID: keyID, secretAccessKey: secret))
        }
        let result = try client().putFile(path, key: "site-a/board-1/video/20261122/101455-motion.mp4", contentType: "video/mp4")
        XCTAssertEqual(result.bytes, Int64(bytes.count))
        XCTAssertEqual(result.etag, Insecure.MD5.hash(data: bytes).map { String(format: "%02x", $0) }.joined())
        for (bad, code) in [(try client(secret: "wrong"), "SignatureDoesNotMatch"), (try client(keyID: "other"), "InvalidAccessKeyId"),
                            (try client(region: "us-east-1"), "AuthorizationHeaderMalformed")] {
            do throws(UploadError) {
                _ = try bad.putFile(path, key: "site-a/k.mp4", contentType: "video/mp4")
                XCTFail("a bad signature was accepted (\(code))")
            } catch {
                XCTAssertEqual(error.httpStatus, 403, "\(error)")
                XCTAssertTrue(error.message.contains(code), error.message)
            }
        }
    }
}
