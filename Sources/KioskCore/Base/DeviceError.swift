/// What kind of failure a device wrapper reports: one enum per wrapper (`V4L2ErrorCode`,
/// `ALSAErrorCode`, …), for callers that react differently to them (busy: try again
/// later; unplugged: wait for the device to come back).
public protocol DeviceErrorCode: Hashable, Sendable {
    /// What names the step that failed. By default a `String` holding the C function or
    /// ioctl ("VIDIOC_S_FMT", "open", "mmap"), as its manual page names it. A wrapper
    /// whose steps are a closed set (ALSA, GPIO) has its own enum instead, so that its
    /// classification and its callers can match on the step rather than on words.
    associatedtype Call: Hashable, Sendable, CustomStringConvertible = String
}

/// A failure of a device wrapper — camera, microphone, GPIO, touch screen, framebuffer,
/// FFmpeg, the PIN files — in one shape, after swift-nio's `FileSystemError`: what kind
/// (`code`), on what (`subject`), which call (`call`), the system's answer (`errno` and its
/// words), our own words (`detail`) and what a person can do about it (`hint`).
///
/// One generic struct rather than a protocol that seven error types conform to: the shape
/// and its rendering are written once, here, and cannot drift apart; each wrapper keeps
/// only what is its own — its `Code` enum and the classification of a failed call into a
/// code and a hint (`V4L2Error(path:operation:errno:)` and the like), in the wrapper,
/// mapped once. The wrappers name their specialisations (`typealias V4L2Error =
/// DeviceError<V4L2ErrorCode>`), so `V4L2Error.Code.busy` reads as before.
///
/// The errno is a plain `Int32` because KioskCore imports no C module; its C name comes
/// from `ErrnoName`, its words (`strerror`, `snd_strerror`, `av_strerror`) from the
/// wrapper, which knows which library answered.
public struct DeviceError<Kind: DeviceErrorCode>: Error, Hashable, Sendable, CustomStringConvertible {
    public typealias Code = Kind
    public typealias Call = Kind.Call

    public var code: Code
    /// What failed: a device node ("/dev/video0"), an ALSA device ("hw:1,0"), a GPIO line
    /// ("gpiochip0 line 17 (GPIO17)"), a file; nil when there is none (an encoder).
    public var subject: String?
    /// The call or step that failed ("VIDIOC_S_FMT", "open for capture").
    public var call: Call
    /// The system's error (positive), when the failure came from a system call.
    public var errno: Int32?
    /// The failing library's words for its error code: `strerror(errno)`, or
    /// `snd_strerror`, `av_strerror` (which also has words for codes that are no errno).
    public var systemMessage: String?
    /// What went wrong, in our words ("the driver set an empty size"); may be empty.
    public var detail: String
    /// What to do about it, naming the command, setting or group; one or more sentences
    /// (rendered with a capital first word unless it is a name, and a final period).
    public var hint: String?

    /// - Parameters:
    ///   - code: What kind of failure.
    ///   - subject: The device, line or file, if there is one.
    ///   - call: The call or step that failed.
    ///   - errno: The errno (positive), if a system call failed.
    ///   - systemMessage: The library's words for the error; nil when there are none.
    ///   - detail: Our words for what went wrong.
    ///   - hint: What to do about it.
    public init(_ code: Code, subject: String?, call: Call, errno: Int32? = nil, systemMessage: String? = nil,
                detail: String = "", hint: String? = nil) {
        self.code = code
        self.subject = subject
        self.call = call
        self.errno = errno
        self.systemMessage = systemMessage
        self.detail = detail
        self.hint = hint
    }

    /// The system's answer: "Device or resource busy (EBUSY)", the words alone for a
    /// library code that is no errno, the name alone when there are no words; nil when
    /// the failure did not come from the system.
    public var cause: String? {
        switch (systemMessage, errno) {
        case (let words?, let errno?): "\(words) (\(ErrnoName.of(errno)))"
        case (let words?, nil): words
        case (nil, let errno?): ErrnoName.of(errno)
        case (nil, nil): nil
        }
    }

    /// What went wrong without the call, subject or hint: our words, then the system's
    /// ("for YUYV: Invalid argument (EINVAL)"); empty when there are neither.
    public var message: String {
        [detail.isEmpty ? nil : detail, cause].compactMap { $0 }.joined(separator: ": ")
    }

    /// The one rendering of every device error, in sentences that start with what failed
    /// and end with what to do:
    ///
    ///     VIDIOC_S_FMT failed for /dev/video0: Device or resource busy (EBUSY). Another
    ///     process holds the camera — stop it (e.g. `fuser /dev/video0`).
    ///
    /// The call keeps its case ("open", "VIDIOC_S_FMT"); the hint starts with a capital
    /// unless it starts with a name ("gpiochip0 has 8 lines").
    public var description: String {
        var text = "\(call) failed"
        if let subject { text += " for \(subject)" }
        let message = message
        if !message.isEmpty { text += ": " + message }
        text = Self.endingSentence(text)
        if let hint, !hint.isEmpty { text += " " + Self.endingSentence(Self.capitalisingFirstWord(hint)) }
        return text
    }

    /// Ends `text` with a period unless it ends a sentence already.
    static func endingSentence(_ text: String) -> String {
        guard let last = text.last, !".!?".contains(last) else { return text }
        return text + "."
    }

    /// Capitalises the first word if it is a plain lower-case word ("another process …"),
    /// not a name whose case matters ("gpiochip0", "buttons.chip", "hw:1,0", "/dev/fb0").
    static func capitalisingFirstWord(_ text: String) -> String {
        var word = text.prefix { $0 != " " }
        while let last = word.last, ",:;.!?".contains(last) { word = word.dropLast() }
        guard let first = word.first, first.isLowercase, word.allSatisfy(\.isLetter) else { return text }
        return first.uppercased() + text.dropFirst()
    }
}

/// The C names of Linux errno values ("EBUSY"): the one table every error message uses,
/// since the name is what people search for.
///
/// The numbers are Linux's generic ones (asm-generic/errno*.h), which x86-64, 32- and
/// 64-bit ARM and RISC-V share; KioskCore imports no C module to read them from. The
/// table holds what devices, files and sockets answer; `DeviceErrorTests` checks every
/// entry against Glibc's constants.
public enum ErrnoName {
    /// "EBUSY" for 16; "errno 999" for a number not in the table.
    public static func of(_ errno: Int32) -> String {
        names[errno] ?? "errno \(errno)"
    }

    /// Every named errno, for tests that check the numbers against the C library's.
    public static let names: [Int32: String] = [
        1: "EPERM", 2: "ENOENT", 3: "ESRCH", 4: "EINTR", 5: "EIO", 6: "ENXIO", 7: "E2BIG", 8: "ENOEXEC",
        9: "EBADF", 10: "ECHILD", 11: "EAGAIN", 12: "ENOMEM", 13: "EACCES", 14: "EFAULT", 15: "ENOTBLK",
        16: "EBUSY", 17: "EEXIST", 18: "EXDEV", 19: "ENODEV", 20: "ENOTDIR", 21: "EISDIR", 22: "EINVAL",
        23: "ENFILE", 24: "EMFILE", 25: "ENOTTY", 26: "ETXTBSY", 27: "EFBIG", 28: "ENOSPC", 29: "ESPIPE",
        30: "EROFS", 31: "EMLINK", 32: "EPIPE", 33: "EDOM", 34: "ERANGE",
        35: "EDEADLK", 36: "ENAMETOOLONG", 37: "ENOLCK", 38: "ENOSYS", 39: "ENOTEMPTY", 40: "ELOOP",
        61: "ENODATA", 62: "ETIME", 71: "EPROTO", 75: "EOVERFLOW", 77: "EBADFD", 95: "EOPNOTSUPP",
        98: "EADDRINUSE", 99: "EADDRNOTAVAIL", 101: "ENETUNREACH", 103: "ECONNABORTED", 104: "ECONNRESET",
        105: "ENOBUFS", 107: "ENOTCONN", 110: "ETIMEDOUT", 111: "ECONNREFUSED", 113: "EHOSTUNREACH",
        122: "EDQUOT", 123: "ENOMEDIUM", 125: "ECANCELED",
    ]
}
