/// The range an absolute axis reports (`struct input_absinfo`'s minimum and maximum).
public struct AxisRange: Sendable, Equatable, Hashable, CustomStringConvertible {
    public var minimum: Int32
    public var maximum: Int32

    public init(minimum: Int32, maximum: Int32) {
        self.minimum = minimum
        self.maximum = maximum
    }

    public var description: String { "\(minimum)…\(maximum)" }
}

/// How a touch device reports contacts (the kernel's Documentation/input/multi-touch-protocol.rst).
public enum TouchProtocol: String, Sendable, Equatable, CaseIterable {
    /// Multi-touch protocol B: slots (ABS_MT_SLOT) with tracking IDs.
    case multiTouchSlots = "multi-touch B"
    /// Multi-touch protocol A: anonymous contacts, each ended by SYN_MT_REPORT.
    case multiTouchAnonymous = "multi-touch A"
    /// One contact: BTN_TOUCH with ABS_X/ABS_Y.
    case singleTouch = "single touch"
    /// One contact without BTN_TOUCH: touching while ABS_PRESSURE is above its minimum.
    case pressureOnly = "pressure only"
}

/// What an input device says it can do — the facts discovery and decoding need, read
/// from the device by the wrapper and kept as plain values so the rules can be tested.
public struct InputDeviceCapabilities: Sendable, Equatable {
    public var name: String
    public var phys: String
    /// INPUT_PROP_* bits set.
    public var properties: Set<UInt16>
    /// EV_KEY codes the device has.
    public var keys: Set<UInt16>
    /// EV_ABS codes the device has, with their ranges.
    public var absoluteAxes: [UInt16: AxisRange]
    /// Whether it has relative axes (a mouse).
    public var hasRelativeAxes: Bool

    public init(name: String, phys: String = "", properties: Set<UInt16> = [], keys: Set<UInt16> = [],
                absoluteAxes: [UInt16: AxisRange] = [:], hasRelativeAxes: Bool = false) {
        self.name = name
        self.phys = phys
        self.properties = properties
        self.keys = keys
        self.absoluteAxes = absoluteAxes
        self.hasRelativeAxes = hasRelativeAxes
    }

    public var isDirect: Bool { properties.contains(EvdevCode.INPUT_PROP_DIRECT) }

    /// The protocol the device speaks, or nil if it reports no touch position at all.
    /// Multi-touch devices also send the single-touch events; the richer protocol wins.
    public var touchProtocol: TouchProtocol? {
        let axes = absoluteAxes
        if axes[EvdevCode.ABS_MT_POSITION_X] != nil, axes[EvdevCode.ABS_MT_POSITION_Y] != nil {
            return axes[EvdevCode.ABS_MT_SLOT] != nil ? .multiTouchSlots : .multiTouchAnonymous
        }
        guard axes[EvdevCode.ABS_X] != nil, axes[EvdevCode.ABS_Y] != nil else { return nil }
        if keys.contains(EvdevCode.BTN_TOUCH) { return .singleTouch }
        if axes[EvdevCode.ABS_PRESSURE] != nil { return .pressureOnly }
        return nil
    }

    /// The X and Y ranges the decoder's coordinates are in: the multi-touch axes for
    /// multi-touch protocols, else ABS_X/ABS_Y.
    public var positionRanges: (x: AxisRange, y: AxisRange)? {
        let (xCode, yCode) = touchProtocol == .multiTouchSlots || touchProtocol == .multiTouchAnonymous
            ? (EvdevCode.ABS_MT_POSITION_X, EvdevCode.ABS_MT_POSITION_Y) : (EvdevCode.ABS_X, EvdevCode.ABS_Y)
        guard let x = absoluteAxes[xCode], let y = absoluteAxes[yCode] else { return nil }
        return (x, y)
    }

    /// Number of slots for protocol B (ABS_MT_SLOT's maximum + 1), 1 otherwise.
    public var slotCount: Int {
        guard touchProtocol == .multiTouchSlots, let slot = absoluteAxes[EvdevCode.ABS_MT_SLOT] else { return 1 }
        return max(1, Int(slot.maximum) + 1)
    }

    /// The range of the pressure axis a pressure-only device is decoded with.
    public var pressureRange: AxisRange? { absoluteAxes[EvdevCode.ABS_PRESSURE] }
}

/// Whether an input device is a touch screen, and how good a candidate it is.
public enum TouchscreenVerdict: Sendable, Equatable {
    /// A touch screen; higher scores are better candidates.
    case touchscreen(TouchProtocol, score: Int)
    /// Not usable, with the reason in words.
    case rejected(String)

    /// Judges a device by its capabilities: a touch screen is a direct input device
    /// (INPUT_PROP_DIRECT) with absolute X/Y; touchpads, tablets, mice and keyboards are not.
    /// Devices that do not set INPUT_PROP_DIRECT (older resistive-panel drivers) are
    /// accepted with a low score only when they look like nothing else, so a board whose
    /// driver forgets the property still works, but a real touch screen always wins.
    public init(_ caps: InputDeviceCapabilities) {
        guard let proto = caps.touchProtocol else {
            if caps.hasRelativeAxes { self = .rejected("a mouse or pointer (relative axes)"); return }
            if caps.absoluteAxes.isEmpty { self = .rejected("no absolute axes (a keyboard, button or switch)"); return }
            self = .rejected("no absolute X/Y position with BTN_TOUCH or pressure")
            return
        }
        guard let ranges = caps.positionRanges, ranges.x.maximum != ranges.x.minimum,
              ranges.y.maximum != ranges.y.minimum else {
            self = .rejected("its X/Y axes have an empty range")
            return
        }
        var score: Int
        switch proto {
        case .multiTouchSlots: score = 40
        case .multiTouchAnonymous: score = 30
        case .singleTouch: score = 20
        case .pressureOnly: score = 10
        }
        if caps.isDirect {
            score += 100
        } else {
            if caps.properties.contains(EvdevCode.INPUT_PROP_POINTER) {
                self = .rejected("a touchpad (INPUT_PROP_POINTER: moves a pointer, not a point on the screen)")
                return
            }
            if caps.keys.contains(EvdevCode.BTN_TOOL_PEN) {
                self = .rejected("a drawing tablet (BTN_TOOL_PEN without INPUT_PROP_DIRECT)")
                return
            }
            if caps.hasRelativeAxes || caps.keys.contains(EvdevCode.BTN_LEFT) {
                self = .rejected("a pointer device with absolute axes (BTN_LEFT or relative axes, no INPUT_PROP_DIRECT), such as a virtual machine's tablet")
                return
            }
        }
        self = .touchscreen(proto, score: score)
    }

    public var score: Int? {
        if case .touchscreen(_, let score) = self { return score }
        return nil
    }

    /// "multi-touch B, direct input" or the rejection reason.
    public func explanation(_ caps: InputDeviceCapabilities) -> String {
        switch self {
        case .touchscreen(let proto, _):
            let ranges = caps.positionRanges.map { " X \($0.x), Y \($0.y)" } ?? ""
            let slots = proto == .multiTouchSlots ? ", \(caps.slotCount) slots" : ""
            let direct = caps.isDirect ? "direct input (INPUT_PROP_DIRECT)" : "no INPUT_PROP_DIRECT, accepted as nothing else claims its axes"
            return "\(proto.rawValue)\(slots), \(direct),\(ranges)"
        case .rejected(let reason):
            return reason
        }
    }
}
