import SystemPackage

/// Every failure talking to an input device, mapped once: which device, which operation
/// ("open", "libevdev_new_from_fd", "read"), the errno, and what the user can do about it.
public struct InputError: Error, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
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

    public var code: Code
    /// The device node, e.g. "/dev/input/event2".
    public var path: String
    /// The call or step that failed.
    public var operation: String
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
            return (.noSuchDevice, "no such input device: list them with `kioskcam events` or `ls -l /dev/input/by-path`; set touch.device to the right /dev/input/eventN, or \"auto\"")
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

    /// "open failed for /dev/input/event3: Permission denied (EACCES). Add the user to …"
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
        case .permissionDenied: "EACCES"
        case .notPermitted: "EPERM"
        case .noSuchAddressOrDevice: "ENXIO"
        case .operationNotSupportedByDevice: "ENODEV"
        case .inappropriateIOCTLForDevice: "ENOTTY"
        case .invalidArgument: "EINVAL"
        case .isDirectory: "EISDIR"
        case .resourceBusy: "EBUSY"
        case .resourceTemporarilyUnavailable: "EAGAIN"
        case .noMemory: "ENOMEM"
        default: "errno \(errno.rawValue)"
        }
    }
}
