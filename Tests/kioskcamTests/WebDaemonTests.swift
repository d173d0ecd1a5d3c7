import Foundation
import KioskCore
import KioskTestSupport
import XCTest

/// The web app in a running daemon, spoken to by curl over real TLS: no login until a
/// user exists, every route closed without a session, roles, the throttle, the API as
/// the control protocol, library files with Range and ETag, and the certificate kept.
final class WebDaemonTests: XCTestCase {
    private var curl: String { get throws { try requiredProgram("curl", package: "curl") } }

    private struct Web {
        let daemon: KioskcamDaemon
        let port: Int
        let jar: String
        var base: String { "https://127.0.0.1:\(port)" }
    }

    private struct Answer {
        var status: Int
        var headers: [String: String]
        var body: String
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]) ?? [:] }
    }

    private func startWeb(_ folder: TemporaryDirectory, extra: String = "") throws -> Web {
        let port = try freeLoopbackPort()
        let daemon = try KioskcamDaemon(root: folder.path, sections: """
            [web]
            listen = "127.0.0.1:\(port)"
            \(extra)
            """)
        XCTAssertTrue(daemon.waitForLog("web app listening on port \(port)", seconds: 20), daemon.logText())
        return Web(daemon: daemon, port: port, jar: folder.path + "/cookies")
    }

    /// One request with curl; `cookies` uses the test's jar.
    private func request(_ web: Web, _ method: String, _ path: String, body: String? = nil, cookies: Bool = true,
                         headers: [String] = [], scheme: String = "https") throws -> Answer {
        var arguments = ["-sk", "--path-as-is", "--max-time", "30", "-X", method, "-D", "-", "-o", "/dev/stdout"]
        if cookies { arguments += ["-b", web.jar, "-c", web.jar] }
        for header in headers { arguments += ["-H", header] }
        if let body { arguments += ["-H", "Content-Type: application/json", "--data-binary", body] }
        let url = (scheme == "https" ? web.base : "http://127.0.0.1:\(web.port)") + path
        let output = try Tool.run(try curl, arguments + [url], allowFailure: true)
        let text = output.stdout
        guard let split = text.range(of: "\r\n\r\n") else { return Answer(status: 0, headers: [:], body: text) }
        var lines = text[..<split.lowerBound].components(separatedBy: "\r\n")
        let status = Int(lines.removeFirst().split(separator: " ").dropFirst().first ?? "") ?? 0
        var fields: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Answer(status: status, headers: fields, body: String(text[split.upperBound...]))
    }

    private func addUser(_ web: Web, _ name: String, role: String, password: String = "correct horse battery") throws {
        let output = try Tool.run("/bin/sh", ["-c", "printf '%s\\n' \"$1\" | \"$2\" web-user set \"$3\" --role \"$4\" --config \"$5\"",
                                              "sh", password, Package.kioskcamBinary, name, role, web.daemon.config], allowFailure: true)
        XCTAssertEqual(output.status, 0, output.stderr)
    }

    private func login(_ web: Web, _ name: String, password: String = "correct horse battery") throws -> Answer {
        try request(web, "POST", "/api/login", body: #"{"user":"\#(name)","password":"\#(password)"}"#)
    }

    /// Nobody gets in before a user exists, and the login page says how to make one.
    func testNobodyCanLogInUntilAUserExistsAndEveryRouteIsClosed() throws {
        let folder = TemporaryDirectory()
        let web = try startWeb(folder)
        defer { _ = web.daemon.terminate() }
        XCTAssertEqual(try request(web, "GET", "/api/login").json["setup_needed"] as? Bool, true)
        let refused = try login(web, "admin", password: "admin")
        XCTAssertEqual(refused.status, 401)
        XCTAssertTrue(refused.body.contains("kioskcam web-user set"), refused.body)
        XCTAssertTrue(web.daemon.logText().contains("no user exists"), "the log says so too")

        // A real recording, so that its file and thumbnail routes exist.
        XCTAssertEqual(try web.daemon.kioskcam(["start"]).status, 0)
        XCTAssertNil(web.daemon.waitUntilRecorded(1.5), web.daemon.logText())
        XCTAssertEqual(try web.daemon.kioskcam(["stop"]).status, 0)
        let file = try XCTUnwrap(FileManager.default.subpaths(atPath: web.daemon.media + "/video")?.first { $0.hasSuffix(".mp4") })
        let closed = ["/", "/live", "/library", "/events", "/status", "/settings", "/api/status", "/api/library", "/api/events",
                      "/api/me", "/api/snapshot.jpg", "/api/live", "/api/settings", "/media/video/\(file)", "/thumbs/video/\(file)"]
        for path in closed {
            XCTAssertEqual(try request(web, "GET", path).status, 401, path)
        }
        for (method, path) in [("POST", "/api/recording"), ("POST", "/api/snapshot"), ("POST", "/api/event"), ("POST", "/api/export"),
                               ("DELETE", "/media/video/\(file)"), ("POST", "/api/logout"), ("PUT", "/api/settings")] {
            XCTAssertEqual(try request(web, method, path, body: "{}").status, 401, "\(method) \(path)")
        }
        XCTAssertEqual(try request(web, "GET", "/login").status, 200)
        XCTAssertEqual(try request(web, "GET", "/static/app.css").status, 200)
        XCTAssertTrue(FileManager.default.fileExists(atPath: web.daemon.media + "/video/" + file), "nothing was deleted")
    }

    /// The certificate is made once and kept; status (text and JSON) shows its fingerprint,
    /// which is what openssl computes for the file.
    func testTheCertificateIsKeptAndItsFingerprintShown() throws {
        let folder = TemporaryDirectory()
        var web = try startWeb(folder)
        let certificate = web.daemon.stateDirectory + "/web-cert.pem"
        let openssl = try requiredProgram("openssl", package: "openssl")
        let fingerprint = try Tool.run(openssl, ["x509", "-in", certificate, "-noout", "-fingerprint", "-sha256"]).stdout
            .split(separator: "=").last.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) } ?? ""
        XCTAssertEqual(fingerprint.count, 95)
        XCTAssertEqual(web.daemon.status()["web_fingerprint_sha256"] as? String, fingerprint)
        XCTAssertTrue(try web.daemon.kioskcam(["status"]).stdout.contains("SHA-256 \(fingerprint)"))
        let subject = try Tool.run(openssl, ["x509", "-in", certificate, "-noout", "-subject", "-text"]).stdout
        XCTAssertTrue(subject.contains(web.daemon.deviceID), "the device id is in the subject")
        XCTAssertTrue(subject.contains("prime256v1") || subject.contains("P-256"), subject)
        let mode = try FileManager.default.attributesOfItem(atPath: web.daemon.stateDirectory + "/web-key.pem")[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o600, "the key is readable by the daemon's user only")
        XCTAssertEqual(web.daemon.terminate(), 0)
        web = try startWeb(folder)
        defer { _ = web.daemon.terminate() }
        XCTAssertEqual(web.daemon.status()["web_fingerprint_sha256"] as? String, fingerprint, "kept across restarts")
    }

    /// An admin records, takes a still, lists and downloads (with Range and ETag) and
    /// deletes; a viewer watches but is refused every change; a foreign page is refused.
    func testAdminsActViewersWatchAndFilesAreServedWithRanges() throws {
        let folder = TemporaryDirectory()
        let web = try startWeb(folder)
        defer { _ = web.daemon.terminate() }
        try addUser(web, "alice", role: "admin")
        try addUser(web, "bob", role: "viewer", password: "viewer pass 123")
        let answer = try login(web, "alice")
        XCTAssertEqual(answer.status, 200, answer.body)
        XCTAssertEqual(answer.json["role"] as? String, "admin")
        let cookie = try XCTUnwrap(answer.headers["set-cookie"])
        for flag in ["HttpOnly", "SameSite=Strict", "Secure", "Path=/"] { XCTAssertTrue(cookie.contains(flag), cookie) }
        for (name, value) in [("content-security-policy", "script-src 'self'"), ("x-frame-options", "DENY"),
                              ("x-content-type-options", "nosniff"), ("referrer-policy", "same-origin")] {
            XCTAssertTrue(answer.headers[name]?.contains(value) == true, "\(name): \(answer.headers[name] ?? "missing")")
        }

        let origin = "Origin: \(web.base)"
        let started = try request(web, "POST", "/api/recording", body: #"{"action":"start","kind":"video"}"#, headers: [origin])
        XCTAssertEqual(started.status, 200, started.body)
        XCTAssertEqual(try request(web, "POST", "/api/recording", body: #"{"action":"start"}"#, headers: [origin]).status, 409,
                       "already recording: the arbiter's answer, as on the socket")
        XCTAssertNil(web.daemon.waitUntilRecorded(2), web.daemon.logText())
        let foreign = try request(web, "POST", "/api/recording", body: #"{"action":"stop"}"#, headers: ["Origin: https://evil.example"])
        XCTAssertEqual(foreign.status, 403, "a foreign page's request is refused")
        XCTAssertEqual(try request(web, "GET", "/api/status").json["state"] as? String, "recording")
        let stopped = try request(web, "POST", "/api/recording", body: #"{"action":"stop"}"#, headers: [origin])
        XCTAssertEqual(stopped.status, 200, stopped.body)
        let still = try request(web, "POST", "/api/snapshot", headers: [origin])
        XCTAssertEqual(still.status, 200, still.body)
        XCTAssertTrue((still.json["url"] as? String)?.hasPrefix("/media/photo/") == true, still.body)

        let day = LocalTimestamp(Date()).dateStamp
        let listing = try request(web, "GET", "/api/library?date=\(day)").json["recordings"] as? [[String: Any]] ?? []
        let video = try XCTUnwrap(listing.first { $0["kind"] as? String == "video" })
        XCTAssertEqual(listing.filter { $0["kind"] as? String == "photo" }.count, 1)
        XCTAssertGreaterThan(video["seconds"] as? Double ?? 0, 1)
        let url = try XCTUnwrap(video["url"] as? String)
        let path = web.daemon.media + url.dropFirst("/media".count)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))

        let whole = try request(web, "GET", url)
        let answered = Int64(Date().timeIntervalSince1970)
        XCTAssertEqual(whole.status, 200)
        // Dated by the web app's own clock arithmetic (not Hummingbird's calendar, which loads ICU).
        XCTAssertTrue((answered - 3...answered).map { httpDate(secondsSince1970: $0) }.contains(whole.headers["date"] ?? ""),
                      "Date: \(whole.headers["date"] ?? "missing")")
        XCTAssertEqual(whole.headers["content-type"], "video/mp4")
        XCTAssertEqual(whole.headers["accept-ranges"], "bytes")
        XCTAssertEqual(Int(whole.headers["content-length"] ?? ""), bytes.count)
        let part = try request(web, "GET", url, headers: ["Range: bytes=100-199"])
        XCTAssertEqual(part.status, 206)
        XCTAssertEqual(part.headers["content-range"], "bytes 100-199/\(bytes.count)")
        let etag = try XCTUnwrap(whole.headers["etag"])
        XCTAssertEqual(try request(web, "GET", url, headers: ["If-None-Match: \(etag)"]).status, 304)
        XCTAssertEqual(try request(web, "GET", url, headers: ["Range: bytes=\(bytes.count)-"]).status, 416)
        XCTAssertNotNil(whole.headers["last-modified"])
        let download = folder.path + "/download.mp4"
        _ = try Tool.run(try curl, ["-sk", "-b", web.jar, "-o", download, web.base + url])
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: download)), bytes, "the download is the file")
        XCTAssertGreaterThan(try FFprobe.probe(download).format.durationSeconds, 1)
        let thumbnail = try request(web, "GET", try XCTUnwrap(video["thumbnail"] as? String))
        XCTAssertEqual(thumbnail.status, 200)
        XCTAssertEqual(thumbnail.headers["content-type"], "image/png")
        let picture = try request(web, "GET", "/api/snapshot.jpg")
        XCTAssertEqual(picture.status, 200)
        XCTAssertEqual(picture.headers["content-type"], "image/jpeg")

        // An export, downloaded from the URL the answer gives.
        let export = try request(web, "POST", "/api/export", body: #"{"file":"\#(video["file"] as? String ?? "")","from":0,"to":1}"#,
                                 headers: [origin])
        XCTAssertEqual(export.status, 200, export.body)
        let clipURL = try XCTUnwrap(export.json["url"] as? String, export.body)
        XCTAssertTrue(clipURL.hasPrefix("/exports/"), clipURL)
        let clip = folder.path + "/clip.mp4"
        _ = try Tool.run(try curl, ["-sk", "-b", web.jar, "-o", clip, web.base + clipURL])
        XCTAssertGreaterThan(try FFprobe.probe(clip).format.durationSeconds, 0.5)
        XCTAssertEqual(try request(web, "GET", "/exports/..%2f..%2fetc%2fpasswd").status, 404)

        // The viewer.
        let viewerJar = Web(daemon: web.daemon, port: web.port, jar: folder.path + "/viewer-cookies")
        XCTAssertEqual(try login(viewerJar, "bob", password: "viewer pass 123").json["role"] as? String, "viewer")
        XCTAssertEqual(try request(viewerJar, "GET", "/api/status").status, 200)
        XCTAssertEqual(try request(viewerJar, "GET", url, headers: ["Range: bytes=0-9"]).status, 206, "viewers download")
        for (method, route, body) in [("POST", "/api/recording", #"{"action":"start"}"#), ("POST", "/api/snapshot", "{}"),
                                      ("POST", "/api/event", #"{"action":"start"}"#), ("DELETE", url, "{}"),
                                      ("POST", "/api/export", #"{"file":"video/\#(day)/x.mp4"}"#)] {
            let refused = try request(viewerJar, method, route, body: body, headers: [origin])
            XCTAssertEqual(refused.status, 403, "\(method) \(route): \(refused.body)")
        }
        XCTAssertEqual(try request(viewerJar, "GET", "/settings").status, 403)
        XCTAssertEqual(web.daemon.status()["state"] as? String, "idle", "no refused call recorded anything")

        // The admin deletes; the file is gone; logging out closes the session.
        XCTAssertEqual(try request(web, "DELETE", url, headers: [origin]).status, 204)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
        XCTAssertEqual(try request(web, "GET", url).status, 404)
        XCTAssertEqual(try request(web, "POST", "/api/logout", headers: [origin]).status, 204)
        XCTAssertEqual(try request(web, "GET", "/api/status").status, 401)
        XCTAssertTrue(web.daemon.logText().contains("web: alice deleted video/"), "deletions are logged with the user")
    }

    /// The live view as native HLS (for browsers without MSE), read by a real HLS client:
    /// ffmpeg fetches the playlist, the init segment and the segments with the session's
    /// cookie and gets the camera's H.264 and the sound; without a session all three are 401.
    func testLiveHLSPlaysInFFmpegWithASessionOnly() throws {
        let folder = TemporaryDirectory()
        let web = try startWeb(folder)
        defer { _ = web.daemon.terminate() }
        try addUser(web, "bob", role: "viewer", password: "viewer pass 123")
        for path in ["/api/live.m3u8", "/api/live/init.mp4", "/api/live/0.m4s"] {
            XCTAssertEqual(try request(web, "GET", path, cookies: false).status, 401, path)
        }
        XCTAssertEqual(try login(web, "bob", password: "viewer pass 123").status, 200)
        let playlist = try request(web, "GET", "/api/live.m3u8")
        XCTAssertEqual(playlist.status, 200, playlist.body)
        XCTAssertEqual(playlist.headers["content-type"], "application/vnd.apple.mpegurl")
        XCTAssertTrue(playlist.body.hasPrefix("#EXTM3U\n") && playlist.body.contains("#EXT-X-MAP:URI=\"/api/live/init.mp4\""),
                      playlist.body)
        let jar = try String(contentsOfFile: web.jar, encoding: .utf8)
        var session = ""
        for line in jar.split(separator: "\n") {
            let fields = line.split(separator: "\t").map(String.init)
            if fields.count >= 7, fields[5] == "kioskcam_session" { session = fields[6] }
        }
        XCTAssertFalse(session.isEmpty, jar)
        let ffprobe = try requiredProgram("ffprobe", package: "ffmpeg")
        let probe = try Tool.run(ffprobe, ["-v", "error", "-headers", "Cookie: kioskcam_session=\(session)\r\n",
                                           "-show_entries", "stream=codec_name,width,height", "-of", "csv=p=0",
                                           web.base + "/api/live.m3u8"], allowFailure: true)
        XCTAssertEqual(probe.status, 0, probe.stderr)
        // Each stream twice: as the HLS program's and on its own.
        XCTAssertEqual(Set(probe.stdout.split(separator: "\n").map(String.init)), ["aac", "h264,320,240"], probe.stdout)
        let later = try request(web, "GET", "/api/live/999999.m4s")
        XCTAssertEqual(later.status, 404, "a segment not made yet: \(later.body)")
    }

    /// The stream's destination (an RTMP key stands in a URL's path) is for admins, who
    /// also see `stream.url` in the settings: a viewer's status has neither it nor the
    /// stream's error.
    func testAViewersStatusHasNoStreamDestination() throws {
        let folder = TemporaryDirectory()
        let web = try startWeb(folder, extra: """
            [stream]
            url = "\(folder.path)/hls-secret-key-4711"
            """)
        defer { _ = web.daemon.terminate() }
        try addUser(web, "alice", role: "admin")
        try addUser(web, "bob", role: "viewer", password: "viewer pass 123")
        XCTAssertEqual(try login(web, "alice").status, 200)
        var destination: String?
        let deadline = Date().addingTimeInterval(20)
        while destination == nil, Date() < deadline {
            destination = try request(web, "GET", "/api/status").json["stream_destination"] as? String
            if destination == nil { Thread.sleep(forTimeInterval: 0.2) }
        }
        XCTAssertTrue(destination?.contains("secret-key-4711") == true, "the admin sees where the stream goes: \(destination ?? "nothing")")
        XCTAssertEqual(try login(web, "bob", password: "viewer pass 123").status, 200)
        let viewers = try request(web, "GET", "/api/status")
        XCTAssertEqual(viewers.status, 200, viewers.body)
        XCTAssertNotNil(viewers.json["stream_state"], viewers.body)
        XCTAssertNil(viewers.json["stream_destination"], viewers.body)
        XCTAssertFalse(viewers.body.contains("secret-key-4711"), viewers.body)
    }

    /// Settings from the page: checked by the schema, saved to the state directory (the old
    /// file kept as .bak), applied by the daemon's reload, read by every command after; a
    /// viewer, a wrong value and a key the page does not show are refused, and nothing saved.
    func testSettingsAreSavedAppliedAndRefusedWhenWrong() throws {
        let folder = TemporaryDirectory()
        let web = try startWeb(folder)
        defer { _ = web.daemon.terminate() }
        try addUser(web, "alice", role: "admin")
        try addUser(web, "bob", role: "viewer", password: "viewer pass 123")
        XCTAssertEqual(try login(web, "alice").status, 200)
        let origin = "Origin: \(web.base)"
        let file = folder.path + "/state/web-settings.toml"
        XCTAssertEqual(try request(web, "GET", "/api/settings").json["writable"] as? Bool, true)

        let saved = try request(web, "PUT", "/api/settings", body: #"{"settings":{"storage.retention_days":9,"camera.rotation":180}}"#,
                                headers: [origin])
        XCTAssertEqual(saved.status, 200, saved.body)
        XCTAssertEqual(saved.json["applied_now"] as? [String], ["storage"], saved.body)
        XCTAssertEqual(saved.json["need_restart"] as? [String], ["camera"], saved.body)
        let settings = try XCTUnwrap(try request(web, "GET", "/api/settings").json["settings"] as? [String: Any])
        XCTAssertEqual(settings["storage.retention_days"] as? Int, 9, "GET shows the configuration in effect")
        let text = try String(contentsOfFile: file, encoding: .utf8)
        XCTAssertTrue(text.contains("[storage]\nretention_days = 9") && text.contains("rotation = 180"), text)
        XCTAssertTrue(web.daemon.logText().contains("web: alice saved settings camera.rotation, storage.retention_days"), web.daemon.logText())
        XCTAssertTrue(web.daemon.logText().contains("web settings saved by alice: configuration reloaded: [storage] applied now"),
                      web.daemon.logText())

        // A second save keeps the first file as .bak and the earlier key.
        XCTAssertEqual(try request(web, "PUT", "/api/settings", body: #"{"settings":{"events.pre_seconds":4}}"#, headers: [origin]).status, 200)
        XCTAssertEqual(try String(contentsOfFile: file + ".bak", encoding: .utf8), text)
        XCTAssertTrue(try String(contentsOfFile: file, encoding: .utf8).contains("retention_days = 9"))

        // Wrong: a value, a key the page does not change, an HLS path, a viewer, another site.
        let before = try String(contentsOfFile: file, encoding: .utf8)
        for (body, key) in [(#"{"settings":{"camera.rotation":45}}"#, "camera.rotation"),
                            (#"{"settings":{"web.enabled":false}}"#, "web.enabled"),
                            (#"{"settings":{"stream.url":"/var/lib/kioskcam/x.m3u8"}}"#, "stream.url"),
                            (#"{"settings":{"storage.retention_days":3,"camera.mirror":"yes"}}"#, "camera.mirror")] {
            let refused = try request(web, "PUT", "/api/settings", body: body, headers: [origin])
            XCTAssertEqual(refused.status, 400, body)
            let error = refused.json["error"] as? [String: Any]
            XCTAssertEqual(error?["key"] as? String, key, refused.body)
            XCTAssertTrue((error?["message"] as? String)?.hasPrefix(key + ": ") == true, refused.body)
        }
        XCTAssertEqual(try request(web, "PUT", "/api/settings", body: "[1]", headers: [origin]).status, 400)
        XCTAssertEqual(try request(web, "PUT", "/api/settings", body: #"{"settings":{"events.pre_seconds":5}}"#,
                                   headers: ["Origin: https://elsewhere.example"]).status, 403, "a change from another site's page is refused")
        let viewerJar = Web(daemon: web.daemon, port: web.port, jar: folder.path + "/viewer-cookies")
        XCTAssertEqual(try login(viewerJar, "bob", password: "viewer pass 123").status, 200)
        XCTAssertEqual(try request(viewerJar, "PUT", "/api/settings", body: #"{"settings":{"events.pre_seconds":5}}"#,
                                   headers: [origin]).status, 403)
        XCTAssertEqual(try String(contentsOfFile: file, encoding: .utf8), before, "nothing refused was saved")

        // Every command reads the saved settings on top of the file; a broken file is named.
        let checked = try Tool.run(Package.kioskcamBinary, ["config", "check", "--config", web.daemon.config], allowFailure: true)
        XCTAssertEqual(checked.status, 0, checked.stderr)
        XCTAssertTrue(checked.stdout.contains("saved from the web app (\(file), overriding the file): camera.rotation = 180, "
                                              + "events.pre_seconds = 4, storage.retention_days = 9"), checked.stdout)
        XCTAssertTrue(checked.stdout.contains("retention_days = 9\n") || checked.stdout.contains("retention_days = 9 "), checked.stdout)
        try "[web]\nenabled = false\n".write(toFile: file, atomically: true, encoding: .utf8)
        let broken = try Tool.run(Package.kioskcamBinary, ["list", "--config", web.daemon.config], allowFailure: true)
        XCTAssertEqual(broken.status, 78, broken.stderr)
        XCTAssertTrue(broken.stderr.contains("web-settings.toml") && broken.stderr.contains("fix or remove that file"), broken.stderr)
    }

    /// Wrong passwords: free at first, then throttled with Retry-After (the right password
    /// too, while the wait runs); counted in status; the password is never logged.
    func testWrongPasswordsAreThrottledCountedAndNeverLogged() throws {
        let folder = TemporaryDirectory()
        let web = try startWeb(folder)
        defer { _ = web.daemon.terminate() }
        try addUser(web, "alice", role: "admin")
        var statuses: [Int] = []
        for attempt in 0..<8 {
            let answer = try login(web, "alice", password: "wrong-password-\(attempt)")
            statuses.append(answer.status)
            if answer.status == 429 { XCTAssertNotNil(Int(answer.headers["retry-after"] ?? ""), "Retry-After") }
        }
        XCTAssertEqual(Array(statuses.prefix(4)), [401, 401, 401, 401])
        XCTAssertEqual(Array(statuses.suffix(3)), [429, 429, 429])
        XCTAssertEqual(try login(web, "alice").status, 429, "the right password waits too")
        let status = web.daemon.status()
        XCTAssertEqual(status["web_login_failures"] as? Int, 5)
        XCTAssertGreaterThanOrEqual(status["web_logins_throttled"] as? Int ?? 0, 3)
        let log = web.daemon.logText()
        XCTAssertTrue(log.contains("wrong password for alice from 127.0.0.1"), log)
        XCTAssertFalse(log.contains("wrong-password-"), "the password is never logged")
        XCTAssertEqual(status["state"] as? String, "idle")
    }

    /// Basic credentials (scripts, NVRs) work over TLS only; with TLS off they are refused.
    func testBasicCredentialsOnlyOverTLS() throws {
        let folder = TemporaryDirectory()
        let web = try startWeb(folder)
        try addUser(web, "alice", role: "admin")
        let basic = "Authorization: Basic " + Data("alice:correct horse battery".utf8).base64EncodedString()
        XCTAssertEqual(try request(web, "GET", "/api/status", cookies: false, headers: [basic]).status, 200)
        let wrong = "Authorization: Basic " + Data("alice:nope nope nope".utf8).base64EncodedString()
        XCTAssertEqual(try request(web, "GET", "/api/status", cookies: false, headers: [wrong]).status, 401)
        XCTAssertEqual(web.daemon.terminate(), 0)

        let plain = TemporaryDirectory()
        let insecure = try startWeb(plain, extra: #"tls = "off""#)
        defer { _ = insecure.daemon.terminate() }
        try addUser(insecure, "alice", role: "admin")
        let refused = try request(insecure, "GET", "/api/status", cookies: false, headers: [basic], scheme: "http")
        XCTAssertEqual(refused.status, 401)
        XCTAssertEqual(refused.json["error"].flatMap { ($0 as? [String: Any])?["code"] as? String }, "tls_required")
        let session = try request(insecure, "POST", "/api/login", body: #"{"user":"alice","password":"correct horse battery"}"#,
                                  scheme: "http")
        XCTAssertEqual(session.status, 200)
        XCTAssertFalse(session.headers["set-cookie"]?.contains("Secure") ?? true, "no Secure flag without TLS")
    }

    /// `web-user`: the rules, the list, removal; a removed user's session ends at once.
    func testWebUserCommandAndRemovalEndsSessions() throws {
        let folder = TemporaryDirectory()
        let web = try startWeb(folder)
        defer { _ = web.daemon.terminate() }
        for (password, reason) in [("short", "at least 10"), ("password123", "common")] {
            let output = try Tool.run("/bin/sh", ["-c", "echo \"$1\" | \"$2\" web-user set carol --config \"$3\"", "sh", password,
                                                  Package.kioskcamBinary, web.daemon.config], allowFailure: true)
            XCTAssertEqual(output.status, 65)
            XCTAssertTrue(output.stderr.contains(reason), output.stderr)
        }
        try addUser(web, "alice", role: "admin")
        XCTAssertEqual(try web.daemon.kioskcam(["web-user", "list"]).stdout, "alice\tadmin\n")
        let stored = try String(contentsOfFile: web.daemon.stateDirectory + "/web-users", encoding: .utf8)
        XCTAssertFalse(stored.contains("correct horse"), "only the hash is stored")
        XCTAssertTrue(stored.hasPrefix("alice admin pbkdf2-sha256$"))
        XCTAssertEqual(try login(web, "alice").status, 200)
        XCTAssertEqual(try request(web, "GET", "/api/me").status, 200)
        XCTAssertEqual(try web.daemon.kioskcam(["web-user", "remove", "alice"]).status, 0)
        XCTAssertEqual(try request(web, "GET", "/api/me").status, 401, "the removed user's session ended")
        XCTAssertEqual(try web.daemon.kioskcam(["web-user", "remove", "alice"]).status, 65)
    }
}
