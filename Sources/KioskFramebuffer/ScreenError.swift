import KioskCore
import SystemPackage

/// Every failure of the screen, mapped once: which framebuffer (device node or file, the
/// subject), which step ("open", "FBIOGET_VSCREENINFO", "mmap", "cairo"), the errno when
/// the kernel said no, and what the user can do about it. The shape and its rendering
/// are `DeviceError`'s.
public typealias ScreenError = DeviceError<ScreenErrorCode>

/// What kind of screen failure.
public enum ScreenErrorCode: String, DeviceErrorCode {
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

extension DeviceError where Code == ScreenErrorCode {
    /// A screen failure whose code the caller knows.
    /// - Parameters:
    ///   - path: The device node or file, e.g. "/dev/fb0" ("memory" for drawing).
    ///   - operation: The step that failed.
    public init(_ code: Code, path: String, operation: String, errno: Errno? = nil, detail: String = "", hint: String? = nil) {
        self.init(code, subject: path, call: operation, errno: errno?.rawValue, systemMessage: errno?.description,
                  detail: detail, hint: hint)
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
}
