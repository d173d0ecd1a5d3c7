/// One event as the kernel's evdev interface delivers it (`struct input_event`), with its
/// time already on the monotonic clock. The touch decoder consumes streams of these, so
/// recorded streams can be replayed in tests without a device.
public struct RawInputEvent: Sendable, Equatable, CustomStringConvertible {
    public var type: UInt16
    public var code: UInt16
    public var value: Int32
    public var time: MonotonicInstant

    public init(type: UInt16, code: UInt16, value: Int32, time: MonotonicInstant) {
        self.type = type
        self.code = code
        self.value = value
        self.time = time
    }

    /// "EV_ABS ABS_MT_POSITION_X 400", as `evtest` would name it.
    public var description: String {
        "\(EvdevCode.typeName(type)) \(EvdevCode.codeName(type: type, code: code)) \(value)"
    }
}

/// The few evdev constants touch decoding needs, with the kernel's values
/// (`linux/input-event-codes.h`; a KioskInput test checks them against libevdev).
/// Kept here so the decoder stays free of C imports.
public enum EvdevCode {
    // Event types.
    public static let EV_SYN: UInt16 = 0x00
    public static let EV_KEY: UInt16 = 0x01
    public static let EV_REL: UInt16 = 0x02
    public static let EV_ABS: UInt16 = 0x03
    public static let EV_MSC: UInt16 = 0x04

    // EV_SYN codes.
    public static let SYN_REPORT: UInt16 = 0
    public static let SYN_CONFIG: UInt16 = 1
    public static let SYN_MT_REPORT: UInt16 = 2
    public static let SYN_DROPPED: UInt16 = 3

    // EV_MSC codes.
    /// The device's own clock in microseconds (hid-multitouch sends it with every frame).
    public static let MSC_TIMESTAMP: UInt16 = 0x05

    // EV_KEY codes.
    public static let BTN_LEFT: UInt16 = 0x110
    public static let BTN_TOOL_PEN: UInt16 = 0x140
    public static let BTN_TOOL_FINGER: UInt16 = 0x145
    public static let BTN_TOUCH: UInt16 = 0x14a
    public static let KEY_MAX: UInt16 = 0x2ff

    // EV_ABS codes.
    public static let ABS_X: UInt16 = 0x00
    public static let ABS_Y: UInt16 = 0x01
    public static let ABS_PRESSURE: UInt16 = 0x18
    public static let ABS_MT_SLOT: UInt16 = 0x2f
    public static let ABS_MT_TOUCH_MAJOR: UInt16 = 0x30
    public static let ABS_MT_WIDTH_MAJOR: UInt16 = 0x32
    public static let ABS_MT_POSITION_X: UInt16 = 0x35
    public static let ABS_MT_POSITION_Y: UInt16 = 0x36
    public static let ABS_MT_TRACKING_ID: UInt16 = 0x39
    public static let ABS_MT_PRESSURE: UInt16 = 0x3a
    public static let ABS_MAX: UInt16 = 0x3f

    // Input properties.
    public static let INPUT_PROP_POINTER: UInt16 = 0x00
    public static let INPUT_PROP_DIRECT: UInt16 = 0x01

    static func typeName(_ type: UInt16) -> String {
        switch type {
        case EV_SYN: "EV_SYN"
        case EV_KEY: "EV_KEY"
        case EV_REL: "EV_REL"
        case EV_ABS: "EV_ABS"
        case EV_MSC: "EV_MSC"
        default: "type \(type)"
        }
    }

    static func codeName(type: UInt16, code: UInt16) -> String {
        switch (type, code) {
        case (EV_SYN, SYN_REPORT): "SYN_REPORT"
        case (EV_SYN, SYN_CONFIG): "SYN_CONFIG"
        case (EV_SYN, SYN_MT_REPORT): "SYN_MT_REPORT"
        case (EV_SYN, SYN_DROPPED): "SYN_DROPPED"
        case (EV_MSC, MSC_TIMESTAMP): "MSC_TIMESTAMP"
        case (EV_KEY, BTN_LEFT): "BTN_LEFT"
        case (EV_KEY, BTN_TOOL_PEN): "BTN_TOOL_PEN"
        case (EV_KEY, BTN_TOOL_FINGER): "BTN_TOOL_FINGER"
        case (EV_KEY, BTN_TOUCH): "BTN_TOUCH"
        case (EV_ABS, ABS_X): "ABS_X"
        case (EV_ABS, ABS_Y): "ABS_Y"
        case (EV_ABS, ABS_PRESSURE): "ABS_PRESSURE"
        case (EV_ABS, ABS_MT_SLOT): "ABS_MT_SLOT"
        case (EV_ABS, ABS_MT_TOUCH_MAJOR): "ABS_MT_TOUCH_MAJOR"
        case (EV_ABS, ABS_MT_WIDTH_MAJOR): "ABS_MT_WIDTH_MAJOR"
        case (EV_ABS, ABS_MT_POSITION_X): "ABS_MT_POSITION_X"
        case (EV_ABS, ABS_MT_POSITION_Y): "ABS_MT_POSITION_Y"
        case (EV_ABS, ABS_MT_TRACKING_ID): "ABS_MT_TRACKING_ID"
        case (EV_ABS, ABS_MT_PRESSURE): "ABS_MT_PRESSURE"
        default: "0x" + String(code, radix: 16)
        }
    }
}
