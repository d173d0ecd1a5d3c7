import CV4L2
import KioskCore
import SystemPackage

/// One control as VIDIOC_QUERYCTRL describes it, with its current value.
public struct V4L2Control: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Codable {
        case integer, boolean, menu, integerMenu, button, integer64, string, bitmask, other
    }

    /// A menu entry: its index (the control's value) and name (or number, for integer menus).
    public struct MenuItem: Sendable, Hashable, Codable {
        public var index: Int
        public var name: String
    }

    public var id: UInt32
    public var name: String
    public var type: Kind
    public var minimum: Int
    public var maximum: Int
    public var step: Int
    public var defaultValue: Int
    /// nil when it cannot be read (write-only, buttons, 64-bit or string controls).
    public var value: Int?
    public var readOnly: Bool
    /// Currently without effect, usually because an automatic mode is on.
    public var inactive: Bool
    public var menu: [MenuItem]

    public init(id: UInt32, name: String, type: Kind, minimum: Int, maximum: Int, step: Int, defaultValue: Int,
                value: Int?, readOnly: Bool = false, inactive: Bool = false, menu: [MenuItem] = []) {
        self.id = id
        self.name = name
        self.type = type
        self.minimum = minimum
        self.maximum = maximum
        self.step = step
        self.defaultValue = defaultValue
        self.value = value
        self.readOnly = readOnly
        self.inactive = inactive
        self.menu = menu
    }

    /// The range values are clamped and snapped to.
    public var range: ControlRange {
        ControlRange(minimum: minimum, maximum: maximum, step: type == .menu || type == .integerMenu ? 1 : step,
                     defaultValue: defaultValue)
    }

    /// Whether a value can be written.
    public var isWritable: Bool {
        !readOnly && [.integer, .boolean, .menu, .integerMenu].contains(type)
    }
}

extension V4L2Device {
    /// Every control the device has (disabled ones and class headings left out),
    /// walked with V4L2_CTRL_FLAG_NEXT_CTRL, with current values and menu entries.
    /// - Throws: `V4L2Error` when the walk fails for another reason than its end.
    ///
    /// The corresponding ioctls are `VIDIOC_QUERYCTRL`, `VIDIOC_QUERYMENU` and `VIDIOC_G_CTRL`.
    public func controls() throws(V4L2Error) -> [V4L2Control] {
        var result: [V4L2Control] = []
        var query = v4l2_queryctrl()
        query.id = kc_v4l2_ctrl_flag_next_ctrl()
        // A bound on the walk, in case a driver keeps answering with the same id.
        for _ in 0..<1024 {
            if let errno = ioctlErrno(kc_vidioc_queryctrl(), &query) {
                if errno == .invalidArgument || errno == .inappropriateIOCTLForDevice { break }
                throw V4L2Error(path: path, operation: "VIDIOC_QUERYCTRL", errno: errno)
            }
            let id = query.id
            if query.flags & UInt32(V4L2_CTRL_FLAG_DISABLED) == 0, query.type != V4L2_CTRL_TYPE_CTRL_CLASS.rawValue {
                result.append(describe(query))
            }
            query = v4l2_queryctrl()
            query.id = id | kc_v4l2_ctrl_flag_next_ctrl()
        }
        return result
    }

    /// One control by id; nil when the device has no such (enabled) control.
    /// - Throws: `V4L2Error` for failures other than "no such control".
    ///
    /// The corresponding ioctl is `VIDIOC_QUERYCTRL`.
    public func control(id: UInt32) throws(V4L2Error) -> V4L2Control? {
        var query = v4l2_queryctrl()
        query.id = id
        if let errno = ioctlErrno(kc_vidioc_queryctrl(), &query) {
            if errno == .invalidArgument || errno == .inappropriateIOCTLForDevice { return nil }
            throw V4L2Error(path: path, operation: "VIDIOC_QUERYCTRL", errno: errno)
        }
        guard query.flags & UInt32(V4L2_CTRL_FLAG_DISABLED) == 0 else { return nil }
        return describe(query)
    }

    /// The control's current value.
    /// - Throws: `V4L2Error`: `.unsupportedControl` (no such control, or write-only).
    ///
    /// The corresponding ioctl is `VIDIOC_G_CTRL`.
    public func value(ofControl id: UInt32) throws(V4L2Error) -> Int {
        var control = v4l2_control(id: id, value: 0)
        if let errno = ioctlErrno(kc_vidioc_g_ctrl(), &control) {
            throw controlError(errno, id: id, operation: "VIDIOC_G_CTRL", value: nil)
        }
        return Int(control.value)
    }

    /// Sets a control exactly as given (no clamping: see `CameraControls` for that).
    /// - Returns: The value the driver kept (drivers may round).
    /// - Throws: `V4L2Error`: `.unsupportedControl` (no such control, read-only, or
    ///   inactive/grabbed), `.rejected` (out of range).
    ///
    /// The corresponding ioctl is `VIDIOC_S_CTRL`.
    @discardableResult
    public func setValue(_ value: Int, ofControl id: UInt32) throws(V4L2Error) -> Int {
        var control = v4l2_control(id: id, value: Int32(clamping: value))
        if let errno = ioctlErrno(kc_vidioc_s_ctrl(), &control) {
            throw controlError(errno, id: id, operation: "VIDIOC_S_CTRL", value: value)
        }
        return Int(control.value)
    }

    /// Control errors say which control; EACCES here means read/write-only, not permissions.
    private func controlError(_ errno: Errno, id: UInt32, operation: String, value: Int?) -> V4L2Error {
        let name = (try? control(id: id))?.name ?? "control 0x" + String(id, radix: 16)
        switch errno {
        case .invalidArgument where value == nil:
            return V4L2Error(.unsupportedControl, path: path, operation: operation, errno: errno,
                             detail: "this camera has no \(name)")
        case .invalidArgument, .outOfRange:
            return V4L2Error(.rejected, path: path, operation: operation, errno: errno,
                             detail: "\(name) rejected \(value.map(String.init) ?? "the value")",
                             hint: "see its range with `v4l2-ctl -d \(path) --list-ctrls`")
        case .permissionDenied:
            return V4L2Error(.unsupportedControl, path: path, operation: operation, errno: errno,
                             detail: "\(name) is \(operation == "VIDIOC_S_CTRL" ? "read-only" : "write-only")")
        case .resourceBusy:
            return V4L2Error(.unsupportedControl, path: path, operation: operation, errno: errno,
                             detail: "\(name) cannot change now (it is grabbed while streaming, or an automatic mode owns it)")
        default:
            return V4L2Error(path: path, operation: operation, errno: errno, detail: name)
        }
    }

    private func describe(_ query: v4l2_queryctrl) -> V4L2Control {
        let kind: V4L2Control.Kind
        switch query.type {
        case V4L2_CTRL_TYPE_INTEGER.rawValue: kind = .integer
        case V4L2_CTRL_TYPE_BOOLEAN.rawValue: kind = .boolean
        case V4L2_CTRL_TYPE_MENU.rawValue: kind = .menu
        case V4L2_CTRL_TYPE_INTEGER_MENU.rawValue: kind = .integerMenu
        case V4L2_CTRL_TYPE_BUTTON.rawValue: kind = .button
        case V4L2_CTRL_TYPE_INTEGER64.rawValue: kind = .integer64
        case V4L2_CTRL_TYPE_STRING.rawValue: kind = .string
        case V4L2_CTRL_TYPE_BITMASK.rawValue: kind = .bitmask
        default: kind = .other
        }
        let writeOnly = query.flags & UInt32(V4L2_CTRL_FLAG_WRITE_ONLY) != 0
        var value: Int?
        if !writeOnly, [.integer, .boolean, .menu, .integerMenu, .bitmask].contains(kind) {
            var control = v4l2_control(id: query.id, value: 0)
            if ioctlErrno(kc_vidioc_g_ctrl(), &control) == nil { value = Int(control.value) }
        }
        var menu: [V4L2Control.MenuItem] = []
        if kind == .menu || kind == .integerMenu, query.minimum >= 0, query.maximum >= query.minimum,
           query.maximum - query.minimum < 256 {
            for index in query.minimum...query.maximum {
                var item = v4l2_querymenu()
                item.id = query.id
                item.index = UInt32(index)
                // Menus may have holes: EINVAL skips an index.
                guard ioctlErrno(kc_vidioc_querymenu(), &item) == nil else { continue }
                let name = kind == .menu ? cString(item.name) : String(item.value)
                menu.append(V4L2Control.MenuItem(index: Int(index), name: name))
            }
        }
        return V4L2Control(id: query.id, name: cString(query.name), type: kind,
                           minimum: Int(query.minimum), maximum: Int(query.maximum), step: Int(query.step),
                           defaultValue: Int(query.default_value), value: value,
                           readOnly: query.flags & UInt32(V4L2_CTRL_FLAG_READ_ONLY) != 0,
                           inactive: query.flags & UInt32(V4L2_CTRL_FLAG_INACTIVE) != 0, menu: menu)
    }
}
