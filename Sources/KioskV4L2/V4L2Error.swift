import SystemPackage

/// Every failure talking to a camera, mapped once in `V4L2Device.ioctl`: which device,
/// which operation (the ioctl's name, such as "VIDIOC_S_FMT"), the errno, and what the
/// user can do about it.
public struct V4L2Error: Error, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// No such device node (ENOENT).
        case noSuchDevice
        /// Another process streams from the camera (EBUSY).
        case busy
        /// The user may not open the device (EACCES, EPERM).
        case permissionDenied
        /// The camera went away (ENODEV, ENXIO) or stopped delivering.
        case unplugged
        /// The path is not a V4L2 device at all (ENOTTY from VIDIOC_QUERYCAP).
        case notAVideoDevice
        /// A V4L2 device, but not one that captures video with streaming I/O.
        case notACaptureDevice
        /// The camera offers no size/format kioskcam can record.
        case noUsableFormat
        /// The camera has no such control, or it is read-only/inactive.
        case unsupportedControl
        /// The driver rejected a value (EINVAL, ERANGE).
        case rejected
        /// Anything else the kernel reported.
        case system
    }

    public var code: Code
    /// The device node, e.g. "/dev/video0".
    public var path: String
    /// The ioctl ("VIDIOC_S_FMT") or step ("open", "mmap") that failed.
    public var operation: String
    /// The kernel's error, when the failure came from a system call.
    public var errno: Errno?
    /// What went wrong, in words.
    public var detail: String
    /// What to do about it.
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
    /// - Parameter detail: Says more than the errno alone (e.g. "the camera offers no 1280x720").
    public init(path: String, operation: String, errno: Errno, detail: String? = nil) {
        let (code, hint) = Self.classify(errno, path: path, operation: operation)
        self.init(code, path: path, operation: operation, errno: errno, detail: detail ?? "", hint: hint)
    }

    static func classify(_ errno: Errno, path: String, operation: String) -> (Code, String?) {
        switch errno {
        case .noSuchFileOrDirectory:
            return (.noSuchDevice, "no such camera: list cameras with `kioskcam probe` or `v4l2-ctl --list-devices`; set camera.source to the right /dev/videoN")
        case .resourceBusy:
            return (.busy, "another process holds the camera — stop it (e.g. `fuser \(path)`)")
        case .permissionDenied, .notPermitted:
            return (.permissionDenied, "add the user to the `video` group (`sudo usermod -aG video $USER`, then log in again)")
        case .operationNotSupportedByDevice, .noSuchAddressOrDevice:
            return (.unplugged, "the camera was unplugged; plug it back in (check `dmesg` for USB errors)")
        case .inappropriateIOCTLForDevice where operation == "VIDIOC_QUERYCAP":
            return (.notAVideoDevice, "\(path) is not a V4L2 video device; list cameras with `kioskcam probe` or `v4l2-ctl --list-devices`")
        case .inappropriateIOCTLForDevice:
            return (.system, "the driver does not support \(operation)")
        case .invalidArgument, .outOfRange:
            return (.rejected, "the driver rejected the values; see what it supports with `v4l2-ctl -d \(path) --all`")
        case .ioError:
            return (.unplugged, "the camera reported an I/O error; replug it (check `dmesg`)")
        case .isDirectory:
            return (.notAVideoDevice, "\(path) is a directory; give a device node such as /dev/video0")
        default:
            return (.system, nil)
        }
    }

    /// "VIDIOC_S_FMT failed for /dev/video0: Device or resource busy (EBUSY). another process …"
    public var description: String {
        var text = "\(operation) failed for \(path)"
        var reasons: [String] = []
        if !detail.isEmpty { reasons.append(detail) }
        if let errno { reasons.append("\(errno.description) (\(Self.symbol(errno)))") }
        if !reasons.isEmpty { text += ": " + reasons.joined(separator: ": ") }
        if let hint { text += ". " + hint.prefix(1).uppercased() + hint.dropFirst() }
        return text
    }

    /// The C name of common errnos, which users search for.
    static func symbol(_ errno: Errno) -> String {
        switch errno {
        case .noSuchFileOrDirectory: "ENOENT"
        case .resourceBusy: "EBUSY"
        case .permissionDenied: "EACCES"
        case .notPermitted: "EPERM"
        case .operationNotSupportedByDevice: "ENODEV"
        case .noSuchAddressOrDevice: "ENXIO"
        case .inappropriateIOCTLForDevice: "ENOTTY"
        case .invalidArgument: "EINVAL"
        case .outOfRange: "ERANGE"
        case .ioError: "EIO"
        case .resourceTemporarilyUnavailable: "EAGAIN"
        case .interrupted: "EINTR"
        case .brokenPipe: "EPIPE"
        case .noMemory: "ENOMEM"
        case .isDirectory: "EISDIR"
        default: "errno \(errno.rawValue)"
        }
    }
}
