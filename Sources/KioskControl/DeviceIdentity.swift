import Foundation
import Glibc
import SystemPackage

/// The device's UUID, created once in the state directory and kept across reinstalls of
/// the binary. `<state_directory>/device-id` holds it as one line, mode 0600,
/// in a 0700 folder.
///
/// A damaged file (not a UUID) is never silently overwritten: it is renamed to
/// `device-id.damaged-<unix time>` so whoever investigates still has it, a new ID is
/// created, and `replacedDamaged` says so for the daemon to log as an error. Refusing to
/// start would make a camera useless over a label; losing the old bytes would make the
/// change impossible to trace.
public struct DeviceIdentity: Sendable, Equatable {
    public enum Origin: Sendable, Equatable {
        /// Read from the file.
        case loaded
        /// No file existed; this ID was just created.
        case created
        /// The file was damaged; it was kept at `preservedAt` and this ID created.
        case replacedDamaged(preservedAt: String, reason: String)
    }

    public let id: UUID
    public let origin: Origin
    public let path: String

    /// Lower-case, as written to the file and shown in status.
    public var text: String { id.uuidString.lowercased() }

    public static let fileName = "device-id"

    /// Reads the device ID, creating it (and the directory) the first time.
    ///
    /// Creation is atomic and never replaces a file: the ID is written to a temp file,
    /// synced, and hard-linked into place; when two processes race, both end up with the
    /// one that landed first.
    /// - Parameter directory: The state directory (`control.state_directory`).
    /// - Throws: `DeviceIdentityError` naming the path when the directory or file cannot
    ///   be created or read.
    public static func loadOrCreate(directory: String) throws(DeviceIdentityError) -> DeviceIdentity {
        let path = directory + "/" + fileName
        try prepare(directory)
        for _ in 0..<3 {
            switch try read(path) {
            case .some(.success(let id)):
                return DeviceIdentity(id: id, origin: .loaded, path: path)
            case .some(.failure(let damaged)):
                let reason = damaged.text
                let preserved = path + ".damaged-\(Int(Date().timeIntervalSince1970))"
                guard rename(path, preserved) == 0 else {
                    throw DeviceIdentityError(path: path, message: "the device ID file \(path) is damaged (\(reason)) and cannot be moved aside: \(Errno(rawValue: errno)); fix or remove it")
                }
                let id = try create(path)
                return DeviceIdentity(id: id, origin: .replacedDamaged(preservedAt: preserved, reason: reason), path: path)
            case .none:
                if let id = try createIfAbsent(path) { return DeviceIdentity(id: id, origin: .created, path: path) }
                // Someone else created it between our read and our link: read theirs.
            }
        }
        throw DeviceIdentityError(path: path, message: "the device ID file \(path) keeps changing while it is read; is another program writing it?")
    }

    /// Creates the directory 0700, or tightens an existing one we own to 0700.
    private static func prepare(_ directory: String) throws(DeviceIdentityError) {
        var status = stat()
        if stat(directory, &status) != 0 {
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw DeviceIdentityError(path: directory, message: "cannot create the state directory \(directory): \(error.localizedDescription); create it (mode 0700) or set control.state_directory")
            }
            return
        }
        guard (status.st_mode & S_IFMT) == S_IFDIR else {
            throw DeviceIdentityError(path: directory, message: "the state directory \(directory) is not a directory; fix control.state_directory")
        }
        if status.st_uid == getuid(), status.st_mode & 0o077 != 0 { chmod(directory, 0o700) }
    }

    /// nil when there is no file; else the ID or why the content is not one.
    private static func read(_ path: String) throws(DeviceIdentityError) -> Result<UUID, DamagedReason>? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw DeviceIdentityError(path: path, message: "cannot read the device ID file \(path): run as root (the daemon does) or check its permissions")
        }
        guard data.count <= 256 else { return .failure(DamagedReason("\(data.count) bytes, expected one UUID")) }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let id = UUID(uuidString: text) else {
            return .failure(DamagedReason(text.isEmpty ? "empty" : "not a UUID"))
        }
        return .success(id)
    }

    /// Writes a new ID to a temp file and links it into place; nil when the file appeared meanwhile.
    private static func createIfAbsent(_ path: String) throws(DeviceIdentityError) -> UUID? {
        let id = UUID()
        let temp = path + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw DeviceIdentityError(path: path, message: "cannot create the device ID file in \((path as NSString).deletingLastPathComponent): \(Errno(rawValue: errno)); run as root or set control.state_directory")
        }
        defer { unlink(temp) }
        let bytes = Array((id.uuidString.lowercased() + "\n").utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd) == 0
        close(fd)
        guard written == bytes.count, synced else {
            throw DeviceIdentityError(path: path, message: "cannot write the device ID file \(path): \(Errno(rawValue: errno)); is the disk full?")
        }
        guard link(temp, path) == 0 else {
            if errno == EEXIST { return nil }
            throw DeviceIdentityError(path: path, message: "cannot create the device ID file \(path): \(Errno(rawValue: errno))")
        }
        syncDirectory((path as NSString).deletingLastPathComponent)
        return id
    }

    private static func create(_ path: String) throws(DeviceIdentityError) -> UUID {
        guard let id = try createIfAbsent(path) else {
            throw DeviceIdentityError(path: path, message: "the device ID file \(path) reappeared while it was being replaced; is another program writing it?")
        }
        return id
    }

    private static func syncDirectory(_ directory: String) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }

    private struct DamagedReason: Error {
        let text: String
        init(_ text: String) { self.text = text }
    }
}


/// The device ID could not be read or created.
public struct DeviceIdentityError: Error, CustomStringConvertible, Equatable {
    public var path: String
    public var message: String
    public var description: String { message }
}
