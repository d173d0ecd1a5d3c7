

/// A contact going down, moving or lifting, in the device's own coordinates (before
/// scaling to the screen). `TouchTransform` turns it into a `TouchEvent`.
public struct ContactChange: Sendable, Equatable, CustomStringConvertible {
    public var phase: TouchPhase
    /// The protocol B slot, or the decoder's own contact number for protocol A; 0 for single touch.
    public var slot: Int
    public var x: Int32
    public var y: Int32
    /// The kernel's time of the frame (for a release made up by the stale-contact rule:
    /// the moment the contact went stale).
    public var time: MonotonicInstant
    /// True for a release the device never sent: the stale-contact rule or a resync made it up.
    public var synthesized: Bool

    public init(phase: TouchPhase, slot: Int, x: Int32, y: Int32, time: MonotonicInstant, synthesized: Bool = false) {
        self.phase = phase
        self.slot = slot
        self.x = x
        self.y = y
        self.time = time
        self.synthesized = synthesized
    }

    public var description: String {
        "\(phase.rawValue) \(x) \(y) slot \(slot)\(synthesized ? " (synthesized)" : "")"
    }
}

/// The device's state as read back after events were lost (SYN_DROPPED): what
/// `libevdev` knows once it has resynchronised, in device coordinates.
public struct TouchDeviceSnapshot: Sendable, Equatable {
    public struct Slot: Sendable, Equatable {
        /// -1 when no contact is in the slot.
        public var trackingID: Int32
        public var x: Int32
        public var y: Int32

        public init(trackingID: Int32, x: Int32, y: Int32) {
            self.trackingID = trackingID
            self.x = x
            self.y = y
        }
    }

    /// Protocol B: the slot later events refer to.
    public var currentSlot: Int
    /// Protocol B: every slot.
    public var slots: [Slot]
    /// BTN_TOUCH's state (single touch, protocol A).
    public var touching: Bool
    /// ABS_X, ABS_Y and ABS_PRESSURE (single touch, pressure only).
    public var x: Int32
    public var y: Int32
    public var pressure: Int32

    public init(currentSlot: Int = 0, slots: [Slot] = [], touching: Bool = false, x: Int32 = 0, y: Int32 = 0, pressure: Int32 = 0) {
        self.currentSlot = currentSlot
        self.slots = slots
        self.touching = touching
        self.x = x
        self.y = y
        self.pressure = pressure
    }
}

/// How a touch device has shown that a finger lifted (`TouchDecoder.liftReporting`).
public enum LiftReporting: String, Sendable, Equatable {
    /// Nothing yet: silences are taken for resting fingers.
    case unknown
    /// It has reported a lift (tracking ID -1, an empty frame, BTN_TOUCH 0, a contact of
    /// zero size): silences are resting fingers.
    case reported = "reports lifts"
    /// It never reported a lift, and a contact reappeared elsewhere after its frames had
    /// stopped: on this panel a silence is a lift.
    case silence = "lifts are silences"
}
