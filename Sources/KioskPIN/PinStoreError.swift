import Glibc

/// Every failure of the PIN store: what was being done, on which file, and what to do.
/// Never carries a PIN or a hash.
public struct PinStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// The new PIN is not exactly four digits.
        case invalidPIN
        /// The new PIN is too easy to guess (and `allowTrivial` was not given).
        case trivialPIN
        /// The state directory or a file in it cannot be read or written.
        case permissionDenied
        /// Any other I/O failure (disk full, read-only file system, missing parent folder).
        case io
        /// The PIN file exists but is not in the expected format.
        case corrupt
        /// The hash function failed.
        case crypto
    }

    public var code: Code
    public var operation: String
    public var path: String?
    /// The errno, for I/O failures.
    public var errno: Int32?
    public var detail: String
    public var hint: String?

    public init(_ code: Code, operation: String, path: String? = nil, errno: Int32? = nil,
                detail: String = "", hint: String? = nil) {
        self.code = code
        self.operation = operation
        self.path = path
        self.errno = errno
        self.detail = detail.isEmpty ? (errno.map { String(cString: strerror($0)) } ?? "") : detail
        self.hint = hint
    }

    public var description: String {
        var text = operation
        if let path { text += " \(path)" }
        if !detail.isEmpty { text += ": " + detail }
        if let hint { text += "; " + hint }
        return text
    }

    /// Maps an errno from a file operation, with the usual fixes.
    static func system(_ operation: String, path: String, errno code: Int32) -> PinStoreError {
        switch code {
        case EACCES, EPERM:
            return PinStoreError(.permissionDenied, operation: operation, path: path, errno: code,
                                 hint: "run as root or check [control] state_directory")
        case EROFS:
            return PinStoreError(.io, operation: operation, path: path, errno: code,
                                 hint: "the file system is read-only; set [control] state_directory to a writable folder")
        case ENOSPC:
            return PinStoreError(.io, operation: operation, path: path, errno: code, hint: "the disk is full; free some space")
        case ENOENT:
            return PinStoreError(.io, operation: operation, path: path, errno: code,
                                 hint: "create the parent folder or check [control] state_directory")
        case ENOTDIR:
            return PinStoreError(.io, operation: operation, path: path, errno: code,
                                 hint: "a part of the path is not a folder; check [control] state_directory")
        default:
            return PinStoreError(.io, operation: operation, path: path, errno: code)
        }
    }
}
