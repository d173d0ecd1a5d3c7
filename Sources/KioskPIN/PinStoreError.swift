import Glibc
import KioskCore

/// Every failure of the PIN store: what was being done, on which file (the subject), and
/// what to do. Never carries a PIN or a hash. The shape and its rendering are
/// `DeviceError`'s.
public typealias PinStoreError = DeviceError<PinStoreErrorCode>

/// What kind of PIN store failure.
public enum PinStoreErrorCode: String, DeviceErrorCode {
    /// The new PIN is not exactly four digits.
    case invalidPIN
    /// The new PIN is too easy to guess (and `allowTrivial` was not given).
    case trivialPIN
    /// A web user's name or password breaks a rule (`WebUserName`, `WebPasswordPolicy`).
    case invalidWebUser
    /// The state directory or a file in it cannot be read or written.
    case permissionDenied
    /// Any other I/O failure (disk full, read-only file system, missing parent folder).
    case io
    /// The PIN file exists but is not in the expected format.
    case corrupt
    /// The hash function failed.
    case crypto
}

extension DeviceError where Code == PinStoreErrorCode {
    /// - Parameters:
    ///   - operation: What was being done ("set the PIN", "read").
    ///   - path: The file or folder, if any.
    ///   - errno: The errno, for I/O failures.
    public init(_ code: Code, operation: String, path: String? = nil, errno: Int32? = nil,
                detail: String = "", hint: String? = nil) {
        self.init(code, subject: path, call: operation, errno: errno,
                  systemMessage: errno.map { String(cString: strerror($0)) }, detail: detail, hint: hint)
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
