import Foundation
import Glibc
import KioskCore

/// The upload queue on disk: `<state_directory>/upload-queue`, replaced atomically
/// (write a temp file, fsync, rename, fsync the folder), so a power cut leaves the old
/// queue or the new one, never half of one.
public struct UploadQueueStore: Sendable {
    public let directory: String
    public var path: String { directory + "/" + UploadQueue.fileName }

    public init(stateDirectory: String) { directory = stateDirectory }

    /// The queue on disk; empty when there is none yet.
    /// - Returns: The queue and the number of damaged lines skipped.
    /// - Throws: `UploadError.file` when the file exists but cannot be read.
    public func load() throws(UploadError) -> (queue: UploadQueue, damagedLines: Int) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return (UploadQueue(), 0) }
            throw UploadError.fileFailure("open", path)
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        // A full queue is about 200,000 lines of under 100 bytes; anything far larger is not ours.
        let limit = UploadQueue.maximumEntries * 128
        while bytes.count < limit {
            let got = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if got < 0 {
                if errno == EINTR { continue }
                throw UploadError.fileFailure("read", path)
            }
            if got == 0 { break }
            bytes.append(contentsOf: buffer[..<got])
        }
        return UploadQueue.parse(bytes)
    }

    /// What retention must leave: the files waiting, as the queue file says.
    public func hold() -> UploadHold {
        UploadHold(waiting: (try? load().queue.relativePaths) ?? [])
    }

    /// Replaces the file with `queue`.
    /// - Throws: `UploadError.file` naming the path and the cause (a full disk, a
    ///   missing or read-only state directory).
    public func save(_ queue: UploadQueue) throws(UploadError) {
        do {
            try AtomicFile.replace(path, with: Array(queue.render().utf8), mode: 0o600)
        } catch {
            throw UploadError(.file, "\(error.description); check that [control] state_directory exists, is writable and its disk is not full "
                              + "(the queue is kept in memory meanwhile)")
        }
    }
}

extension UploadError {
    /// A file that could not be opened or read (errno now), with the likely fix.
    public static func fileFailure(_ operation: String, _ path: String) -> UploadError {
        let code = errno
        let reason = String(cString: strerror(code))
        let hint = code == ENOENT ? "it was deleted before its upload" : "check its permissions"
        return UploadError(.file, "cannot \(operation) \(path): \(reason) (\(hint))")
    }
}
