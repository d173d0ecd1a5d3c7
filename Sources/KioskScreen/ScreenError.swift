import SystemPackage

/// Every failure of the screen, mapped once: which framebuffer (device node or file),
/// which step ("open", "FBIOGET_VSCREENINFO", "mmap", "cairo"), the errno when the kernel
/// said no, and what the user can do about it.
public struct ScreenError: Error, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// No such device or file (ENOENT).
        case notFound
        /// The user may not open it (EACCES, EPERM).
        case permissionDenied
        /// The path is not a framebuffer device, or the file is not a kioskcam framebuffer file.
        case notAFramebuffer
        /// A framebuffer, but in a pixel layout kioskcam cannot draw (8 bpp palette, 24 bpp, …).
        case unsupportedFormat
        /// A size or stride that does not fit.
        case invalidGeometry
        /// cairo or libswscale failed.
        case drawing
        /// Anything else the kernel reported.
        case system
    }

    public var code: Code
    /// The device node or file, e.g. "/dev/fb0".
    public var path: String
    /// The step that failed.
    public var operation: String
    public var errno: Errno?
    public var detail: String
    public var hint: String?

    public init(_ code: Code, path: String, operation: String, errno: Errno? = nil, detail: String = "", hint: String? = nil) {
        self.code = code
        self.path = path
        self.operation = operation
        self.errno = errno
        self.detail = detail
        self.hint = hint
    }

    /// Maps a failed system call's errno once, with the hint that fits it.
    public init(path: String, operation: String, errno: Errno, detail: String? = nil) {
        let code: Code
        let hint: String?
        switch errno {
        case .noSuchFileOrDirectory, .noSuchAddressOrDevice, .operationNotSupportedByDevice:
            code = .notFound
            hint = path.hasPrefix("/dev/")
                ? "no such framebuffer: list them with `ls /dev/fb*`; set screen.framebuffer to one, or to \"auto\""
                : "the file-backed framebuffer does not exist: start the daemon, or set screen.framebuffer"
        case .permissionDenied, .notPermitted:
            code = .permissionDenied
            hint = path.hasPrefix("/dev/")
                ? "add the user to the `video` group (`sudo usermod -aG video $USER`, then log in again)"
                : "check the file's permissions, or run as the daemon's user"
        case .inappropriateIOCTLForDevice:
            code = .notAFramebuffer
            hint = "\(path) is not a framebuffer device; give one such as /dev/fb0"
        default:
            code = .system
            hint = nil
        }
        self.init(code, path: path, operation: operation, errno: errno, detail: detail ?? "", hint: hint)
    }

    public var description: String {
        var text = "\(operation) failed for \(path)"
        if !detail.isEmpty { text += ": " + detail }
        if let errno { text += " (\(errno))" }
        if let hint { text += ". " + hint }
        return text
    }
}
