/// The web app's logged-in sessions, held in memory only (a restart logs everyone out).
///
/// A session is found by its token, the cookie's value: 32 random bytes, base64url. A
/// session ends after `idleSeconds` without a request or `absoluteSeconds` after the
/// login, whichever comes first; the table holds at most `capacity` sessions and drops
/// the least recently used when a new one would not fit, so a login loop cannot grow memory.
public struct WebSessionTable: Sendable {
    public struct Session: Sendable, Equatable {
        public var user: String
        public var role: WebRole
        /// Monotonic seconds of the login and of the last request.
        public var createdAt: Double
        public var lastUsedAt: Double
    }

    public static let cookieName = "kioskcam_session"
    /// 12 hours without a request.
    public static let standardIdleSeconds: Double = 12 * 3600
    /// 7 days after the login, however busy.
    public static let standardAbsoluteSeconds: Double = 7 * 24 * 3600

    public let idleSeconds: Double
    public let absoluteSeconds: Double
    public let capacity: Int
    private var sessions: [String: Session] = [:]

    public init(idleSeconds: Double = standardIdleSeconds, absoluteSeconds: Double = standardAbsoluteSeconds, capacity: Int = 256) {
        self.idleSeconds = idleSeconds
        self.absoluteSeconds = absoluteSeconds
        self.capacity = max(1, capacity)
    }

    public var count: Int { sessions.count }

    /// Opens a session under `token` (made by the caller from a cryptographic random source).
    public mutating func open(token: String, user: String, role: WebRole, now: Double) {
        expire(now: now)
        while sessions.count >= capacity, let oldest = sessions.min(by: { $0.value.lastUsedAt < $1.value.lastUsedAt })?.key {
            sessions[oldest] = nil
        }
        sessions[token] = Session(user: user, role: role, createdAt: now, lastUsedAt: now)
    }

    /// The session of `token` if it is still valid, refreshed as used now.
    public mutating func use(token: String, now: Double) -> Session? {
        guard var session = sessions[token] else { return nil }
        guard isValid(session, now: now) else {
            sessions[token] = nil
            return nil
        }
        session.lastUsedAt = now
        sessions[token] = session
        return session
    }

    /// Ends one session (logout).
    public mutating func close(token: String) { sessions[token] = nil }

    /// Ends every session of `user` (removed, or given another role or password).
    public mutating func closeAll(user: String) { sessions = sessions.filter { $0.value.user != user } }

    /// Drops every session past its idle or absolute limit.
    public mutating func expire(now: Double) { sessions = sessions.filter { isValid($0.value, now: now) } }

    private func isValid(_ session: Session, now: Double) -> Bool {
        now - session.lastUsedAt < idleSeconds && now - session.createdAt < absoluteSeconds
    }
}
