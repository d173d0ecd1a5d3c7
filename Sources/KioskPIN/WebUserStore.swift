import Foundation
import KioskCore

/// One web user as `kioskcam web-user list` shows it; never the password or its hash.
public struct WebUser: Sendable, Equatable, Codable {
    public var name: String
    public var role: WebRole
}

/// The web app's users: a name, a role and a salted slow hash of the password (the PIN's
/// `PinHash`: PBKDF2-SHA256, 16 bytes of salt), one per line in `web-users` in the state
/// directory (mode 0600, owned like the directory):
///
///     alice admin pbkdf2-sha256$210000$<salt>$<hash>
///
/// No user exists after installation, so nobody can log in until the owner makes one on
/// the board (`kioskcam web-user set`). Every call re-reads the file, so a change made
/// by the CLI applies to the running daemon's next login.
public struct WebUserStore: Sendable {
    public let directory: String
    /// PBKDF2 iterations for passwords set from now on.
    public let iterations: Int

    public var path: String { directory + "/web-users" }
    var lockPath: String { directory + "/web-users.lock" }

    public init(directory: String, iterations: Int = PinHash.defaultIterations) {
        self.directory = directory.count > 1 && directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        self.iterations = max(PinHash.minimumIterations, iterations)
    }

    /// Every user, by name.
    /// - Throws: `PinStoreError` when the file cannot be read or is corrupt.
    public func list() throws(PinStoreError) -> [WebUser] {
        try read().map { WebUser(name: $0.name, role: $0.role) }.sorted { $0.name < $1.name }
    }

    /// Whether any user exists (the login page says how to make the first one otherwise).
    public func hasUsers() -> Bool { ((try? read()) ?? []).isEmpty == false }

    /// Adds a user or replaces one's role and password.
    /// - Throws: `PinStoreError.invalidWebUser` naming the rule a bad name or password breaks;
    ///   a file error naming the path.
    /// - Parameter keepForONVIF: Also keep the password itself for ONVIF's PasswordDigest
    ///   (`ONVIFPasswords`); otherwise a kept one is forgotten.
    public func set(name: String, role: WebRole, password: String, keepForONVIF: Bool = false) throws(PinStoreError) {
        guard WebUserName.isValid(name) else {
            throw PinStoreError(.invalidWebUser, operation: "set the web user", detail: "the name must be \(WebUserName.rule)",
                                hint: "choose a name such as alice or admin-2")
        }
        if let problem = WebPasswordPolicy.problem(with: password, user: name) {
            throw PinStoreError(.invalidWebUser, operation: "set the web user's password", detail: problem,
                                hint: "four unrelated words make a good one")
        }
        let hash = try PinHash(pin: password, iterations: iterations)
        try StateFiles.ensureDirectory(directory)
        try StoreLock.holding(lockPath) { () throws(PinStoreError) in
            var entries = try read().filter { $0.name != name }
            entries.append(Entry(name: name, role: role, hash: hash))
            try write(entries)
        }
        try WebUserDigests(directory: directory).set(name: name, password: password)
        try ONVIFPasswords(directory: directory).set(name: name, password: keepForONVIF ? password : nil)
    }

    /// Removes a user.
    /// - Returns: Whether the user existed.
    public func remove(name: String) throws(PinStoreError) -> Bool {
        try StateFiles.ensureDirectory(directory)
        let removed = try StoreLock.holding(lockPath) { () throws(PinStoreError) -> Bool in
            let entries = try read()
            let kept = entries.filter { $0.name != name }
            guard kept.count != entries.count else { return false }
            try write(kept)
            return true
        }
        try WebUserDigests(directory: directory).remove(name: name)
        try ONVIFPasswords(directory: directory).set(name: name, password: nil)
        return removed
    }

    /// Checks a password. Takes the full hash time also for an unknown user, so timing
    /// does not tell which names exist.
    /// - Returns: The user's role, or nil when the name or the password is wrong.
    public func verify(name: String, password: String) throws(PinStoreError) -> WebRole? {
        let entry = try read().first { $0.name == name }
        let hash: PinHash
        if let entry { hash = entry.hash } else { hash = try Self.decoy(iterations: iterations) }
        let matches = try hash.matches(password)
        guard let entry, matches else { return nil }
        return entry.role
    }

    // MARK: The file

    struct Entry {
        var name: String
        var role: WebRole
        var hash: PinHash
    }

    private func read() throws(PinStoreError) -> [Entry] {
        guard let text = try StateFiles.read(path, limit: 256 * 1024) else { return [] }
        var entries: [Entry] = []
        for (number, line) in text.split(separator: "\n").enumerated() where !line.trimmingCharacters(in: .whitespaces).isEmpty {
            let fields = line.split(separator: " ")
            guard fields.count == 3, WebUserName.isValid(String(fields[0])), let role = WebRole(rawValue: String(fields[1])) else {
                throw PinStoreError(.corrupt, operation: "read the web users", path: path, detail: "line \(number + 1) is not NAME ROLE HASH",
                                    hint: "remove the line, or the file, and set the users again with `kioskcam web-user set`")
            }
            entries.append(Entry(name: String(fields[0]), role: role, hash: try PinHash(parsing: String(fields[2]), path: path)))
        }
        return entries
    }

    private func write(_ entries: [Entry]) throws(PinStoreError) {
        let text = entries.sorted { $0.name < $1.name }
            .map { "\($0.name) \($0.role.rawValue) \($0.hash.encoded.trimmingCharacters(in: .newlines))\n" }.joined()
        try StateFiles.writeAtomically(text, to: path, directory: directory)
    }

    /// A hash no password matches, checked for unknown names.
    private static func decoy(iterations: Int) throws(PinStoreError) -> PinHash {
        try PinHash(pin: "\u{1}no such user\u{1}", iterations: iterations)
    }
}
