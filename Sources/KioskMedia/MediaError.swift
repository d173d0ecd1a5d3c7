import CAVUtil
import Glibc

/// Every FFmpeg failure, mapped once: what we were doing, on which file, FFmpeg's
/// own words for the error code, and what the user can do about it.
public struct MediaError: Error, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// No encoder of that name in this FFmpeg build.
        case encoderNotFound
        /// The encoder refused the size, rate or options.
        case encoderRejectedSettings
        /// The storage device is full.
        case diskFull
        /// Reading or writing the file failed.
        case io
        /// The container layer failed.
        case muxer
        /// The input is not media we can read.
        case invalidInput
        /// Pixel conversion is impossible for these formats.
        case conversion
    }

    public var code: Code
    public var operation: String
    public var path: String?
    /// The libav error code (negative), if the error came from FFmpeg.
    public var averror: Int32?
    public var detail: String
    public var hint: String?

    public init(_ code: Code, operation: String, path: String? = nil, averror: Int32? = nil,
                detail: String = "", hint: String? = nil) {
        self.code = code
        self.operation = operation
        self.path = path
        self.averror = averror
        self.detail = detail.isEmpty ? (averror.map(Self.describe) ?? "") : detail
        self.hint = hint
    }

    public var description: String {
        var text = operation + " failed"
        if let path { text += " for \(path)" }
        if !detail.isEmpty { text += ": " + detail }
        if let hint { text += ". " + hint }
        return text
    }

    /// FFmpeg's text for an error code.
    static func describe(_ code: Int32) -> String {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 256) { buffer in
            guard let base = buffer.baseAddress, av_strerror(code, base, 256) == 0 else { return "error \(code)" }
            return String(cString: base)
        }
    }

    static let enospc = kc_averror(ENOSPC)
}

/// Maps a negative libav return code to a `MediaError`; passes non-negative codes through.
@discardableResult
func check(_ result: Int32, _ code: MediaError.Code, _ operation: String, path: String? = nil,
           hint: String? = nil) throws(MediaError) -> Int32 {
    guard result < 0 else { return result }
    if result == MediaError.enospc {
        throw MediaError(.diskFull, operation: operation, path: path, averror: result,
                         hint: "The storage is full: free space or lower storage.retention/segment settings")
    }
    throw MediaError(code, operation: operation, path: path, averror: result, hint: hint)
}

/// FFmpeg's log level, set once per process: libx264 and the muxer are chatty at
/// "info", and their warnings reach the user through our own errors instead.
public enum MediaLibraryLog {
    /// Errors only, set once before the first encoder or decoder opens.
    static let quietByDefault: Void = av_log_set_level(AV_LOG_ERROR)

    public static func setVerbose(_ verbose: Bool) {
        quietByDefault
        av_log_set_level(verbose ? AV_LOG_INFO : AV_LOG_ERROR)
    }
}
