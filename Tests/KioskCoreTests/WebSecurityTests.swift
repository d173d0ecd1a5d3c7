import KioskCore
import XCTest

/// The web app's rules that decide who gets in: routes and roles, sessions, the login
/// throttle, credentials, origins and passwords. All pure, on a hand-driven clock.
final class WebSecurityTests: XCTestCase {
    // MARK: Routes

    /// Every route but the login page, its files and the login call needs a session: the
    /// table is walked, so a new route cannot be added open by accident.
    func testOnlyTheLoginIsOpen() {
        let open: [(String, String)] = [("GET", "/login"), ("GET", "/static/app.css"), ("GET", "/api/login"), ("POST", "/api/login")]
        for (method, path) in open {
            guard case .route(let route) = WebRoute.match(method: method, path: path) else { return XCTFail("\(method) \(path)") }
            XCTAssertEqual(route.access, .open, "\(method) \(path)")
        }
        let closed: [(String, String, WebRole)] = [
            ("GET", "/", .viewer), ("GET", "/live", .viewer), ("GET", "/library", .viewer), ("GET", "/events", .viewer),
            ("GET", "/status", .viewer), ("GET", "/settings", .admin), ("POST", "/api/logout", .viewer), ("GET", "/api/me", .viewer),
            ("GET", "/api/status", .viewer), ("GET", "/api/library", .viewer), ("GET", "/api/events", .viewer),
            ("GET", "/media/video/20261128/101455.mp4", .viewer), ("HEAD", "/media/video/20261128/101455.mp4", .viewer),
            ("DELETE", "/media/video/20261128/101455.mp4", .admin), ("GET", "/thumbs/audio/20261128/101455.m4a", .viewer),
            ("GET", "/api/snapshot.jpg", .viewer), ("GET", "/api/live", .viewer), ("POST", "/api/recording", .admin),
            ("POST", "/api/snapshot", .admin), ("POST", "/api/event", .admin), ("POST", "/api/export", .admin),
            ("GET", "/api/settings", .admin), ("PUT", "/api/settings", .admin),
            ("GET", "/exports/video-20261128-101455_0-1000.mp4", .viewer),
            ("GET", "/api/live.m3u8", .viewer), ("GET", "/api/live/init.mp4", .viewer), ("GET", "/api/live/12.m4s", .viewer),
        ]
        for (method, path, role) in closed {
            guard case .route(let route) = WebRoute.match(method: method, path: path) else { return XCTFail("\(method) \(path)") }
            XCTAssertEqual(route.access, .user(role), "\(method) \(path)")
        }
    }

    func testAViewerMayNotDoWhatAnAdminDoes() {
        XCTAssertTrue(WebRole.admin.allows(.viewer))
        XCTAssertTrue(WebRole.admin.allows(.admin))
        XCTAssertTrue(WebRole.viewer.allows(.viewer))
        XCTAssertFalse(WebRole.viewer.allows(.admin))
    }

    func testUnknownPathsAndMethodsAreTold() {
        XCTAssertEqual(WebRoute.match(method: "GET", path: "/nope"), .notFound)
        XCTAssertEqual(WebRoute.match(method: "DELETE", path: "/api/status"), .methodNotAllowed(allowed: ["GET"]))
        XCTAssertEqual(WebRoute.match(method: "GET", path: "/api/login"), .route(.loginInfo))
        XCTAssertEqual(WebRoute.match(method: "PATCH", path: "/api/login"), .methodNotAllowed(allowed: ["GET", "POST"]))
        XCTAssertEqual(WebRoute.match(method: "GET", path: "/static/../../etc/passwd"), .notFound)
        XCTAssertEqual(WebRoute.match(method: "GET", path: "/api/live/0.m4s"), .route(.liveSegment(0)))
        XCTAssertEqual(WebRoute.match(method: "GET", path: "/api/live/999999999.m4s"), .route(.liveSegment(999_999_999)))
        for path in ["/api/live/-1.m4s", "/api/live/01.m4s", "/api/live/1234567890.m4s", "/api/live/.m4s", "/api/live/1.ts",
                     "/api/live/+1.m4s", "/api/live/1.m4s/x", "/api/live/١.m4s", "/api/live/init.mp4.m4s"] {
            XCTAssertEqual(WebRoute.match(method: "GET", path: path), .notFound, path)
        }
        XCTAssertEqual(WebRoute.match(method: "POST", path: "/api/live.m3u8"), .methodNotAllowed(allowed: ["GET"]))
    }

    /// Traversal in every spelling is simply not a library path: nothing is ever joined.
    func testLibraryPathsRefuseEveryTraversal() {
        let hostile = [
            "/media/video/20261128/../../../etc/passwd", "/media/video/20261128/%2e%2e%2fetc%2fpasswd",
            "/media/video/20261128/%252e%252e%252f", "/media/video/20261128/..\\..\\etc\\passwd", "/media/../20261128/101455.mp4",
            "/media/video/../../101455.mp4", "/media/video/20261399/101455.mp4", "/media/video/20261128/.index",
            "/media/video/20261128/101455.mp4/..", "/media/video/20261128//101455.mp4", "/media/etc/20261128/101455.mp4",
            "/media/video/20261128/101455.jpg", "/media/video/20261128/101455..mp4", "/media/video/20261128/abc.mp4",
            "/thumbs/video/20261128/.thumbs", "/media/video/20261128/101455.mp4%00.jpg",
            "/exports/../../etc/passwd", "/exports/..mp4", "/exports/.hidden.mp4", "/exports/clip.sh", "/exports/a%2fb.mp4",
        ]
        for path in hostile {
            XCTAssertEqual(WebRoute.match(method: "GET", path: path), .notFound, path)
        }
        guard case .route(.media(let file)) = WebRoute.match(method: "GET", path: "/media/video/20261128/101455-motion.mp4") else {
            return XCTFail("a real event clip's path")
        }
        XCTAssertEqual(file.path(in: LibraryLayout(root: "/media")), "/media/video/20261128/101455-motion.mp4")
        XCTAssertEqual(file.thumbnailURL, "/thumbs/video/20261128/101455-motion.mp4")
        XCTAssertEqual(WebMediaPath(relative: "photo/20261128/101455.jpg")?.mediaURL, "/media/photo/20261128/101455.jpg")
    }

    func testStaticNamesAreFlatAndTyped() {
        XCTAssertEqual(WebStaticName.contentType(of: "live.js"), "text/javascript; charset=utf-8")
        XCTAssertNil(WebStaticName.contentType(of: "live.js.map"))
        XCTAssertNil(WebStaticName.contentType(of: ".js"))
        XCTAssertNil(WebStaticName.contentType(of: "Live.exe"))
    }

    // MARK: Sessions

    func testSessionsEndWhenIdleOrTooOld() {
        var table = WebSessionTable(idleSeconds: 100, absoluteSeconds: 1000)
        table.open(token: "a", user: "alice", role: .admin, now: 0)
        XCTAssertEqual(table.use(token: "a", now: 99)?.user, "alice")
        XCTAssertEqual(table.use(token: "a", now: 198)?.role, .admin, "each use keeps it alive")
        XCTAssertNil(table.use(token: "a", now: 298.5), "100 s without a request")
        table.open(token: "b", user: "bob", role: .viewer, now: 0)
        for second in stride(from: 50.0, through: 950, by: 50) { XCTAssertNotNil(table.use(token: "b", now: second)) }
        XCTAssertNil(table.use(token: "b", now: 1000), "7 days after the login, however busy (here 1000 s)")
        XCTAssertNil(table.use(token: "never", now: 0))
    }

    func testTheStandardLimitsAreTwelveHoursAndSevenDays() {
        XCTAssertEqual(WebSessionTable.standardIdleSeconds, 43_200)
        XCTAssertEqual(WebSessionTable.standardAbsoluteSeconds, 604_800)
    }

    func testLogoutAndRemovalEndSessions() {
        var table = WebSessionTable()
        table.open(token: "a", user: "alice", role: .admin, now: 0)
        table.open(token: "b", user: "alice", role: .admin, now: 0)
        table.open(token: "c", user: "bob", role: .viewer, now: 0)
        table.close(token: "a")
        XCTAssertNil(table.use(token: "a", now: 1))
        table.closeAll(user: "alice")
        XCTAssertNil(table.use(token: "b", now: 1))
        XCTAssertNotNil(table.use(token: "c", now: 1))
    }

    /// A login loop cannot grow memory: the least recently used session goes.
    func testTheTableIsBounded() {
        var table = WebSessionTable(capacity: 3)
        for index in 0..<10 { table.open(token: "t\(index)", user: "u", role: .viewer, now: Double(index)) }
        XCTAssertEqual(table.count, 3)
        XCTAssertNotNil(table.use(token: "t9", now: 10))
        XCTAssertNil(table.use(token: "t0", now: 10))
    }

    func testTokensAreBase64URLOf32Bytes() {
        let token = WebSessionToken.make(from: [UInt8](repeating: 0xFF, count: 32))
        XCTAssertEqual(token.count, 43)
        XCTAssertTrue(WebSessionToken.isWellFormed(token))
        XCTAssertFalse(token.contains("/") || token.contains("+") || token.contains("="))
        XCTAssertFalse(WebSessionToken.isWellFormed(token + "x"))
        XCTAssertFalse(WebSessionToken.isWellFormed(String(token.dropLast()) + ";"))
    }

    // MARK: The login throttle

    func testWrongPasswordsSlowDownPerUserAndPerAddress() {
        var throttle = LoginThrottle(policy: PinThrottle(failuresBeforeLockout: 3, firstLockoutSeconds: 30, maximumLockoutSeconds: 3600))
        XCTAssertEqual(throttle.admit(user: "alice", address: "10.0.0.1", now: 0), 0)
        XCTAssertEqual(throttle.fail(user: "alice", address: "10.0.0.1", now: 0), 0)
        XCTAssertEqual(throttle.fail(user: "alice", address: "10.0.0.1", now: 1), 0)
        XCTAssertEqual(throttle.fail(user: "alice", address: "10.0.0.1", now: 2), 30)
        XCTAssertEqual(throttle.admit(user: "alice", address: "10.0.0.2", now: 3), 29, "the user's count, from another address")
        XCTAssertEqual(throttle.admit(user: "bob", address: "10.0.0.1", now: 3), 29, "the address's count, for another user")
        XCTAssertEqual(throttle.admit(user: "bob", address: "10.0.0.2", now: 3), 0)
        XCTAssertEqual(throttle.admit(user: "alice", address: "10.0.0.1", now: 32), 0, "the wait is over")
        XCTAssertEqual(throttle.fail(user: "alice", address: "10.0.0.1", now: 32), 60, "and the next miss doubles it")
        XCTAssertEqual(throttle.refusedTotal, 2)
        XCTAssertEqual(throttle.failuresTotal, 4)
        throttle.succeed(user: "alice", address: "10.0.0.1", now: 33)
        XCTAssertEqual(throttle.admit(user: "alice", address: "10.0.0.1", now: 33), 0)
    }

    /// 1,000 wrong logins in a row: after the free ones, every attempt is refused before
    /// a password is checked.
    func testAThousandWrongLoginsAreRefusedUnchecked() {
        var throttle = LoginThrottle()
        var checked = 0
        for attempt in 0..<1000 {
            let now = Double(attempt) * 0.01
            guard throttle.admit(user: "admin", address: "192.0.2.7", now: now) == 0 else { continue }
            checked += 1
            throttle.fail(user: "admin", address: "192.0.2.7", now: now)
        }
        XCTAssertEqual(checked, PinThrottle.standard.failuresBeforeLockout)
        XCTAssertEqual(throttle.refusedTotal, 1000 - checked)
    }

    func testTheThrottleIsBounded() {
        var throttle = LoginThrottle(capacity: 100)
        for index in 0..<1000 { throttle.fail(user: "u\(index)", address: "a\(index)", now: Double(index)) }
        XCTAssertNil(throttle.entry(.user("u0")))
        XCTAssertNotNil(throttle.entry(.user("u999")))
    }

    /// Guesses sent in parallel (one per connection) were all admitted before the first
    /// miss counted: the checks in flight count now, so no more are admitted than the free
    /// attempts left, and one at a time once they are spent.
    func testParallelGuessesGetNoMoreChecksThanTheFreeAttempts() {
        var throttle = LoginThrottle(policy: PinThrottle(failuresBeforeLockout: 3, firstLockoutSeconds: 30, maximumLockoutSeconds: 3600))
        let admitted = (0..<64).filter { _ in throttle.admit(user: "admin", address: "192.0.2.7", now: 0) == 0 }.count
        XCTAssertEqual(admitted, 3, "64 guesses at once, 3 free attempts")
        XCTAssertEqual(throttle.admit(user: "admin", address: "192.0.2.8", now: 0), 1, "the user's checks in flight hold another address too")
        XCTAssertEqual(throttle.admit(user: "bob", address: "192.0.2.8", now: 0), 0, "another user from another address is not held")
        for _ in 0..<3 { throttle.fail(user: "admin", address: "192.0.2.7", now: 0.2) }
        XCTAssertEqual(throttle.admit(user: "admin", address: "192.0.2.7", now: 1), 30, "the third miss locks")
        let afterTheWait = (0..<64).filter { _ in throttle.admit(user: "admin", address: "192.0.2.7", now: 31) == 0 }.count
        XCTAssertEqual(afterTheWait, 1, "once the free attempts are spent, one check at a time")
        throttle.release(user: "admin", address: "192.0.2.7")
        XCTAssertEqual(throttle.admit(user: "admin", address: "192.0.2.7", now: 31), 0, "a check that ended frees its place")
        throttle.succeed(user: "admin", address: "192.0.2.7", now: 32)
        XCTAssertEqual((0..<64).filter { _ in throttle.admit(user: "admin", address: "192.0.2.7", now: 32) == 0 }.count, 3,
                       "a right password gives the free attempts back")
    }

    /// A flood of failures under other names and addresses fills the table, but the
    /// entries that lock nothing go first: the lock on the account under attack stays.
    func testAFloodOfOtherKeysDoesNotEvictALockInForce() {
        var throttle = LoginThrottle(policy: PinThrottle(failuresBeforeLockout: 3, firstLockoutSeconds: 30, maximumLockoutSeconds: 3600),
                                     capacity: 100)
        for _ in 0..<3 { throttle.fail(user: "admin", address: "192.0.2.7", now: 0) }
        for index in 0..<1000 { throttle.fail(user: "u\(index)", address: "a\(index)", now: 1 + Double(index) / 100) }
        XCTAssertEqual(throttle.entry(.user("admin"))?.failures, 3)
        XCTAssertGreaterThan(throttle.admit(user: "admin", address: "198.51.100.1", now: 12), 0)
        XCTAssertNotNil(throttle.entry(.user("u999")), "the newest of the rest stay")
        XCTAssertNil(throttle.entry(.user("u0")))
    }

    /// Guessing a user's password locks the user, which anyone can cause: the addresses
    /// the user logged in from lately are not held by it (an NVR keeps its stream), and
    /// their logins do not give the guesser fresh attempts.
    func testGuessesFromElsewhereDoNotLockOutAKnownAddress() {
        var throttle = LoginThrottle(policy: PinThrottle(failuresBeforeLockout: 3, firstLockoutSeconds: 30, maximumLockoutSeconds: 3600))
        XCTAssertEqual(throttle.admit(user: "nvr", address: "10.0.0.5", now: 0), 0)
        throttle.succeed(user: "nvr", address: "10.0.0.5", now: 0)
        for _ in 0..<3 {
            XCTAssertEqual(throttle.admit(user: "nvr", address: "203.0.113.9", now: 10), 0)
            throttle.fail(user: "nvr", address: "203.0.113.9", now: 10)
        }
        XCTAssertEqual(throttle.admit(user: "nvr", address: "198.51.100.2", now: 11), 29, "a new address waits for the user's lock")
        XCTAssertEqual(throttle.admit(user: "nvr", address: "10.0.0.5", now: 11), 0, "the NVR's own address does not")
        throttle.succeed(user: "nvr", address: "10.0.0.5", now: 11)
        XCTAssertEqual(throttle.entry(.user("nvr"))?.failures, 3, "a login during the lock leaves the user's count")
        XCTAssertEqual(throttle.admit(user: "nvr", address: "203.0.113.9", now: 12), 28, "so the guesser still waits")
        XCTAssertEqual(throttle.admit(user: "nvr", address: "10.0.0.5", now: 12), 0)
        throttle.fail(user: "nvr", address: "10.0.0.5", now: 12)
        XCTAssertEqual(throttle.entry(.address("10.0.0.5"))?.failures, 1, "a known address still has its own count")
        XCTAssertEqual(throttle.admit(user: "nvr", address: "10.0.0.6", now: 13), 59, "and its misses count on the user too")
        let weekLater = 11 + LoginThrottle.knownForSeconds + 1
        XCTAssertEqual(throttle.admit(user: "nvr", address: "10.0.0.5", now: weekLater), 0, "the user's lock has run out")
        throttle.fail(user: "nvr", address: "10.0.0.5", now: weekLater)
        XCTAssertGreaterThan(throttle.admit(user: "nvr", address: "10.0.0.5", now: weekLater + 1), 0,
                             "a week after its last login the address is no longer known: the user's lock holds it")
    }

    /// One address holds at most its share of a server's connections, so sockets held
    /// open by one client cannot shut out the rest; loopback (a proxy on the board) is
    /// not capped.
    func testOneAddressHoldsAtMostItsShareOfConnections() {
        var open = ConnectionsPerAddress(limit: 4)
        XCTAssertEqual((0..<10).filter { _ in open.enter("203.0.113.9") }.count, 4)
        XCTAssertEqual(open.refused, 6)
        XCTAssertTrue(open.enter("198.51.100.2"), "another address has its own share")
        open.leave("203.0.113.9")
        XCTAssertEqual(open.count("203.0.113.9"), 3)
        XCTAssertTrue(open.enter("203.0.113.9"), "a closed one frees its place")
        XCTAssertFalse(open.enter("203.0.113.9"))
        for address in ["127.0.0.1", "::1", "::ffff:127.0.0.1"] {
            XCTAssertEqual((0..<100).filter { _ in open.enter(address) }.count, 100, address)
            XCTAssertEqual(open.count(address), 0, "\(address) is not counted")
        }
        for _ in 0..<10 { open.leave("192.0.2.1") }
        XCTAssertEqual(open.count("192.0.2.1"), 0, "leaving what never entered changes nothing")
        XCTAssertTrue(ConnectionsPerAddress.admits("10.0.0.5", alreadyOpen: 4, limit: 5))
        XCTAssertFalse(ConnectionsPerAddress.admits("10.0.0.5", alreadyOpen: 5, limit: 5))
        XCTAssertTrue(ConnectionsPerAddress.admits("127.0.0.1", alreadyOpen: 500, limit: 5))
    }

    // MARK: Credentials and origins

    func testCookiesAreFoundOnlyWhenWellFormed() {
        let token = WebSessionToken.make(from: Array(repeating: 7, count: 32))
        XCTAssertEqual(HTTPCredentials.cookie("kioskcam_session", in: "theme=dark; kioskcam_session=\(token); x=1"), token)
        XCTAssertNil(HTTPCredentials.cookie("kioskcam_session", in: "kioskcam_session=\(token)'; DROP"))
        XCTAssertNil(HTTPCredentials.cookie("kioskcam_session", in: "kioskcam_session=../../etc/passwd"))
        XCTAssertNil(HTTPCredentials.cookie("kioskcam_session", in: "other=\(token)"))
        XCTAssertNil(HTTPCredentials.cookie("kioskcam_session", in: nil))
        XCTAssertNil(HTTPCredentials.cookie("kioskcam_session", in: String(repeating: "a=b; ", count: 5000)))
    }

    func testBasicCredentials() {
        let header = "Basic " + Data("alice:pass:with:colons".utf8).base64EncodedString()
        XCTAssertEqual(HTTPCredentials.basic(header)?.user, "alice")
        XCTAssertEqual(HTTPCredentials.basic(header)?.password, "pass:with:colons")
        XCTAssertNil(HTTPCredentials.basic("Bearer abc"))
        XCTAssertNil(HTTPCredentials.basic("Basic !!!"))
        XCTAssertNil(HTTPCredentials.basic("Basic " + Data("no colon".utf8).base64EncodedString()))
        XCTAssertNil(HTTPCredentials.basic("Basic " + Data("bad name:x".utf8).base64EncodedString()))
    }

    func testStateChangesMustComeFromOurOwnPages() {
        XCTAssertTrue(WebOriginCheck.allows(origin: nil, host: "cam:8443", tls: true), "scripts send no Origin")
        XCTAssertTrue(WebOriginCheck.allows(origin: "https://cam:8443", host: "cam:8443", tls: true))
        XCTAssertFalse(WebOriginCheck.allows(origin: "https://evil.example", host: "cam:8443", tls: true))
        XCTAssertFalse(WebOriginCheck.allows(origin: "http://cam:8443", host: "cam:8443", tls: true))
        XCTAssertFalse(WebOriginCheck.allows(origin: "null", host: "cam:8443", tls: true))
        XCTAssertFalse(WebOriginCheck.allows(origin: "https://cam:8443", host: nil, tls: true))
    }

    // MARK: Users and passwords

    func testPasswordsMustBeLongAndUncommon() {
        XCTAssertNotNil(WebPasswordPolicy.problem(with: "short", user: "alice"))
        XCTAssertNotNil(WebPasswordPolicy.problem(with: "password123", user: "alice"))
        XCTAssertNotNil(WebPasswordPolicy.problem(with: "Password123", user: "alice"), "case does not help")
        XCTAssertNotNil(WebPasswordPolicy.problem(with: "aaaaaaaaaaaa", user: "alice"))
        XCTAssertNotNil(WebPasswordPolicy.problem(with: "alice-is-great", user: "alice"))
        XCTAssertNotNil(WebPasswordPolicy.problem(with: "line\nbreak in it", user: "alice"))
        XCTAssertNil(WebPasswordPolicy.problem(with: "correct horse battery", user: "alice"))
    }

    func testUserNames() {
        XCTAssertTrue(WebUserName.isValid("alice"))
        XCTAssertTrue(WebUserName.isValid("admin-2_x.y"))
        XCTAssertFalse(WebUserName.isValid(""))
        XCTAssertFalse(WebUserName.isValid("al ice"))
        XCTAssertFalse(WebUserName.isValid("ålice"))
        XCTAssertFalse(WebUserName.isValid(String(repeating: "a", count: 33)))
    }
}
