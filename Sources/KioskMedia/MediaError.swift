import CAVUtil
import Glibc
import KioskCore

/// Every FFmpeg failure, mapped once: what we were doing, on which file (the subject, if
/// any), FFmpeg's own words for the error code, and what the user can do about it. The
/// shape and its rendering are `DeviceError`'s.
public typealias MediaError = DeviceError<MediaErrorCode>

/// What kind of FFmpeg failure.
public enum MediaErrorCode: String, DeviceErrorCode {
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

extension DeviceError where Code == MediaErrorCode {
    /// - Parameters:
    ///   - operation: What we were doing ("open H.264 encoder", "write packet").
    ///   - path: The file or URL, if any.
    ///   - averror: The libav error code (negative), if the error came from FFmpeg. An
    ///     errno in disguise (`AVERROR(ENOSPC)`) is kept as the errno; for the others
    ///     (`AVERROR_INVALIDDATA`) FFmpeg's words stand alone.
    public init(_ code: Code, operation: String, path: String? = nil, averror: Int32? = nil,
                detail: String = "", hint: String? = nil) {
        self.init(code, subject: path, call: operation, errno: averror.flatMap(Self.errno(of:)),
                  systemMessage: averror.map(Self.describe), detail: detail, hint: hint)
    }

    /// The errno behind `AVERROR(errno)`; nil for FFmpeg's own codes (`FFERRTAG`, all
    /// far below -4095, where the kernel's errno values end).
    static func errno(of averror: Int32) -> Int32? {
        averror < 0 && averror >= -4095 ? -averror : nil
    }

    /// FFmpeg's text for an error code.
    static func describe(_ code: Int32) -> String {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 256) { buffer in
            guard let base = buffer.baseAddress, av_strerror(code, base, 256) == 0 else { return "error \(code)" }
            return String(cString: base)
        }
    }

    static var enospc: Int32 { kc_averror(ENOSPC) }
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
