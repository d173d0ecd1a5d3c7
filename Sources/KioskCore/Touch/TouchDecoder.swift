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

/// Turns one device's evdev event stream into contact changes, one frame (ending in
/// SYN_REPORT) at a time. Speaks multi-touch protocol B (slots) and A (SYN_MT_REPORT),
/// single touch (BTN_TOUCH + ABS_X/Y) and pressure-only devices.
///
/// Two rules keep the screen from being held "touched" forever:
/// - **stale contacts**: a contact with no event for `staleAfterNanoseconds` gets a
///   synthesized release (`expire(now:)`, scheduled by `nextDeadline`) — some panels never
///   send a release, and a finger held perfectly still sends nothing either. A contact
///   released this way that the device later moves is pressed again.
/// - **lost events**: after SYN_DROPPED the rest of the frame is ignored, and
///   `resync(state:time:)` compares the device's real state with what was reported.
public struct TouchDecoder: Sendable {
    public let touchProtocol: TouchProtocol
    public let staleAfterNanoseconds: Int64
    /// Pressure-only devices: touching while ABS_PRESSURE is above this.
    public let pressureThreshold: Int32
    /// True between a SYN_DROPPED and the resync that follows it.
    public private(set) var needsResync = false

    /// Protocol B allows this many slots at most, whatever the device claims.
    static let maximumSlots = 64
    /// Protocol A contacts tracked at once.
    static let maximumAnonymousContacts = 16

    struct Slot {
        // What the device says.
        var trackingID: Int32 = -1
        var x: Int32 = 0
        var y: Int32 = 0
        /// Events arrived for this slot in the current frame.
        var touched = false
        // What was reported.
        var reportedDown = false
        var reportedID: Int32 = -1
        var reportedX: Int32 = 0
        var reportedY: Int32 = 0
        var lastActivity = MonotonicInstant(nanoseconds: 0)
        /// Released by the stale rule while the device still says down.
        var expired = false

        var down: Bool { trackingID >= 0 }
    }

    /// A protocol A contact being collected until its SYN_MT_REPORT.
    struct AnonymousContact {
        var x: Int32 = 0
        var y: Int32 = 0
        var trackingID: Int32?
        var hasData = false
    }

    var slots: [Slot]
    var currentSlot: Int? = 0
    /// Between SYN_DROPPED and the next SYN_REPORT everything is ignored (kernel rule).
    var dropping = false
    // Protocol A frame in progress.
    var frameContacts: [AnonymousContact] = []
    var pendingContact = AnonymousContact()
    var frameHasContactReport = false
    var frameTouchUp = false
    var nextAnonymousID: Int32 = 0

    /// - Parameters:
    ///   - touchProtocol: How the device reports contacts.
    ///   - slotCount: Protocol B slots (ABS_MT_SLOT's maximum + 1); ignored otherwise.
    ///   - pressureThreshold: Pressure-only devices: touching while pressure is above this
    ///     (usually ABS_PRESSURE's minimum).
    ///   - staleAfterSeconds: A contact with no event this long is released.
    public init(touchProtocol: TouchProtocol, slotCount: Int = 1, pressureThreshold: Int32 = 0, staleAfterSeconds: Double = 10) {
        self.touchProtocol = touchProtocol
        self.pressureThreshold = pressureThreshold
        staleAfterNanoseconds = Int64(max(0.001, staleAfterSeconds) * 1e9)
        let count = touchProtocol == .multiTouchSlots ? min(max(1, slotCount), Self.maximumSlots) : 1
        slots = Array(repeating: Slot(), count: count)
    }

    /// A decoder for a device with these capabilities, or nil if it reports no touch position.
    public init?(capabilities: InputDeviceCapabilities, staleAfterSeconds: Double = 10) {
        guard let proto = capabilities.touchProtocol else { return nil }
        self.init(touchProtocol: proto, slotCount: capabilities.slotCount,
                  pressureThreshold: capabilities.pressureRange?.minimum ?? 0, staleAfterSeconds: staleAfterSeconds)
    }

    /// Takes one event; at the end of a frame returns what changed (else nothing).
    public mutating func feed(_ event: RawInputEvent) -> [ContactChange] {
        if event.type == EvdevCode.EV_SYN {
            switch event.code {
            case EvdevCode.SYN_REPORT:
                if dropping {
                    dropping = false
                    clearFrame()
                    return []
                }
                return endFrame(at: event.time)
            case EvdevCode.SYN_DROPPED:
                dropping = true
                needsResync = true
                clearFrame()
                return []
            case EvdevCode.SYN_MT_REPORT where !dropping && touchProtocol == .multiTouchAnonymous:
                finishAnonymousContact()
                frameHasContactReport = true
                return []
            default:
                return []
            }
        }
        guard !dropping else { return [] }
        switch touchProtocol {
        case .multiTouchSlots: feedSlotted(event)
        case .multiTouchAnonymous: feedAnonymous(event)
        case .singleTouch, .pressureOnly: feedSingle(event)
        }
        return []
    }

    /// Feeds a whole stream; the changes of every frame in order.
    public mutating func feed(_ events: some Sequence<RawInputEvent>) -> [ContactChange] {
        events.flatMap { feed($0) }
    }

    private mutating func feedSlotted(_ event: RawInputEvent) {
        guard event.type == EvdevCode.EV_ABS else { return }
        if event.code == EvdevCode.ABS_MT_SLOT {
            let index = Int(event.value)
            guard index >= 0, index < Self.maximumSlots else { currentSlot = nil; return }
            if index >= slots.count { slots += Array(repeating: Slot(), count: index + 1 - slots.count) }
            currentSlot = index
            return
        }
        guard let index = currentSlot, event.code >= EvdevCode.ABS_MT_TOUCH_MAJOR, event.code <= EvdevCode.ABS_MAX else { return }
        switch event.code {
        case EvdevCode.ABS_MT_TRACKING_ID: slots[index].trackingID = event.value < 0 ? -1 : event.value
        case EvdevCode.ABS_MT_POSITION_X: slots[index].x = event.value
        case EvdevCode.ABS_MT_POSITION_Y: slots[index].y = event.value
        default: break
        }
        slots[index].touched = true
    }

    private mutating func feedAnonymous(_ event: RawInputEvent) {
        switch (event.type, event.code) {
        case (EvdevCode.EV_KEY, EvdevCode.BTN_TOUCH):
            if event.value == 0 { frameTouchUp = true }
        case (EvdevCode.EV_ABS, EvdevCode.ABS_MT_POSITION_X):
            pendingContact.x = event.value
            pendingContact.hasData = true
        case (EvdevCode.EV_ABS, EvdevCode.ABS_MT_POSITION_Y):
            pendingContact.y = event.value
            pendingContact.hasData = true
        case (EvdevCode.EV_ABS, EvdevCode.ABS_MT_TRACKING_ID):
            pendingContact.trackingID = event.value
            pendingContact.hasData = true
        case (EvdevCode.EV_ABS, EvdevCode.ABS_MT_TOUCH_MAJOR...EvdevCode.ABS_MAX):
            pendingContact.hasData = true
        default:
            break
        }
    }

    private mutating func feedSingle(_ event: RawInputEvent) {
        switch (event.type, event.code) {
        case (EvdevCode.EV_KEY, EvdevCode.BTN_TOUCH) where touchProtocol == .singleTouch:
            slots[0].trackingID = event.value != 0 ? 0 : -1
        case (EvdevCode.EV_ABS, EvdevCode.ABS_PRESSURE) where touchProtocol == .pressureOnly:
            slots[0].trackingID = event.value > pressureThreshold ? 0 : -1
        case (EvdevCode.EV_ABS, EvdevCode.ABS_X):
            slots[0].x = event.value
        case (EvdevCode.EV_ABS, EvdevCode.ABS_Y):
            slots[0].y = event.value
        default:
            return
        }
        slots[0].touched = true
    }

    private mutating func finishAnonymousContact() {
        if pendingContact.hasData, frameContacts.count < Self.maximumAnonymousContacts {
            frameContacts.append(pendingContact)
        }
        pendingContact = AnonymousContact()
    }

    private mutating func clearFrame() {
        for index in slots.indices { slots[index].touched = false }
        frameContacts = []
        pendingContact = AnonymousContact()
        frameHasContactReport = false
        frameTouchUp = false
    }

    private mutating func endFrame(at time: MonotonicInstant) -> [ContactChange] {
        if touchProtocol == .multiTouchAnonymous {
            finishAnonymousContact()   // a device that leaves out the last SYN_MT_REPORT
            if frameTouchUp || frameHasContactReport || !frameContacts.isEmpty {
                assignAnonymousContacts(frameTouchUp ? [] : frameContacts)
            }
        }
        let changes = commit(at: time)
        clearFrame()
        return changes
    }

    /// Protocol A has no slots: each frame lists every contact. Contacts keep their slot
    /// from frame to frame by tracking ID when the device sends one, else by nearness.
    private mutating func assignAnonymousContacts(_ contacts: [AnonymousContact]) {
        var assigned = Array(repeating: false, count: contacts.count)
        var claimed = Array(repeating: false, count: slots.count)
        var newSlots = slots.map { slot -> Slot in
            var slot = slot
            slot.trackingID = -1
            return slot
        }
        func place(_ contact: AnonymousContact, in index: Int, id: Int32) {
            newSlots[index].trackingID = id
            newSlots[index].x = contact.x
            newSlots[index].y = contact.y
            newSlots[index].touched = true
            claimed[index] = true
        }
        // 1. The device's own tracking IDs.
        for (n, contact) in contacts.enumerated() {
            guard let id = contact.trackingID, id >= 0 else { continue }
            if let index = slots.indices.first(where: { !claimed[$0] && slots[$0].down && slots[$0].trackingID == id }) {
                place(contact, in: index, id: id)
                assigned[n] = true
            }
        }
        // 2. Nearest previous contact, closest pairs first.
        // Squared distances in Double: between Int32.min and Int32.max they exceed Int64.
        var pairs: [(distance: Double, contact: Int, slot: Int)] = []
        for (n, contact) in contacts.enumerated() where !assigned[n] && contact.trackingID == nil {
            for index in slots.indices where slots[index].down && !claimed[index] {
                let dx = Double(contact.x) - Double(slots[index].x), dy = Double(contact.y) - Double(slots[index].y)
                pairs.append((dx * dx + dy * dy, n, index))
            }
        }
        for pair in pairs.sorted(by: { $0.distance < $1.distance }) where !assigned[pair.contact] && !claimed[pair.slot] {
            place(contacts[pair.contact], in: pair.slot, id: slots[pair.slot].trackingID)
            assigned[pair.contact] = true
        }
        // 3. New contacts take the lowest free slot.
        for (n, contact) in contacts.enumerated() where !assigned[n] {
            let index: Int
            if let free = newSlots.indices.first(where: { !claimed[$0] && !newSlots[$0].reportedDown }) {
                index = free
            } else if newSlots.count < Self.maximumAnonymousContacts {
                newSlots.append(Slot())
                claimed.append(false)
                index = newSlots.count - 1
            } else {
                continue
            }
            var id = contact.trackingID ?? -1
            if id < 0 {
                id = nextAnonymousID
                nextAnonymousID = nextAnonymousID == Int32.max ? 0 : nextAnonymousID + 1
            }
            place(contact, in: index, id: id)
        }
        slots = newSlots
    }

    /// Compares what the device says with what was reported and reports the difference.
    private mutating func commit(at time: MonotonicInstant, synthesized: Bool = false) -> [ContactChange] {
        var changes: [ContactChange] = []
        for index in slots.indices {
            var slot = slots[index]
            if slot.touched { slot.lastActivity = time }
            if slot.reportedDown {
                if !slot.down {
                    changes.append(release(&slot, index: index, at: time, synthesized: synthesized))
                } else if slot.trackingID != slot.reportedID {
                    // A new finger in the same slot within one frame: the old one lifted.
                    changes.append(release(&slot, index: index, at: time, synthesized: synthesized))
                    changes.append(press(&slot, index: index, at: time))
                } else if slot.x != slot.reportedX || slot.y != slot.reportedY {
                    slot.reportedX = slot.x
                    slot.reportedY = slot.y
                    changes.append(ContactChange(phase: .move, slot: index, x: slot.x, y: slot.y, time: time))
                }
            } else if slot.down {
                // A contact released by the stale rule comes back only when the device moves it.
                if !slot.expired || slot.touched { changes.append(press(&slot, index: index, at: time)) }
            } else {
                slot.expired = false
            }
            slot.touched = false
            slots[index] = slot
        }
        return changes
    }

    private func press(_ slot: inout Slot, index: Int, at time: MonotonicInstant) -> ContactChange {
        slot.reportedDown = true
        slot.reportedID = slot.trackingID
        slot.reportedX = slot.x
        slot.reportedY = slot.y
        slot.lastActivity = time
        slot.expired = false
        return ContactChange(phase: .press, slot: index, x: slot.x, y: slot.y, time: time)
    }

    private func release(_ slot: inout Slot, index: Int, at time: MonotonicInstant, synthesized: Bool) -> ContactChange {
        slot.reportedDown = false
        slot.reportedID = -1
        return ContactChange(phase: .release, slot: index, x: slot.reportedX, y: slot.reportedY, time: time, synthesized: synthesized)
    }

    // MARK: Lost events

    /// After SYN_DROPPED: takes the device's real state and reports the difference from
    /// what was reported — releases for contacts that lifted meanwhile, presses for new ones.
    /// - Parameters:
    ///   - state: The device's state, read back (libevdev does this after SYN_DROPPED).
    ///   - time: When the state was read (the changes carry it).
    public mutating func resync(state: TouchDeviceSnapshot, time: MonotonicInstant) -> [ContactChange] {
        dropping = false
        needsResync = false
        clearFrame()
        switch touchProtocol {
        case .multiTouchSlots:
            if state.slots.count > slots.count {
                slots += Array(repeating: Slot(), count: min(state.slots.count, Self.maximumSlots) - slots.count)
            }
            for index in slots.indices {
                let new = index < state.slots.count ? state.slots[index] : .init(trackingID: -1, x: 0, y: 0)
                let id = new.trackingID < 0 ? -1 : new.trackingID
                if id != slots[index].trackingID || new.x != slots[index].x || new.y != slots[index].y {
                    slots[index].touched = true
                }
                slots[index].trackingID = id
                slots[index].x = new.x
                slots[index].y = new.y
            }
            currentSlot = (0..<slots.count).contains(state.currentSlot) ? state.currentSlot : nil
        case .multiTouchAnonymous:
            // Positions of anonymous contacts are not kept by the kernel; the next frame
            // lists them again. Only "nothing touches" can be known now.
            if !state.touching { assignAnonymousContacts([]) }
        case .singleTouch, .pressureOnly:
            let down = touchProtocol == .singleTouch ? state.touching : state.pressure > pressureThreshold
            let id: Int32 = down ? 0 : -1
            if id != slots[0].trackingID || state.x != slots[0].x || state.y != slots[0].y { slots[0].touched = true }
            slots[0].trackingID = id
            slots[0].x = state.x
            slots[0].y = state.y
        }
        return commit(at: time, synthesized: true)
    }

    /// Takes the state of a device just opened without reporting anything: contacts
    /// already down (a finger resting on the panel at start-up) are pressed only when
    /// they move, and the current slot is known before the first event.
    public mutating func adopt(state: TouchDeviceSnapshot, time: MonotonicInstant) {
        _ = resync(state: state, time: time)
        for index in slots.indices where slots[index].reportedDown {
            slots[index].reportedDown = false
            slots[index].reportedID = -1
            slots[index].expired = true
        }
    }

    // MARK: Stale contacts

    /// When the next stale contact is due for a synthesized release; nil when no contact is down.
    public var nextDeadline: MonotonicInstant? {
        slots.lazy.filter(\.reportedDown).map { $0.lastActivity.advanced(byNanoseconds: self.staleAfterNanoseconds) }.min()
    }

    /// Releases every contact that has been silent for the stale time by `now`.
    /// Each release carries the moment the contact went stale.
    public mutating func expire(now: MonotonicInstant) -> [ContactChange] {
        var changes: [ContactChange] = []
        for index in slots.indices where slots[index].reportedDown {
            let due = slots[index].lastActivity.advanced(byNanoseconds: staleAfterNanoseconds)
            guard due <= now else { continue }
            changes.append(release(&slots[index], index: index, at: due, synthesized: true))
            slots[index].expired = slots[index].down
        }
        return changes
    }

    /// Releases every contact reported down (the device went away).
    public mutating func releaseAll(at time: MonotonicInstant) -> [ContactChange] {
        var changes: [ContactChange] = []
        for index in slots.indices where slots[index].reportedDown {
            changes.append(release(&slots[index], index: index, at: time, synthesized: true))
        }
        return changes
    }

    /// Contacts reported down now, by slot.
    public var activeSlots: [Int] { slots.indices.filter { slots[$0].reportedDown } }
}
