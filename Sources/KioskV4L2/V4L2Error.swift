import KioskCore
import SystemPackage

/// Every failure talking to a camera, mapped once in `V4L2Device.ioctl`: which device
/// (the subject), which ioctl ("VIDIOC_S_FMT") or step ("open", "mmap"), the errno, and
/// what the user can do about it. The shape and its rendering are `DeviceError`'s.
public typealias V4L2Error = DeviceError<V4L2ErrorCode>

/// What kind of camera failure.
public enum V4L2ErrorCode: String, DeviceErrorCode {
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

extension DeviceError where Code == V4L2ErrorCode {
    /// A camera failure whose code the caller knows.
    /// - Parameters:
    ///   - path: The device node, e.g. "/dev/video0".
    ///   - operation: The ioctl ("VIDIOC_S_FMT") or step ("open", "mmap") that failed.
    ///   - errno: The kernel's error, when the failure came from a system call.
    public init(_ code: Code, path: String, operation: String, errno: Errno? = nil, detail: String = "", hint: String? = nil) {
        self.init(code, subject: path, call: operation, errno: errno?.rawValue, systemMessage: errno?.description,
                  detail: detail, hint: hint)
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
}
