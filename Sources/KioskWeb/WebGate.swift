import Crypto
import Foundation
import Glibc
import KioskCore
import KioskPIN
import Logging

/// Who is asking: logins, sessions and the throttle, under one lock. Passwords are
/// checked on a thread of their own (PBKDF2 takes 0.1–0.3 s on a Pi), never on the
/// event loop; a wait in force refuses before any hash is computed.
final class WebGate: Sendable {
    struct Identity: Sendable, Equatable {
        var user: String
        var role: WebRole
    }

    enum LoginOutcome: Sendable, Equatable {
        case accepted(Identity, token: String)
        case wrong
        case throttled(seconds: Int)
        case noUsers
        case unavailable(String)
    }

    private struct State {
        var sessions = WebSessionTable()
        var throttle = LoginThrottle()
        /// Basic credentials already checked: SHA-256(user, password) → role and when, so
        /// that a script polling with Basic costs one hash a minute, not one a request.
        var basicCache: [Data: (identity: Identity, at: Double)] = [:]
        /// The users file as last read, and the stat that says whether it changed since.
        var users: (stamp: FileStamp?, list: [WebUser]) = (nil, [])
    }

    /// What changes whenever the CLI replaces the users file (a new inode, by rename).
    private struct FileStamp: Equatable {
        var inode: UInt64
        var modified: Int64
        var size: Int64
    }

    private let store: WebUserStore
    private let digests: WebUserDigests
    private let nonceKey: [UInt8] = (0..<32).map { _ in UInt8.random(in: 0 ... .max) }
    private let logger: Logger
    private let state = Locked(State())
    private let clock: @Sendable () -> Double

    init(store: WebUserStore, logger: Logger, clock: @escaping @Sendable () -> Double = { ProcessInfo.processInfo.systemUptime }) {
        self.store = store
        digests = WebUserDigests(directory: store.directory)
        self.logger = logger
        self.clock = clock
    }

    var hasUsers: Bool { !users().isEmpty }

    var userCount: Int { users().count }

    /// Figures for status and metrics.
    var figures: (sessions: Int, failures: Int, refused: Int) {
        state.withLock { ($0.sessions.count, $0.throttle.failuresTotal, $0.throttle.refusedTotal) }
    }

    /// Checks a password (blocking: call off the event loop) and opens a session.
    func login(user: String, password: String, address: String) -> LoginOutcome {
        let role: WebRole
        switch checkPassword(user: user, password: password, address: address) {
        case .success(let checked): role = checked
        case .failure(let refusal): return refusal.outcome
        }
        let token = WebSessionToken.make(from: (0..<32).map { _ in UInt8.random(in: 0 ... .max) })
        state.withLock { $0.sessions.open(token: token, user: user, role: role, now: clock()) }
        logger.notice("web: \(user) (\(role.rawValue)) logged in from \(address)")
        return .accepted(Identity(user: user, role: role), token: token)
    }

    /// The identity of a session cookie, if valid — and only while the user still exists
    /// with that role (a user removed or demoted by the CLI loses its sessions).
    func identity(token: String) -> Identity? {
        guard let session = state.withLock({ $0.sessions.use(token: token, now: clock()) }) else { return nil }
        guard let current = currentRole(of: session.user), current == session.role else {
            state.withLock { $0.sessions.closeAll(user: session.user) }
            return nil
        }
        return Identity(user: session.user, role: session.role)
    }

    /// The identity of HTTP Basic credentials (blocking on a cache miss); no session is opened.
    func identity(basicUser user: String, password: String, address: String) -> LoginOutcome {
        var hasher = SHA256()
        hasher.update(data: Array(user.utf8) + [0] + Array(password.utf8))
        let key = Data(hasher.finalize())
        let now = clock()
        if let cached = state.withLock({ $0.basicCache[key] }), now - cached.at < 60, currentRole(of: user) == cached.identity.role {
            return .accepted(cached.identity, token: "")
        }
        switch checkPassword(user: user, password: password, address: address) {
        case .failure(let refusal):
            return refusal.outcome
        case .success(let role):
            let identity = Identity(user: user, role: role)
            state.withLock {
                if $0.basicCache.count > 64 { $0.basicCache.removeAll() }
                $0.basicCache[key] = (identity, now)
            }
            return .accepted(identity, token: "")
        }
    }

    func logout(token: String) {
        state.withLock { $0.sessions.close(token: token) }
    }

    // MARK: Passwords and users

    private struct Refusal: Error {
        var outcome: LoginOutcome
    }

    /// The throttle, then the password: the role, or why not. A wrong password counts.
    private func checkPassword(user: String, password: String, address: String) -> Result<WebRole, Refusal> {
        let wait = state.withLock { $0.throttle.admit(user: user, address: address, now: clock()) }
        if wait > 0 {
            logger.notice("web: login for \(user) from \(address) refused: throttled for \(wait) s")
            return .failure(Refusal(outcome: .throttled(seconds: wait)))
        }
        guard hasUsers else {
            state.withLock { $0.throttle.release(user: user, address: address) }
            return .failure(Refusal(outcome: .noUsers))
        }
        let role: WebRole?
        do {
            role = WebUserName.isValid(user) ? try store.verify(name: user, password: password) : nil
        } catch {
            state.withLock { $0.throttle.release(user: user, address: address) }
            logger.error("web: cannot check a login: \(error)")
            return .failure(Refusal(outcome: .unavailable("\(error)")))
        }
        guard let role else {
            let next = state.withLock { $0.throttle.fail(user: user, address: address, now: clock()) }
            let who = WebUserName.isValid(user) ? user : "(invalid name)"
            let wait = next > 0 ? "; next attempt in \(next) s" : ""
            logger.warning("web: wrong password for \(who) from \(address)\(wait)")
            return .failure(Refusal(outcome: next > 0 ? .throttled(seconds: next) : .wrong))
        }
        state.withLock { $0.throttle.succeed(user: user, address: address, now: clock()) }
        // RTSP's Digest needs a key made from the password, which only a typed password gives.
        if !digests.has(name: user) {
            do { try digests.set(name: user, password: password) } catch { logger.error("web: cannot keep \(user)'s RTSP Digest key: \(error)") }
        }
        return .success(role)
    }

    /// The identity of RTSP Digest credentials (reads the digests file: call off the event
    /// loop). A wrong response counts as a wrong password, for the user and the address.
    /// - Parameter method: The request's method, part of what the client hashed.
    func identity(digest: DigestAuthorization, method: String, address: String) -> LoginOutcome {
        let user = digest.user
        var missingKey = false
        let outcome = check(user: user, address: address, protocolName: "rtsp") {
            guard let ha1 = digests.ha1(name: user, algorithm: digest.algorithm) else {
                missingKey = true
                return false
            }
            let expected = digest.expectedResponse(ha1: ha1, method: method) { WebUserDigests.hash($0, digest.algorithm) }
            return DigestAuthorization.constantTimeEquals(expected, digest.response)
        }
        if missingKey {
            logger.warning("rtsp: \(user) has no Digest key yet (the password predates RTSP): set it again with `kioskcam web-user set \(user)`, or log in to the web app once")
        }
        return outcome
    }

    /// The throttle, then `matches` (blocking), for a user who must exist: accepted with
    /// the user's role, or why not. A mismatch counts as a wrong password.
    func check(user: String, address: String, protocolName: String = "onvif", matches: () -> Bool) -> LoginOutcome {
        let wait = state.withLock { $0.throttle.admit(user: user, address: address, now: clock()) }
        if wait > 0 {
            logger.notice("\(protocolName): login for \(user) from \(address) refused: throttled for \(wait) s")
            return .throttled(seconds: wait)
        }
        guard hasUsers else {
            state.withLock { $0.throttle.release(user: user, address: address) }
            return .noUsers
        }
        let role = currentRole(of: user)
        if let role, matches() {
            state.withLock { $0.throttle.succeed(user: user, address: address, now: clock()) }
            return .accepted(Identity(user: user, role: role), token: "")
        }
        let next = state.withLock { $0.throttle.fail(user: user, address: address, now: clock()) }
        logger.warning("\(protocolName): wrong password for \(user) from \(address)\(next > 0 ? "; next attempt in \(next) s" : "")")
        return next > 0 ? .throttled(seconds: next) : .wrong
    }

    /// A Digest nonce that says when it was made and that we made it (HMAC with a key
    /// made at each start), so that no table of nonces is kept: `<seconds hex>.<tag hex>`
    /// (`DigestNonceClock` reads and writes the seconds).
    func makeNonce(now: Double = ProcessInfo.processInfo.systemUptime) -> String {
        nonce(stamp: DigestNonceClock.stamp(uptime: now))
    }

    private func nonce(stamp: String) -> String {
        let tag = HMAC<SHA256>.authenticationCode(for: Array(stamp.utf8), using: SymmetricKey(data: nonceKey))
        return stamp + "." + Data(tag).prefix(16).map { String(format: "%02x", $0) }.joined()
    }

    /// Whether a nonce is ours and under five minutes old. A client wrote it: its stamp is
    /// checked as text before any arithmetic.
    func nonceIsFresh(_ nonce: String, now: Double = ProcessInfo.processInfo.systemUptime) -> Bool {
        let parts = nonce.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let made = DigestNonceClock.seconds(in: parts[0]) else { return false }
        guard self.nonce(stamp: String(parts[0])) == nonce else { return false }
        return DigestNonceClock.isFresh(madeAt: made, now: now)
    }

    private func currentRole(of user: String) -> WebRole? { users().first { $0.name == user }?.role }

    /// The users, read again only when the file changed: every request with a session
    /// asks, and one `stat` is cheaper than reading and parsing the file each time.
    private func users() -> [WebUser] {
        var info = stat()
        let stamp = stat(store.path, &info) == 0
            ? FileStamp(inode: UInt64(info.st_ino), modified: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec),
                        size: Int64(info.st_size))
            : nil
        if let cached = state.withLock({ $0.users.stamp == stamp && stamp != nil ? $0.users.list : nil }) { return cached }
        let list = (try? store.list()) ?? []
        state.withLock { $0.users = (stamp, list) }
        return list
    }
}
