import Crypto
import Foundation
import KioskCore

/// What RTSP's Digest authentication needs of each web user: HA1 = H(name:realm:password)
/// in MD5 and SHA-256, one line per user in `rtsp-digest` in the state directory (0600):
///
///     alice <md5 hex> <sha256 hex>
///
/// Why a second file: Digest checks a response made from the password, so the server
/// must keep something the password hashes to under a fast hash, which the PBKDF2 hash
/// in `web-users` is not. This file is that: as secret as the passwords for RTSP (not
/// for the web app, which takes only the password), readable by the daemon's user only,
/// and written only when the owner types a password (`web-user set`, a web login).
public struct WebUserDigests: Sendable {
    /// The realm every challenge names; HA1 depends on it, so it never changes.
    public static let realm = "KioskCam"

    public let directory: String
    public var path: String { directory + "/rtsp-digest" }
    var lockPath: String { directory + "/web-users.lock" }

    public init(directory: String) {
        self.directory = directory.count > 1 && directory.hasSuffix("/") ? String(directory.dropLast()) : directory
    }

    /// H as the algorithm makes it, lowercase hex.
    public static func hash(_ text: String, _ algorithm: DigestAuthorization.Algorithm) -> String {
        let bytes: [UInt8]
        switch algorithm {
        case .md5: bytes = Array(Insecure.MD5.hash(data: Array(text.utf8)))
        case .sha256: bytes = Array(SHA256.hash(data: Array(text.utf8)))
        }
        return bytes.map { String(format: "%02x", $0) }.joined()
    }

    /// The user's HA1 for `algorithm`, or nil when the user has none (a password set
    /// before this file existed: the next `web-user set` or web login makes it).
    public func ha1(name: String, algorithm: DigestAuthorization.Algorithm) -> String? {
        guard let entry = ((try? read()) ?? [:])[name] else { return nil }
        return algorithm == .md5 ? entry.md5 : entry.sha256
    }

    /// Whether the user has a line.
    public func has(name: String) -> Bool { ((try? read()) ?? [:])[name] != nil }

    /// Writes (or replaces) the user's line from the password.
    /// - Throws: `PinStoreError` naming the file when it cannot be written.
    public func set(name: String, password: String) throws(PinStoreError) {
        let entry = Entry(md5: Self.ha1(name, password, .md5), sha256: Self.ha1(name, password, .sha256))
        try StateFiles.ensureDirectory(directory)
        try StoreLock.holding(lockPath) { () throws(PinStoreError) in
            var entries = try read()
            guard entries[name] != entry else { return }
            entries[name] = entry
            try write(entries)
        }
    }

    /// Removes the user's line (the user was removed).
    public func remove(name: String) throws(PinStoreError) {
        guard try StateFiles.exists(path) else { return }
        try StoreLock.holding(lockPath) { () throws(PinStoreError) in
            var entries = try read()
            guard entries.removeValue(forKey: name) != nil else { return }
            try write(entries)
        }
    }

    static func ha1(_ name: String, _ password: String, _ algorithm: DigestAuthorization.Algorithm) -> String {
        DigestAuthorization.ha1(user: name, realm: realm, password: password) { hash($0, algorithm) }
    }

    struct Entry: Equatable {
        var md5: String
        var sha256: String
    }

    private func read() throws(PinStoreError) -> [String: Entry] {
        guard let text = try StateFiles.read(path, limit: 256 * 1024) else { return [:] }
        var entries: [String: Entry] = [:]
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            // A damaged line only costs that user Digest until the password is set again.
            guard fields.count == 3, WebUserName.isValid(String(fields[0])), fields[1].count == 32, fields[2].count == 64 else { continue }
            entries[String(fields[0])] = Entry(md5: String(fields[1]), sha256: String(fields[2]))
        }
        return entries
    }

    private func write(_ entries: [String: Entry]) throws(PinStoreError) {
        let text = entries.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value.md5) \($0.value.sha256)\n" }.joined()
        try StateFiles.writeAtomically(text, to: path, directory: directory)
    }
}
