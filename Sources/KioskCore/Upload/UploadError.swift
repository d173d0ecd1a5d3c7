/// Why an upload (or the uploader's set-up) failed, told so that a person knows what
/// to do: what failed, on what, and the fix. libcurl's and the server's errors are
/// mapped here once.
public struct UploadError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, Equatable {
        /// A setting is missing or wrong (`[upload]`): fix the configuration.
        case configuration
        /// The secret key file is missing, unreadable or empty.
        case credentials
        /// The local file could not be read (gone, permissions).
        case file
        /// No connection, lost connection, time-out, name resolution: retried.
        case network
        /// The server answered with an error status: retried (unless fixed, again and again).
        case server
        /// The copy does not match the file (ETag against MD5): retried.
        case integrity
        /// The uploader is stopping.
        case cancelled
    }

    public var code: Code
    /// What failed and how to fix it.
    public var message: String
    /// The HTTP status, when the server answered.
    public var httpStatus: Int?

    public init(_ code: Code, _ message: String, httpStatus: Int? = nil) {
        self.code = code
        self.message = message
        self.httpStatus = httpStatus
    }

    /// Worth trying again later: anything but a local file that is gone.
    public var isRetryable: Bool { code != .file && code != .cancelled }

    public var description: String { message }
}
