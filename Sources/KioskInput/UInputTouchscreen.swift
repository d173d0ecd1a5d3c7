import CEvdev
import Glibc
import KioskCore
import SystemPackage

/// A virtual touch screen made with uinput (`libevdev_uinput_create_from_device`), for
/// the hardware-in-the-loop tests, the appliance scenario and latency benchmarks: it
/// speaks any of the four protocols with the given axis ranges and injects touches
/// exactly as a driver of that kind would.
///
/// Needs `/dev/uinput` (`modprobe uinput`) and, for the node to appear, `evdev`.
/// One owner; `close()` (or `deinit`) destroys the device.
public final class UInputTouchscreen {
    public let touchProtocol: TouchProtocol
    public let name: String
    public let xRange: AxisRange
    public let yRange: AxisRange
    public let slotCount: Int
    public let pressureRange: AxisRange

    private var handle: OpaquePointer?
    private var uinput: OpaquePointer?
    /// Contacts down, by slot: their tracking ID and position (protocol A resends them every frame).
    private var contacts: [Int: (id: Int32, x: Int32, y: Int32)] = [:]
    private var nextTrackingID: Int32 = 1

    /// Creates the device.
    /// - Parameters:
    ///   - touchProtocol: How it reports contacts.
    ///   - name: The device name (`EVIOCGNAME`), e.g. "kioskcam-test-touch-B".
    ///   - xRange, yRange: Its position axes (multi-touch and single-touch axes alike).
    ///   - slots: Protocol B slot count.
    ///   - direct: Sets INPUT_PROP_DIRECT (a touch screen); false makes it look like an old
    ///     driver or, with `pointer`, a touchpad.
    ///   - pointer: Sets INPUT_PROP_POINTER (a touchpad; discovery must reject it).
    ///   - contactSize: Adds ABS_MT_TOUCH_MAJOR and ABS_MT_WIDTH_MAJOR with this range
    ///     (multi-touch), for drivers that report the contact's size (and may end a touch
    ///     with size 0); send them with `emit`.
    ///   - timestamps: Adds EV_MSC MSC_TIMESTAMP, which hid-multitouch sends with every frame.
    /// - Throws: `InputError` `.uinputUnavailable` when `/dev/uinput` is missing or refused.
    public init(_ touchProtocol: TouchProtocol, name: String, xRange: AxisRange, yRange: AxisRange, slots: Int = 10,
                pressureRange: AxisRange = AxisRange(minimum: 0, maximum: 255), direct: Bool = true, pointer: Bool = false,
                contactSize: AxisRange? = nil, timestamps: Bool = false) throws(InputError) {
        self.touchProtocol = touchProtocol
        self.name = name
        self.xRange = xRange
        self.yRange = yRange
        slotCount = max(1, slots)
        self.pressureRange = pressureRange
        guard let handle = libevdev_new() else {
            throw InputError(.system, path: "/dev/uinput", operation: "libevdev_new", errno: .noMemory)
        }
        self.handle = handle
        libevdev_set_name(handle, name)
        libevdev_set_id_bustype(handle, 0x06)   // BUS_VIRTUAL
        libevdev_set_id_vendor(handle, 0x4b43)
        libevdev_set_id_product(handle, 0x0001)
        if direct { libevdev_enable_property(handle, UInt32(EvdevCode.INPUT_PROP_DIRECT)) }
        if pointer { libevdev_enable_property(handle, UInt32(EvdevCode.INPUT_PROP_POINTER)) }
        func enableAxis(_ code: UInt16, _ range: AxisRange) {
            var info = kc_evdev_absinfo(range.minimum, range.maximum)
            libevdev_enable_event_code(handle, UInt32(EvdevCode.EV_ABS), UInt32(code), &info)
        }
        libevdev_enable_event_type(handle, UInt32(EvdevCode.EV_ABS))
        enableAxis(EvdevCode.ABS_X, xRange)
        enableAxis(EvdevCode.ABS_Y, yRange)
        if touchProtocol != .pressureOnly {
            libevdev_enable_event_type(handle, UInt32(EvdevCode.EV_KEY))
            libevdev_enable_event_code(handle, UInt32(EvdevCode.EV_KEY), UInt32(EvdevCode.BTN_TOUCH), nil)
        }
        switch touchProtocol {
        case .multiTouchSlots:
            enableAxis(EvdevCode.ABS_MT_SLOT, AxisRange(minimum: 0, maximum: Int32(slotCount - 1)))
            enableAxis(EvdevCode.ABS_MT_TRACKING_ID, AxisRange(minimum: 0, maximum: 65535))
            enableAxis(EvdevCode.ABS_MT_POSITION_X, xRange)
            enableAxis(EvdevCode.ABS_MT_POSITION_Y, yRange)
        case .multiTouchAnonymous:
            enableAxis(EvdevCode.ABS_MT_POSITION_X, xRange)
            enableAxis(EvdevCode.ABS_MT_POSITION_Y, yRange)
        case .singleTouch:
            break
        case .pressureOnly:
            enableAxis(EvdevCode.ABS_PRESSURE, pressureRange)
        }
        if let contactSize, touchProtocol == .multiTouchSlots || touchProtocol == .multiTouchAnonymous {
            enableAxis(EvdevCode.ABS_MT_TOUCH_MAJOR, contactSize)
            enableAxis(EvdevCode.ABS_MT_WIDTH_MAJOR, contactSize)
        }
        if timestamps {
            libevdev_enable_event_type(handle, UInt32(EvdevCode.EV_MSC))
            libevdev_enable_event_code(handle, UInt32(EvdevCode.EV_MSC), UInt32(EvdevCode.MSC_TIMESTAMP), nil)
        }
        var uinput: OpaquePointer?
        let rc = libevdev_uinput_create_from_device(handle, kc_evdev_uinput_open_managed, &uinput)
        guard rc == 0, let uinput else {
            libevdev_free(handle)
            self.handle = nil
            let errno = Errno(rawValue: -rc)
            var error = InputError(path: "/dev/uinput", operation: "libevdev_uinput_create_from_device", errno: errno)
            if errno == .noSuchFileOrDirectory || errno == .permissionDenied || errno == .notPermitted { error.code = .uinputUnavailable }
            throw error
        }
        self.uinput = uinput
    }

    deinit { close() }

    /// Destroys the virtual device (its event node disappears); later calls do nothing.
    public func close() {
        if let uinput { libevdev_uinput_destroy(uinput) }
        uinput = nil
        if let handle { libevdev_free(handle) }
        handle = nil
    }

    /// The `/dev/input/eventN` node, once the kernel has made it (nil before, or without evdev).
    public var devicePath: String? {
        guard let uinput, let node = libevdev_uinput_get_devnode(uinput) else { return nil }
        let path = String(cString: node)
        return access(path, F_OK) == 0 ? path : nil
    }

    /// Waits up to `seconds` for the event node to appear.
    /// - Throws: `InputError` when it does not (evdev not loaded?).
    public func waitForDevicePath(seconds: Double = 5) throws(InputError) -> String {
        let deadline = Double(Self.monotonicNanoseconds()) / 1e9 + seconds
        while true {
            if let path = devicePath { return path }
            if Double(Self.monotonicNanoseconds()) / 1e9 > deadline {
                throw InputError(.noSuchDevice, path: "/dev/input", operation: "uinput device node",
                                 detail: "no event node for \"\(name)\" after \(seconds) s",
                                 hint: "load the evdev module (`modprobe evdev`)")
            }
            usleep(20_000)
        }
    }

    // MARK: Touching

    /// A finger goes down at (x, y) in device units, in `slot` (multi-touch).
    public func press(x: Int32, y: Int32, slot: Int = 0) throws(InputError) {
        let id = nextTrackingID
        nextTrackingID = nextTrackingID >= 65535 ? 1 : nextTrackingID + 1
        let first = contacts.isEmpty
        contacts[slot] = (id, x, y)
        switch touchProtocol {
        case .multiTouchSlots:
            try emit([(EvdevCode.EV_ABS, EvdevCode.ABS_MT_SLOT, Int32(slot)), (EvdevCode.EV_ABS, EvdevCode.ABS_MT_TRACKING_ID, id),
                      (EvdevCode.EV_ABS, EvdevCode.ABS_MT_POSITION_X, x), (EvdevCode.EV_ABS, EvdevCode.ABS_MT_POSITION_Y, y)]
                     + (first ? [(EvdevCode.EV_KEY, EvdevCode.BTN_TOUCH, Int32(1)), (EvdevCode.EV_ABS, EvdevCode.ABS_X, x),
                                 (EvdevCode.EV_ABS, EvdevCode.ABS_Y, y)] : []))
            try report()
        case .multiTouchAnonymous:
            try anonymousFrame(buttonTouch: 1)
        case .singleTouch:
            try emit([(EvdevCode.EV_KEY, EvdevCode.BTN_TOUCH, 1), (EvdevCode.EV_ABS, EvdevCode.ABS_X, x), (EvdevCode.EV_ABS, EvdevCode.ABS_Y, y)])
            try report()
        case .pressureOnly:
            try emit([(EvdevCode.EV_ABS, EvdevCode.ABS_X, x), (EvdevCode.EV_ABS, EvdevCode.ABS_Y, y),
                      (EvdevCode.EV_ABS, EvdevCode.ABS_PRESSURE, pressureRange.minimum + (pressureRange.maximum - pressureRange.minimum) / 2)])
            try report()
        }
    }

    /// The finger in `slot` moves to (x, y).
    public func move(x: Int32, y: Int32, slot: Int = 0) throws(InputError) {
        guard let contact = contacts[slot] else { return try press(x: x, y: y, slot: slot) }
        contacts[slot] = (contact.id, x, y)
        switch touchProtocol {
        case .multiTouchSlots:
            try emit([(EvdevCode.EV_ABS, EvdevCode.ABS_MT_SLOT, Int32(slot)), (EvdevCode.EV_ABS, EvdevCode.ABS_MT_POSITION_X, x),
                      (EvdevCode.EV_ABS, EvdevCode.ABS_MT_POSITION_Y, y)])
            if contacts.keys.min() == slot { try emit([(EvdevCode.EV_ABS, EvdevCode.ABS_X, x), (EvdevCode.EV_ABS, EvdevCode.ABS_Y, y)]) }
            try report()
        case .multiTouchAnonymous:
            try anonymousFrame(buttonTouch: nil)
        case .singleTouch, .pressureOnly:
            try emit([(EvdevCode.EV_ABS, EvdevCode.ABS_X, x), (EvdevCode.EV_ABS, EvdevCode.ABS_Y, y)])
            try report()
        }
    }

    /// The finger in `slot` lifts.
    public func release(slot: Int = 0) throws(InputError) {
        guard contacts.removeValue(forKey: slot) != nil else { return }
        let last = contacts.isEmpty
        switch touchProtocol {
        case .multiTouchSlots:
            try emit([(EvdevCode.EV_ABS, EvdevCode.ABS_MT_SLOT, Int32(slot)), (EvdevCode.EV_ABS, EvdevCode.ABS_MT_TRACKING_ID, -1)]
                     + (last ? [(EvdevCode.EV_KEY, EvdevCode.BTN_TOUCH, Int32(0))] : []))
            try report()
        case .multiTouchAnonymous:
            try anonymousFrame(buttonTouch: last ? 0 : nil)
        case .singleTouch:
            try emit([(EvdevCode.EV_KEY, EvdevCode.BTN_TOUCH, 0)])
            try report()
        case .pressureOnly:
            try emit([(EvdevCode.EV_ABS, EvdevCode.ABS_PRESSURE, pressureRange.minimum)])
            try report()
        }
    }

    /// Press and release at (x, y).
    public func tap(x: Int32, y: Int32, slot: Int = 0) throws(InputError) {
        try press(x: x, y: y, slot: slot)
        try release(slot: slot)
    }

    /// Protocol A: every contact down, each ended by SYN_MT_REPORT; an empty report when none.
    private func anonymousFrame(buttonTouch: Int32?) throws(InputError) {
        if contacts.isEmpty {
            try emit([(EvdevCode.EV_SYN, EvdevCode.SYN_MT_REPORT, 0)])
        }
        for slot in contacts.keys.sorted() {
            let contact = contacts[slot]!
            try emit([(EvdevCode.EV_ABS, EvdevCode.ABS_MT_POSITION_X, contact.x), (EvdevCode.EV_ABS, EvdevCode.ABS_MT_POSITION_Y, contact.y),
                      (EvdevCode.EV_SYN, EvdevCode.SYN_MT_REPORT, 0)])
        }
        if let buttonTouch { try emit([(EvdevCode.EV_KEY, EvdevCode.BTN_TOUCH, buttonTouch)]) }
        try report()
    }

    /// Ends a frame (SYN_REPORT).
    public func report() throws(InputError) {
        try emit([(EvdevCode.EV_SYN, EvdevCode.SYN_REPORT, 0)])
    }

    /// Writes raw events (no SYN_REPORT added).
    public func emit(_ events: [(type: UInt16, code: UInt16, value: Int32)]) throws(InputError) {
        guard let uinput else { throw InputError(.system, path: "/dev/uinput", operation: "write", errno: .badFileDescriptor, detail: "closed") }
        for event in events {
            let rc = libevdev_uinput_write_event(uinput, UInt32(event.type), UInt32(event.code), event.value)
            if rc != 0 { throw InputError(path: devicePath ?? "/dev/uinput", operation: "libevdev_uinput_write_event", errno: Errno(rawValue: -rc)) }
        }
    }

    static func monotonicNanoseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }
}
