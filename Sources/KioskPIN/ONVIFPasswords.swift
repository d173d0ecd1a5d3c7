import Foundation
import KioskCore

/// The passwords of the web users an owner chose to let in with ONVIF's PasswordDigest,
/// one line per user in `onvif-passwords` in the state directory (0600):
///
///     nvr <password, base64>
///
/// Why it exists at all: a PasswordDigest is SHA-1(nonce + created + password), which
/// only the password itself can check — no hash of it will do. Home Assistant's ONVIF
/// integration sends nothing else. So this file holds passwords as they are, and only
/// for users set with `kioskcam web-user set NAME --onvif-digest` (a dedicated viewer
/// account for the NVR is the way to use it); everyone else's password exists on the
/// board only as the PBKDF2 hash, and ONVIF clients can still use PasswordText over HTTPS.
public struct ONVIFPasswords: Sendable {
    public let directory: String
    public var path: String { directory + "/onvif-passwords" }
    var lockPath: String { directory + "/web-users.lock" }

    public init(directory: String) {
        self.directory = directory.count > 1 && directory.hasSuffix("/") ? String(directory.dropLast()) : directory
    }

    /// The user's kept password, or nil (not set with `--onvif-digest`).
    public func password(of name: String) -> String? { ((try? read()) ?? [:])[name] }

    /// Keeps (`password` non-nil) or forgets the user's password.
    /// - Throws: `PinStoreError` naming the file when it cannot be written.
    public func set(name: String, password: String?) throws(PinStoreError) {
        if password == nil, try !StateFiles.exists(path) { return }
        try StateFiles.ensureDirectory(directory)
        try StoreLock.holding(lockPath) { () throws(PinStoreError) in
            var entries = try read()
            guard entries[name] != password else { return }
            entries[name] = password
            try write(entries)
        }
    }

    private func read() throws(PinStoreError) -> [String: String] {
        guard let text = try StateFiles.read(path, limit: 256 * 1024) else { return [:] }
        var entries: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 2, WebUserName.isValid(String(fields[0])), let data = Data(base64Encoded: String(fields[1])),
                  let password = String(data: data, encoding: .utf8) else { continue }
            entries[String(fields[0])] = password
        }
        return entries
    }

    private func write(_ entries: [String: String]) throws(PinStoreError) {
        let text = entries.sorted { $0.key < $1.key }.map { "\($0.key) \(Data($0.value.utf8).base64EncodedString())\n" }.joined()
        try StateFiles.writeAtomically(text, to: path, directory: directory)
    }
}
