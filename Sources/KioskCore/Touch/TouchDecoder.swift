

/// Turns one device's evdev event stream into contact changes, one frame (ending in
/// SYN_REPORT) at a time. Speaks multi-touch protocol B (slots) and A (SYN_MT_REPORT),
/// single touch (BTN_TOUCH + ABS_X/Y) and pressure-only devices.
///
/// ## When a contact has lifted
///
/// A panel says a finger lifted with a tracking ID of -1 (protocol B), a frame with no
/// contact or BTN_TOUCH 0 (protocol A, single touch), a contact of zero size
/// (ABS_MT_TOUCH_MAJOR 0, or pressure / ABS_MT_WIDTH_MAJOR 0 when it has no touch size:
/// older protocol A drivers end a touch this way), or pressure at rest (pressure only).
/// Some panels never do: a Goodix driver on a vendor kernel may send frames while a
/// finger is down and simply stop when it lifts. Silence alone cannot tell that apart
/// from a finger resting still on an ordinary panel — the kernel drops values that did
/// not change, so a still finger sends nothing at all, for as long as it rests. So:
///
/// - **Frames carry data**: a contact's "last seen" time is the last frame that carried
///   its own data (tracking ID, position, size, pressure). Frames of other events only
///   (hid-multitouch's MSC_TIMESTAMP while a finger rests, another slot's data) neither
///   keep it alive nor teach the report interval.
/// - **Report interval**: the median spacing of a contact's consecutive data frames
///   (spacings over 250 ms are pauses, not the cadence), learned per device.
/// - **A jump after a gap is a new touch**: when a contact's data resumes after more
///   than `silenceNanoseconds` (4 report intervals, within 50–500 ms) at a place more
///   than 1/16 of the panel away (or, protocol B, with a new tracking ID), no real
///   finger moved there: it lifted and a new one went down. It is reported as a release
///   where it was and a press where it is, on every panel.
/// - **Panels that never report a lift** (`liftReporting == .silence`): a device that has
///   never reported a lift and shows such a jump has proven that its lifts are silences.
///   From then on, a contact whose data frames stop for `silenceNanoseconds` is released,
///   and its next frame is a new press wherever it is (a second tap on the same key).
///   A panel that has reported a lift, or not yet shown a jump, is never released by
///   silence: a resting finger stays down. A lift event from a panel judged silent
///   makes it an ordinary panel again. (On a silent panel a finger held perfectly still
///   is released and pressed again when it moves: that panel gives no way to tell.)
/// - **Stale contacts**: any contact with no data for `staleAfterNanoseconds` (10 s) gets
///   a synthesized release (`expire(now:)`, scheduled by `nextDeadline`), so nothing
///   holds the screen "touched" forever. A contact released this way that the device
///   later moves is pressed again.
/// - **Lost events**: after SYN_DROPPED the rest of the frame is ignored, and
///   `resync(state:time:)` compares the device's real state with what was reported.
///
/// Over 400 lines as one thing: the three protocols and the rules above act on the same
/// per-slot state within one SYN frame, and each rule is a response to a panel seen in the
/// field (the tests name them); the types it emits are in ContactChange.swift.
public struct TouchDecoder: Sendable {
    public let touchProtocol: TouchProtocol
    public let staleAfterNanoseconds: Int64
    /// How this device has shown that a finger lifted (see the type's doc comment).
    public private(set) var liftReporting: LiftReporting = .unknown
    /// Pressure-only devices: touching while ABS_PRESSURE is above this.
    public let pressureThreshold: Int32
    /// True between a SYN_DROPPED and the resync that follows it.
    public private(set) var needsResync = false

    /// Protocol B allows this many slots at most, whatever the device claims.
    static let maximumSlots = 64
    /// Protocol A contacts tracked at once.
    static let maximumAnonymousContacts = 16
    /// A silent panel's contact has lifted after this many report intervals without data…
    static let silenceIntervals: Int64 = 4
    /// …but never sooner or later than these (a jittery bus; a slow resistive controller).
    static let silenceBounds: ClosedRange<Int64> = 50_000_000...500_000_000
    /// Spacings of data frames longer than this are pauses, not the report interval.
    static let longestReportInterval: Int64 = 250_000_000
    /// Spacings kept to learn the report interval from.
    static let intervalSampleCount = 31
    /// A contact that reappears more than 1/this of the panel's width or height away is a new touch.
    static let jumpFraction: Int64 = 16

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
        /// The last frame that carried this contact's own data (not MSC_TIMESTAMP alone).
        var lastActivity = MonotonicInstant(nanoseconds: 0)
        /// Released by the stale or silence rule while the device still says down.
        var expired = false

        var down: Bool { trackingID >= 0 }
    }

    /// A protocol A contact being collected until its SYN_MT_REPORT.
    struct AnonymousContact {
        var x: Int32 = 0
        var y: Int32 = 0
        var trackingID: Int32?
        var hasData = false
        var touchMajor: Int32?
        var widthMajor: Int32?
        var pressure: Int32?

        /// A contact of zero size is a finger that lifted (or hovers): older protocol A
        /// drivers end a touch with ABS_MT_TOUCH_MAJOR 0 instead of an empty frame. The
        /// touch size decides; without it the pressure, then the width.
        var lifted: Bool { (touchMajor ?? pressure ?? widthMajor).map { $0 <= 0 } ?? false }
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
    /// Protocol A: the frame had a contact of zero size (a lift, see `AnonymousContact.lifted`).
    var frameHasLiftedContact = false
    var nextAnonymousID: Int32 = 0
    /// Spacings of data frames (nanoseconds), a ring of `intervalSampleCount`.
    var intervalSamples: [Int64] = []
    var nextIntervalSample = 0
    /// A contact moving this far (device units) between two frames is a new touch; nil: unknown ranges.
    let jumpX: Int64?
    let jumpY: Int64?

    /// - Parameters:
    ///   - touchProtocol: How the device reports contacts.
    ///   - slotCount: Protocol B slots (ABS_MT_SLOT's maximum + 1); ignored otherwise.
    ///   - pressureThreshold: Pressure-only devices: touching while pressure is above this
    ///     (usually ABS_PRESSURE's minimum).
    ///   - staleAfterSeconds: A contact with no data this long is released.
    ///   - positionRanges: The X and Y ranges of the positions decoded; needed to tell a
    ///     finger that moved from a new one after a gap (without them only a new tracking
    ///     ID does).
    public init(touchProtocol: TouchProtocol, slotCount: Int = 1, pressureThreshold: Int32 = 0, staleAfterSeconds: Double = 10,
                positionRanges: (x: AxisRange, y: AxisRange)? = nil) {
        self.touchProtocol = touchProtocol
        self.pressureThreshold = pressureThreshold
        staleAfterNanoseconds = Int64(max(0.001, staleAfterSeconds) * 1e9)
        func jump(_ range: AxisRange) -> Int64 { max(1, (Int64(range.maximum) - Int64(range.minimum)) / Self.jumpFraction) }
        jumpX = positionRanges.map { jump($0.x) }
        jumpY = positionRanges.map { jump($0.y) }
        let count = touchProtocol == .multiTouchSlots ? min(max(1, slotCount), Self.maximumSlots) : 1
        slots = Array(repeating: Slot(), count: count)
    }

    /// A decoder for a device with these capabilities, or nil if it reports no touch position.
    public init?(capabilities: InputDeviceCapabilities, staleAfterSeconds: Double = 10) {
        guard let proto = capabilities.touchProtocol else { return nil }
        self.init(touchProtocol: proto, slotCount: capabilities.slotCount,
                  pressureThreshold: capabilities.pressureRange?.minimum ?? 0, staleAfterSeconds: staleAfterSeconds,
                  positionRanges: capabilities.positionRanges)
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
        case (EvdevCode.EV_ABS, EvdevCode.ABS_MT_TOUCH_MAJOR):
            pendingContact.touchMajor = event.value
            pendingContact.hasData = true
        case (EvdevCode.EV_ABS, EvdevCode.ABS_MT_WIDTH_MAJOR):
            pendingContact.widthMajor = event.value
            pendingContact.hasData = true
        case (EvdevCode.EV_ABS, EvdevCode.ABS_MT_PRESSURE):
            pendingContact.pressure = event.value
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
        if pendingContact.hasData, pendingContact.lifted {
            frameHasLiftedContact = true
        } else if pendingContact.hasData, frameContacts.count < Self.maximumAnonymousContacts {
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
        frameHasLiftedContact = false
    }

    private mutating func endFrame(at time: MonotonicInstant) -> [ContactChange] {
        // Protocol A lists every contact in every frame, so a contact left out has lifted;
        // but only a frame that says so outright is the device reporting a lift (a panel
        // that never does lists a new touch alone, with the old one simply missing).
        var liftsAreReported = true
        if touchProtocol == .multiTouchAnonymous {
            finishAnonymousContact()   // a device that leaves out the last SYN_MT_REPORT
            liftsAreReported = frameTouchUp || frameHasLiftedContact || (frameHasContactReport && frameContacts.isEmpty)
            if frameTouchUp || frameHasContactReport || !frameContacts.isEmpty {
                assignAnonymousContacts(frameTouchUp ? [] : frameContacts)
            }
        }
        let changes = commit(at: time, liftsAreReported: liftsAreReported)
        clearFrame()
        return changes
    }

    /// Protocol A has no slots: each frame lists every contact. Contacts keep their slot
    /// from frame to frame by tracking ID when the device sends one, else by nearness.
    private mutating func assignAnonymousContacts(_ contacts: [AnonymousContact]) {
        var assigned = Array(repeating: false, count: contacts.count)
        var claimed = Array(repeating: false, count: slots.count)
        // Every contact not listed again has lifted: that is news for its slot.
        var newSlots = slots.map { slot -> Slot in
            var slot = slot
            if slot.down { slot.touched = true }
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
    /// - Parameters:
    ///   - synthesized: The state was read back after lost events, not sent as a frame.
    ///   - liftsAreReported: A contact that left in this frame was lifted by the device's
    ///     own word (always so except for protocol A frames that merely leave it out).
    private mutating func commit(at time: MonotonicInstant, synthesized: Bool = false, liftsAreReported: Bool = true) -> [ContactChange] {
        var changes: [ContactChange] = []
        let silence = silenceNanoseconds
        for index in slots.indices {
            var slot = slots[index]
            let fromFrame = slot.touched && !synthesized
            // Time since this contact's previous data frame.
            let gap = time.nanoseconds(since: slot.lastActivity)
            if slot.touched { slot.lastActivity = time }
            if slot.reportedDown {
                if !slot.down {
                    if fromFrame {
                        if liftsAreReported {
                            liftReporting = .reported
                        } else if gap > silence, liftReporting == .unknown {
                            liftReporting = .silence   // protocol A: the old contact just went missing
                        }
                    }
                    changes.append(release(&slot, index: index, at: time, synthesized: synthesized))
                } else if slot.trackingID != slot.reportedID {
                    // A new finger in the same slot with no -1 in between: the old one lifted
                    // unannounced. After a silence, that is how a panel that never reports
                    // lifts shows itself.
                    if fromFrame, gap > silence, liftReporting == .unknown { liftReporting = .silence }
                    changes.append(release(&slot, index: index, at: time, synthesized: synthesized))
                    changes.append(press(&slot, index: index, at: time))
                } else if fromFrame, gap > silence, liftReporting == .silence || jumped(slot) {
                    // Data again after a silence: on a silent panel always a new touch; on any
                    // panel when it is far from where the contact was (no finger jumps).
                    if liftReporting == .unknown { liftReporting = .silence }
                    // It lifted when its frames stopped: one silence after its last data.
                    let lifted = time.advanced(byNanoseconds: silence - gap)
                    changes.append(release(&slot, index: index, at: lifted, synthesized: true))
                    changes.append(press(&slot, index: index, at: time))
                } else {
                    if fromFrame { learnInterval(gap) }
                    if slot.x != slot.reportedX || slot.y != slot.reportedY {
                        slot.reportedX = slot.x
                        slot.reportedY = slot.y
                        changes.append(ContactChange(phase: .move, slot: index, x: slot.x, y: slot.y, time: time))
                    }
                }
            } else if slot.down {
                // A contact released by the stale or silence rule comes back only when the
                // device sends its data again; far from where it was released, that proves
                // the panel does not report lifts.
                if !slot.expired || slot.touched {
                    if slot.expired, fromFrame, liftReporting == .unknown, jumped(slot) { liftReporting = .silence }
                    changes.append(press(&slot, index: index, at: time))
                }
            } else {
                // The device's own release of a contact the stale rule had already released.
                if slot.expired, fromFrame, liftsAreReported { liftReporting = .reported }
                slot.expired = false
            }
            slot.touched = false
            slots[index] = slot
        }
        return changes
    }

    /// Whether the contact is now farther from where it was last reported than a finger
    /// could have slid unseen (1/16 of the panel in X or Y).
    private func jumped(_ slot: Slot) -> Bool {
        guard let jumpX, let jumpY else { return false }
        return abs(Int64(slot.x) - Int64(slot.reportedX)) > jumpX || abs(Int64(slot.y) - Int64(slot.reportedY)) > jumpY
    }

    // MARK: Report interval

    /// Takes the spacing of two data frames of one contact as a report-interval sample.
    private mutating func learnInterval(_ spacing: Int64) {
        guard spacing > 0, spacing <= Self.longestReportInterval else { return }
        if intervalSamples.count < Self.intervalSampleCount {
            intervalSamples.append(spacing)
        } else {
            intervalSamples[nextIntervalSample] = spacing
        }
        nextIntervalSample = (nextIntervalSample + 1) % Self.intervalSampleCount
    }

    /// The device's report interval while a contact is down and changing (the median of the
    /// recent spacings of data frames); nil until three spacings were seen.
    public var reportIntervalNanoseconds: Int64? {
        guard intervalSamples.count >= 3 else { return nil }
        return intervalSamples.sorted()[intervalSamples.count / 2]
    }

    /// How long a contact's data may stop before a silent panel's contact has lifted, and
    /// the gap after which a contact reappearing far away is a new touch: 4 report
    /// intervals within 50–500 ms (500 ms while the interval is not known).
    public var silenceNanoseconds: Int64 {
        guard let interval = reportIntervalNanoseconds else { return Self.silenceBounds.upperBound }
        return min(max(interval * Self.silenceIntervals, Self.silenceBounds.lowerBound), Self.silenceBounds.upperBound)
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

    /// How long a contact may go without data before it is released: the stale time, or
    /// on a panel that never reports lifts the (much shorter) silence.
    private var releaseAfterNanoseconds: Int64 {
        liftReporting == .silence ? min(silenceNanoseconds, staleAfterNanoseconds) : staleAfterNanoseconds
    }

    /// When the next contact is due for a synthesized release (stale, or silent on a panel
    /// that never reports lifts); nil when no contact is down.
    public var nextDeadline: MonotonicInstant? {
        let after = releaseAfterNanoseconds
        return slots.lazy.filter(\.reportedDown).map { $0.lastActivity.advanced(byNanoseconds: after) }.min()
    }

    /// Releases every contact whose data has stopped for the stale time (or, on a panel
    /// that never reports lifts, for the silence) by `now`. Each release carries the
    /// moment the contact was due.
    public mutating func expire(now: MonotonicInstant) -> [ContactChange] {
        var changes: [ContactChange] = []
        let after = releaseAfterNanoseconds
        for index in slots.indices where slots[index].reportedDown {
            let due = slots[index].lastActivity.advanced(byNanoseconds: after)
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
