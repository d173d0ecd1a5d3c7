import KioskCore
import SystemPackage

/// Every failure talking to an input device, mapped once: which device (the subject),
/// which call ("open", "libevdev_new_from_fd", "read"), the errno, and what the user can
/// do about it. The shape and its rendering are `DeviceError`'s.
public typealias InputError = DeviceError<InputErrorCode>

/// What kind of input device failure.
public enum InputErrorCode: String, DeviceErrorCode {
    /// No such device node (ENOENT).
    case noSuchDevice
    /// The user may not open it (EACCES, EPERM).
    case permissionDenied
    /// The device went away (ENODEV): unplugged, or its driver unloaded.
    case unplugged
    /// The path is not an evdev device (ENOTTY, EINVAL from libevdev).
    case notAnInputDevice
    /// The device is not a touch screen kioskcam can decode.
    case notATouchscreen
    /// `/dev/uinput` is missing or refused (virtual devices for tests).
    case uinputUnavailable
    /// Anything else the kernel reported.
    case system
}

extension DeviceError where Code == InputErrorCode {
    /// An input device failure whose code the caller knows.
    /// - Parameters:
    ///   - path: The device node, e.g. "/dev/input/event2".
    ///   - operation: The call or step that failed.
    public init(_ code: Code, path: String, operation: String, errno: Errno? = nil, detail: String = "", hint: String? = nil) {
        self.init(code, subject: path, call: operation, errno: errno?.rawValue, systemMessage: errno?.description,
                  detail: detail, hint: hint)
    }

    /// Maps a failed call's errno once, with the hint that fits it.
    public init(path: String, operation: String, errno: Errno, detail: String? = nil) {
        let (code, hint) = Self.classify(errno, path: path, operation: operation)
        self.init(code, path: path, operation: operation, errno: errno, detail: detail ?? "", hint: hint)
    }

    static func classify(_ errno: Errno, path: String, operation: String) -> (Code, String?) {
        let uinput = path.hasSuffix("uinput")
        switch errno {
        case .noSuchFileOrDirectory where uinput:
            return (.uinputUnavailable, "load the uinput module (`sudo modprobe uinput`)")
        case .noSuchFileOrDirectory:
            return (.noSuchDevice, "no such input device: list them with `kioskcam input-monitor` or `ls -l /dev/input/by-path`; set touch.device to the right /dev/input/eventN, or \"auto\"")
        case .permissionDenied, .notPermitted:
            return (uinput ? .uinputUnavailable : .permissionDenied,
                    "add the user to the `input` group (`sudo usermod -aG input $USER`, then log in again), or run as root")
        case .noSuchAddressOrDevice, .operationNotSupportedByDevice:
            return (.unplugged, "the device was unplugged or its driver unloaded; check `dmesg`")
        case .inappropriateIOCTLForDevice:
            return (.notAnInputDevice, "\(path) is not an evdev input device; give a /dev/input/eventN node")
        case .invalidArgument where operation.hasPrefix("libevdev_new"):
            return (.notAnInputDevice, "\(path) is not an evdev input device; give a /dev/input/eventN node")
        case .isDirectory:
            return (.notAnInputDevice, "\(path) is a directory; give a device node such as /dev/input/event0")
        default:
            return (.system, nil)
        }
    }
}
