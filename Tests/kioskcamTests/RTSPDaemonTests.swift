import Foundation
import KioskCore
import KioskTestSupport
import XCTest

/// The RTSP server in a running daemon, pulled by real clients — ffmpeg (as Frigate
/// records) and GStreamer's rtspsrc — over TCP and UDP with Digest, and spoken to raw:
/// every request needs a user, and malformed ones get an error, never a crash.
final class RTSPDaemonTests: XCTestCase {
    private let password = "correct horse battery"

    private struct Server {
        let daemon: KioskcamDaemon
        let port: Int
        func url(user: String? = "alice", password: String = "correct%20horse%20battery", path: String = "/live") -> String {
            "rtsp://\(user.map { "\($0):\(password)@" } ?? "")127.0.0.1:\(port)\(path)"
        }
    }

    private func start(_ folder: TemporaryDirectory, user: Bool = true, extra: String = "") throws -> Server {
        let port = try freeLoopbackPort()
        let udp = try freeLoopbackPort()
        let daemon = try KioskcamDaemon(root: folder.path, sections: """
            [web]
            listen = "127.0.0.1:\(try freeLoopbackPort())"
            [rtsp]
            enabled = true
            listen = "127.0.0.1:\(port)"
            udp_port = \(udp % 2 == 0 ? udp : udp - 1)
            \(extra)
            """)
        XCTAssertTrue(daemon.waitForLog("rtsp: listening on port \(port)", seconds: 20), daemon.logText())
        if user {
            let output = try Tool.run("/bin/sh", ["-c", "printf '%s\\n' \"$1\" | \"$2\" web-user set alice --role viewer --config \"$3\"",
                                                  "sh", password, Package.kioskcamBinary, daemon.config], allowFailure: true)
            XCTAssertEqual(output.status, 0, output.stderr)
        }
        return Server(daemon: daemon, port: port)
    }

    /// Bytes to the server on a fresh connection; what it answered before closing or 3 s.
    private func raw(_ server: Server, _ bytes: String) throws -> String {
        let python = try requiredProgram("python3", package: "python3")
        let script = """
            import socket, sys
            s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
            s.settimeout(3)
            try:
                s.sendall(sys.stdin.buffer.read())
            except OSError:
                pass  # the server answered and closed before all of it was sent
            out = b""
            try:
                while True:
                    chunk = s.recv(65536)
                    if not chunk: break
                    out += chunk
            except OSError:
                pass  # a timeout, or a reset after the answer
            sys.stdout.write(out.decode("latin-1"))
            """
        let file = NSTemporaryDirectory() + "/rtsp-raw-\(UUID().uuidString).bin"
        try (bytes.data(using: .isoLatin1) ?? Data(bytes.utf8)).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        return try Tool.run("/bin/sh", ["-c", "\"$1\" -c \"$2\" \"$3\" < \"$4\"", "sh", python, script, String(server.port), file]).stdout
    }

    /// ffmpeg copying the server's stream to `file` for `seconds` over `transport`, started
    /// and not waited for: `finish` waits and returns its exit status and errors.
    private struct Pull {
        let process = Process()
        let errors = Pipe()

        init(_ url: String, transport: String, seconds: Int, to file: String) throws {
            process.executableURL = URL(fileURLWithPath: try requiredProgram("ffmpeg", package: "ffmpeg"))
            process.arguments = ["-nostdin", "-loglevel", "error", "-rtsp_transport", transport, "-i", url,
                                 "-t", String(seconds), "-c", "copy", "-y", file]
            process.standardError = errors
            try process.run()
        }

        func finish() -> (status: Int32, stderr: String) {
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
        }
    }

    /// Video and sound frames' times in a file (seconds), from ffprobe.
    private func frameTimes(_ file: String, stream: String) throws -> [Double] {
        let ffprobe = try requiredProgram("ffprobe", package: "ffmpeg")
        let output = try Tool.run(ffprobe, ["-v", "error", "-select_streams", stream, "-show_entries", "packet=pts_time",
                                            "-of", "csv=p=0", file], allowFailure: true)
        return output.stdout.split(separator: "\n").compactMap { Double($0.trimmingCharacters(in: CharacterSet(charactersIn: ","))) }.sorted()
    }

    private func assertWhole(_ file: String, seconds: Double, audio: Bool = true, _ label: String) throws {
        let video = try frameTimes(file, stream: "v")
        XCTAssertGreaterThan(video.count, Int(seconds * 20), "\(label): pictures")
        let gap = zip(video.dropFirst(), video).map { $0 - $1 }.max() ?? 99
        XCTAssertLessThanOrEqual(gap, 0.1, "\(label): the largest gap between pictures")
        if audio { XCTAssertGreaterThan(try frameTimes(file, stream: "a").count, Int(seconds * 20), "\(label): sound frames") }
    }

    /// ffmpeg copying the stream to a file, over TCP and over UDP: both tracks, no gap; status
    /// lists the client while it plays.
    func testFFmpegPullsOverTCPAndUDP() throws {
        let folder = TemporaryDirectory()
        let server = try start(folder, extra: "substream = \"160x120\"\nsubstream_fps = 10")
        defer { _ = server.daemon.terminate() }
        let ffmpeg = try requiredProgram("ffmpeg", package: "ffmpeg")
        for transport in ["tcp", "udp"] {
            let file = folder.path + "/\(transport).mp4"
            let pull = try Pull(server.url(), transport: transport, seconds: 4, to: file)
            var listed: [String: Any]?
            let deadline = Date(timeIntervalSinceNow: 10)
            while listed == nil, Date() < deadline, pull.process.isRunning {
                listed = (server.daemon.status()["rtsp_clients"] as? [[String: Any]])?.first
                if listed == nil { Thread.sleep(forTimeInterval: 0.2) }
            }
            let pulled = pull.finish()
            XCTAssertEqual(pulled.status, 0, pulled.stderr)
            XCTAssertEqual(listed?["transport"] as? String, transport.uppercased(), "status lists the client: \(String(describing: listed))")
            XCTAssertEqual(listed?["user"] as? String, "alice")
            XCTAssertEqual(listed?["path"] as? String, "/live")
            try assertWhole(file, seconds: 3.5, transport)
        }
        // The sub-stream: a second, smaller encode at its own rate, picture only.
        let sub = folder.path + "/sub.mp4"
        let pulled = try Tool.run(ffmpeg, ["-nostdin", "-loglevel", "error", "-rtsp_transport", "tcp", "-i", server.url(path: "/sub"),
                                           "-t", "3", "-c", "copy", "-y", sub], allowFailure: true)
        XCTAssertEqual(pulled.status, 0, pulled.stderr)
        let ffprobe = try requiredProgram("ffprobe", package: "ffmpeg")
        let streams = try Tool.run(ffprobe, ["-v", "error", "-show_entries", "stream=codec_name,width,height", "-of", "csv=p=0", sub])
        XCTAssertEqual(streams.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "h264,160,120")
        // The rate from the pictures' times: ffprobe's r_frame_rate is the finest rate that
        // fits every timestamp, and one picture 25 ms late on a loaded machine read 40/1.
        let subTimes = try frameTimes(sub, stream: "v").sorted()
        XCTAssertGreaterThan(subTimes.count, 20, "about 10 pictures a second")
        XCTAssertLessThan(subTimes.count, 40, "about 10 pictures a second")
        if let first = subTimes.first, let last = subTimes.last, subTimes.count > 1 {
            let interval = (last - first) / Double(subTimes.count - 1)
            XCTAssertEqual(interval, 0.1, accuracy: 0.02, "10 pictures a second on average: \(subTimes)")
        }
        let metrics = (try? String(contentsOfFile: folder.path + "/metrics/kioskcam.prom", encoding: .utf8)) ?? ""
        XCTAssertTrue(metrics.contains("kioskcam_rtsp_clients ") && metrics.contains("kioskcam_rtsp_dropped_gops_total "), metrics)
        XCTAssertTrue(try server.daemon.kioskcam(["status"]).stdout.contains("rtsp:         rtsp://127.0.0.1:\(server.port)/live"))
        XCTAssertFalse(server.daemon.logText().contains(password), "no password in the log")
    }

    /// GStreamer's rtspsrc (what many NVR stacks are built on), over TCP and UDP.
    func testGStreamerPullsOverTCPAndUDP() throws {
        let folder = TemporaryDirectory()
        let server = try start(folder)
        defer { _ = server.daemon.terminate() }
        let gst = try requiredProgram("gst-launch-1.0", package: "gstreamer1.0-tools")
        for transport in ["tcp", "udp"] {
            let file = folder.path + "/gst-\(transport).mp4"
            // 100 pictures, then an end of stream (identity eos-after), so mp4mux finishes the
            // file: pictures counted, not 5 s of wall time, which a loaded CI once spent before
            // the first UDP picture came (0 pictures, run 10 of 2026-11-29). SIGINT after 60 s
            // is only the safety net (-e turns it into an end of stream too).
            let output = try Tool.run("/usr/bin/timeout", ["-s", "INT", "60", gst, "-q", "-e",
                                                           "rtspsrc", "location=\(server.url(user: nil))", "user-id=alice",
                                                           "user-pw=\(password)", "protocols=\(transport)", "latency=200", "buffer-mode=none",
                                                           "!", "rtph264depay", "!", "h264parse", "!", "identity", "eos-after=100", "!", "mp4mux", "!",
                                                           "filesink", "location=\(file)"], allowFailure: true)
            XCTAssertTrue(FileManager.default.fileExists(atPath: file), "\(transport): \(output.stderr)")
            try assertWhole(file, seconds: 3, audio: false, "gstreamer \(transport)")
        }
    }

    /// No request is served without a user: a challenge offers Digest (SHA-256 and MD5),
    /// never Basic unless asked for; a wrong password is refused and throttled.
    func testEveryRequestNeedsAUser() throws {
        let folder = TemporaryDirectory()
        let server = try start(folder, user: false)
        defer { _ = server.daemon.terminate() }
        for method in ["OPTIONS", "DESCRIBE", "SETUP", "PLAY", "GET_PARAMETER", "TEARDOWN"] {
            let answer = try raw(server, "\(method) rtsp://127.0.0.1:\(server.port)/live RTSP/1.0\r\nCSeq: 3\r\n\r\n")
            XCTAssertTrue(answer.hasPrefix("RTSP/1.0 401 Unauthorized\r\nCSeq: 3\r\n"), "\(method): \(answer)")
            XCTAssertTrue(answer.contains("algorithm=SHA-256") && answer.contains("algorithm=MD5"), answer)
            XCTAssertFalse(answer.contains("Basic"), answer)
            XCTAssertFalse(answer.contains("m=video"), answer)
        }
        // Before any user exists, even the right kind of credentials gets nowhere.
        let ffmpeg = try requiredProgram("ffmpeg", package: "ffmpeg")
        let none = try Tool.run(ffmpeg, ["-nostdin", "-rtsp_transport", "tcp", "-i", server.url(), "-t", "1", "-f", "null", "-"],
                                allowFailure: true)
        XCTAssertNotEqual(none.status, 0)
        XCTAssertTrue(none.stderr.contains("401"), none.stderr)

        let output = try Tool.run("/bin/sh", ["-c", "printf '%s\\n' \"$1\" | \"$2\" web-user set alice --role viewer --config \"$3\"",
                                              "sh", password, Package.kioskcamBinary, server.daemon.config], allowFailure: true)
        XCTAssertEqual(output.status, 0, output.stderr)

        // A Digest answer overheard on one stream opens no other while its nonce is fresh
        // (RFC 7616 3.4.6): signed for the sub-stream, sent to DESCRIBE the main one. A
        // track's SETUP signed with its stream's URL, as live555 (VLC) signs it, is let in.
        let python = try requiredProgram("python3", package: "python3")
        let live = "rtsp://127.0.0.1:\(server.port)/live"
        let asked = try raw(server, "DESCRIBE \(live) RTSP/1.0\r\nCSeq: 1\r\n\r\n")
        let nonce = try XCTUnwrap(asked.range(of: #"nonce="[^"]+", algorithm=MD5"#, options: .regularExpression)
            .map { asked[$0].dropFirst(#"nonce=""#.count).prefix { $0 != "\"" } }, asked)
        func md5(_ text: String) throws -> String {
            try Tool.run(python, ["-c", "import hashlib, sys; print(hashlib.md5(sys.argv[1].encode()).hexdigest())", text])
                .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        func send(_ method: String, _ target: String, signedFor uri: String, extra: String = "") throws -> String {
            let answer = try md5("\(try md5("alice:KioskCam:\(password)")):\(nonce):\(try md5("\(method):\(uri)"))")
            return try raw(server, "\(method) \(target) RTSP/1.0\r\nCSeq: 4\r\n\(extra)Authorization: Digest username=\"alice\", "
                                   + "realm=\"KioskCam\", nonce=\"\(nonce)\", uri=\"\(uri)\", response=\"\(answer)\"\r\n\r\n")
        }
        let signedForItself = try send("DESCRIBE", live, signedFor: live)
        XCTAssertTrue(signedForItself.hasPrefix("RTSP/1.0 200 OK\r\n") && signedForItself.contains("m=video"), signedForItself)
        let sub = "rtsp://127.0.0.1:\(server.port)/sub"
        let signedForAnother = try send("DESCRIBE", live, signedFor: sub)
        XCTAssertTrue(signedForAnother.hasPrefix("RTSP/1.0 401 Unauthorized\r\n"), signedForAnother)
        XCTAssertFalse(signedForAnother.contains("m=video"), signedForAnother)
        XCTAssertTrue(server.daemon.logText().contains("signed its Digest for \(sub), not for \(live): refused"), server.daemon.logText())
        let trackSignedAsVLCSignsIt = try send("SETUP", live + "/trackID=0", signedFor: live,
                                               extra: "Transport: RTP/AVP/TCP;unicast;interleaved=0-1\r\n")
        XCTAssertTrue(trackSignedAsVLCSignsIt.hasPrefix("RTSP/1.0 200 OK\r\n") && trackSignedAsVLCSignsIt.contains("Session: "),
                      trackSignedAsVLCSignsIt)

        var refusals = 0
        for _ in 0..<6 {
            let wrong = try Tool.run(ffmpeg, ["-nostdin", "-rtsp_transport", "tcp", "-i", server.url(password: "wrong"), "-t", "1",
                                              "-f", "null", "-"], allowFailure: true)
            if wrong.status != 0, wrong.stderr.contains("401") { refusals += 1 }
        }
        XCTAssertEqual(refusals, 6)
        XCTAssertTrue(server.daemon.logText().contains("rtsp: wrong password for alice from 127.0.0.1"), server.daemon.logText())
        XCTAssertTrue(server.daemon.logText().contains("refused: throttled"), "wrong passwords are throttled")
    }

    /// A client that never logs in is closed at the login deadline, however often it asks,
    /// while a logged-in pull on the same server outlives that deadline.
    func testAClientThatNeverLogsInIsClosedAtTheDeadline() throws {
        let folder = TemporaryDirectory()
        let server = try start(folder)
        defer { _ = server.daemon.terminate() }
        let pull = try Pull(server.url(), transport: "tcp", seconds: 40, to: folder.path + "/long.mp4")
        // OPTIONS without credentials every 5 s (never idle); prints the seconds until the
        // server closed the connection and the requests sent, or "open" after 60 s.
        let python = try requiredProgram("python3", package: "python3")
        let script = """
            import socket, sys, time
            s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
            start = time.monotonic()
            s.settimeout(5)
            sent = 0
            closed = False
            while not closed and time.monotonic() - start < 60:
                try:
                    s.sendall(b"OPTIONS * RTSP/1.0\\r\\nCSeq: %d\\r\\n\\r\\n" % (sent + 1))
                    sent += 1
                    closed = not s.recv(65536)
                except socket.timeout:
                    pass
                except OSError:
                    closed = True
                if not closed:
                    time.sleep(5)
            print("%.1f %d" % (time.monotonic() - start, sent) if closed else "open")
            """
        let asked = try Tool.run(python, ["-c", script, String(server.port)])
        let fields = asked.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ")
        let (closedAfter, sent) = fields.count == 2 ? (Double(fields[0]), Int(fields[1]) ?? 0) : (nil, 0)
        XCTAssertNotNil(closedAfter, "the connection stayed open for 60 s: \(asked.stdout)")
        if let closedAfter {
            XCTAssertGreaterThanOrEqual(closedAfter, 25, "closed before its 30 s: \(asked.stdout)")
            XCTAssertLessThanOrEqual(closedAfter, 45, "closed at the 30 s deadline (checked every 5 s): \(asked.stdout)")
        }
        XCTAssertGreaterThanOrEqual(sent, 5, "it kept asking: \(asked.stdout)")
        XCTAssertTrue(server.daemon.logText().contains("rtsp: 127.0.0.1 did not log in within 30 s; closed"), server.daemon.logText())
        let pulled = pull.finish()
        XCTAssertEqual(pulled.status, 0, pulled.stderr)
        try assertWhole(folder.path + "/long.mp4", seconds: 38, "the logged-in pull, 40 s")
    }

    /// Malformed requests get an error status and the connection ends; the server goes on.
    func testMalformedRequestsGetAnErrorAndTheServerGoesOn() throws {
        let folder = TemporaryDirectory()
        let server = try start(folder)
        defer { _ = server.daemon.terminate() }
        let cases: [(String, String)] = [
            ("OPTIONS * RTSP/1.0\r\nCSeq: 123456789012345678901234567890\r\n\r\n", "RTSP/1.0 400 "),
            ("OPTIONS * RTSP/1.0\r\nUser-Agent: x\r\n\r\n", "RTSP/1.0 400 "),
            ("OPTIONS * RTSP/1.0\r\nCSeq: 1\r\nX: " + String(repeating: "a", count: 1 << 20) + "\r\n\r\n", "RTSP/1.0 413 "),
            ("OPTIONS * HTTP/1.1\r\nCSeq: 1\r\n\r\n", "RTSP/1.0 505 "),
            ("$\u{00}\u{FF}\u{FF}", "RTSP/1.0 413 "),
            ("GARBAGE\r\n\r\n", "RTSP/1.0 400 "),
        ]
        for (request, expected) in cases {
            let answer = try raw(server, request)
            XCTAssertTrue(answer.hasPrefix(expected), "\(request.prefix(60).debugDescription): \(answer.prefix(200))")
        }
        // Interleaved channels out of range in SETUP: 461 once authenticated (checked in
        // the core tests); here the server still answers after all of the above.
        let after = try raw(server, "OPTIONS * RTSP/1.0\r\nCSeq: 9\r\n\r\n")
        XCTAssertTrue(after.hasPrefix("RTSP/1.0 401 Unauthorized\r\nCSeq: 9\r\n"), after)
        XCTAssertEqual(server.daemon.process.isRunning, true)
    }
}
