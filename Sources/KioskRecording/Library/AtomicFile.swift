import Glibc

/// Replaces a small file whole: written to `path.tmp` (or another suffix), synced, renamed over `path`, the
/// directory synced. A power cut leaves the old file or the new one, never a torn or empty
/// one (a counter rewritten in place once read as 0 after a kill between truncate and write).
public enum AtomicFile {
    /// Why the replacement failed: the step, the file and the system's words (`errno`).
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var operation: String
        public var file: String
        public var reason: String
        public var code: Int32
        public var description: String { "cannot \(operation) \(file): \(reason)" }
    }

    /// - Parameters:
    ///   - bytes: The whole new content.
    ///   - path: The file to replace.
    ///   - mode: Its permissions when created.
    ///   - keepingOld: When set, the old file (if any) is first linked as `path + keepingOld`
    ///     (replacing an older copy), so the previous content survives the replacement.
    ///   - temporarySuffix: The name of the file written before the rename (what start-up
    ///     clean-up looks for).
    public static func replace(_ path: String, with bytes: [UInt8], mode: mode_t, keepingOld suffix: String? = nil,
                               temporarySuffix: String = ".tmp") throws(Failure) {
        let temp = path + temporarySuffix
        let fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { throw failure("create", temp) }
        var written = 0
        while written < bytes.count {
            let got = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, $0.count - written) }
            if got < 0 {
                if errno == EINTR { continue }
                let error = failure("write", temp)
                close(fd)
                unlink(temp)
                throw error
            }
            written += got
        }
        guard fsync(fd) == 0 else {
            let error = failure("sync", temp)
            close(fd)
            unlink(temp)
            throw error
        }
        close(fd)
        if let suffix, access(path, F_OK) == 0 {
            let backup = path + suffix
            unlink(backup)
            guard link(path, backup) == 0 else {
                let error = failure("keep the old file as", backup)
                unlink(temp)
                throw error
            }
        }
        guard rename(temp, path) == 0 else {
            let error = failure("rename \(temp) to", path)
            unlink(temp)
            throw error
        }
        let parent = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        let directory = open(parent.isEmpty ? "/" : parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            _ = fsync(directory)
            close(directory)
        }
    }

    private static func failure(_ operation: String, _ file: String) -> Failure {
        let code = errno
        return Failure(operation: operation, file: file, reason: String(cString: strerror(code)), code: code)
    }
}
