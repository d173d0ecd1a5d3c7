import FuzzSupport
import KioskCore

/// A touch device made up from the first bytes (protocol, axis ranges, slot count,
/// stale time, mounting), then an evdev event stream from the rest, 8 bytes an event:
/// type, code, value (little-endian Int32), milliseconds since the previous event. Event
/// types 0xF0…0xF3 are not events but calls: `expire(now:)`, `resync(state:time:)`
/// (the state read from the bytes that follow), `adopt(state:time:)` (a resync while
/// contacts are down), `releaseAll(at:)`.
///
/// Properties beyond "no trap", checked against a model of what was reported:
/// - the change stream is well formed: a press only for a slot that is up, a move or a
///   release only for a slot that is down; a move moves; a release is where the contact
///   was last reported; only releases are synthesized; a frame's presses and moves carry
///   its time, and a release never a later one (a lift the decoder infers is dated when
///   the contact went quiet);
/// - `activeSlots` is the model's set of down slots, `nextDeadline` is nil exactly when
///   none is down, and after `expire(now:)` nothing is overdue;
/// - slots stay within the protocol's limit, and every change maps to a point on the
///   screen; the primary-touch filter passes a well-formed single-contact stream.
func fuzzTouchDecoder(_ bytes: UnsafeRawBufferPointer) {
    var reader = FuzzReader(bytes)
    let touchProtocol = TouchProtocol.allCases[Int(reader.byte()) % TouchProtocol.allCases.count]
    let capabilities = makeCapabilities(touchProtocol, &reader)
    let staleAfterSeconds = Double(reader.byte()) / 16
    let mounting = reader.byte()
    let verdict = TouchscreenVerdict(capabilities)
    Fuzz.trace("\(touchProtocol.rawValue): \(verdict.explanation(capabilities)), stale after \(staleAfterSeconds) s, mounting \(mounting)")

    guard var decoder = TouchDecoder(capabilities: capabilities, staleAfterSeconds: staleAfterSeconds),
          let ranges = capabilities.positionRanges else {
        return Fuzz.require(false, "no decoder for a \(touchProtocol.rawValue) device")
    }
    Fuzz.require(decoder.touchProtocol == touchProtocol, "decoder for \(decoder.touchProtocol), device speaks \(touchProtocol)")
    let rotation = ScreenRotation.allCases[Int(mounting & 3)]
    let panel = ScreenSize(width: 800, height: 480)
    let screen = rotation.swapsAxes ? panel.swapped : panel
    let transform = TouchTransform(xRange: ranges.x, yRange: ranges.y, screen: screen, rotation: rotation,
                                   swapAxes: mounting & 4 != 0, flipX: mounting & 8 != 0, flipY: mounting & 16 != 0)
    let slotLimit = switch touchProtocol {
    case .multiTouchSlots: 64
    case .multiTouchAnonymous: 16
    case .singleTouch, .pressureOnly: 1
    }

    var model = ReportedContacts(slotLimit: slotLimit, transform: transform, screen: screen)
    var time = MonotonicInstant(nanoseconds: Int64(reader.integer(UInt32.self)) * 1_000_000)
    while !reader.isAtEnd {
        let type = UInt16(reader.byte())
        let codeByte = reader.byte()
        let value = reader.integer(Int32.self)
        time = time.advanced(byNanoseconds: Int64(reader.integer(UInt16.self)) * 1_000_000)
        switch type {
        case 0xF0:
            let now = time.advanced(byNanoseconds: Int64(value) * 1_000_000)
            Fuzz.trace("expire(now: \(now))")
            let changes = decoder.expire(now: now)
            for change in changes {
                Fuzz.require(change.phase == .release && change.synthesized && change.time <= now, "expire gave \(change)")
            }
            model.apply(changes)
            if let deadline = decoder.nextDeadline { Fuzz.require(deadline > now, "deadline \(deadline) overdue at \(now)") }
        case 0xF1, 0xF2:
            let state = makeSnapshot(currentSlot: Int(codeByte) - 2, slotCount: Int(UInt32(bitPattern: value) % 80), &reader)
            Fuzz.trace("\(type == 0xF1 ? "resync" : "adopt")(state: \(state))")
            // `adopt` is for a device just opened: it reports nothing, so it is only
            // called (as the appliance does) while nothing is reported down.
            if type == 0xF1 || !model.down.isEmpty {
                model.apply(decoder.resync(state: state, time: time))
            } else {
                decoder.adopt(state: state, time: time)
            }
            Fuzz.require(!decoder.needsResync, "still needs a resync after one")
        case 0xF3:
            Fuzz.trace("releaseAll(at: \(time))")
            model.apply(decoder.releaseAll(at: time))
            Fuzz.require(decoder.activeSlots.isEmpty, "contacts down after releaseAll")
        default:
            let code: UInt16 = switch codeByte {
            case 0xFF: EvdevCode.BTN_TOUCH
            case 0xFE: EvdevCode.BTN_TOOL_FINGER
            default: UInt16(codeByte)
            }
            let event = RawInputEvent(type: type, code: code, value: value, time: time)
            Fuzz.trace("\(event) at \(time)")
            let changes = decoder.feed(event)
            for change in changes {
                Fuzz.require(change.phase == .release ? change.time <= time : change.time == time, "\(change) at \(change.time), its frame at \(time)")
            }
            model.apply(changes)
            if type == EvdevCode.EV_SYN && code == EvdevCode.SYN_DROPPED {
                Fuzz.require(decoder.needsResync, "no resync asked for after SYN_DROPPED")
            }
        }
        Fuzz.require(Set(decoder.activeSlots) == Set(model.down.keys),
                     "decoder says \(decoder.activeSlots) are down, it reported \(model.down.keys.sorted())")
        Fuzz.require((decoder.nextDeadline == nil) == model.down.isEmpty, "a deadline without contacts, or contacts without one")
    }
}

/// A device of the given protocol whose axes come from the input.
func makeCapabilities(_ touchProtocol: TouchProtocol, _ reader: inout FuzzReader) -> InputDeviceCapabilities {
    func range(_ reader: inout FuzzReader) -> AxisRange {
        AxisRange(minimum: reader.integer(Int32.self), maximum: reader.integer(Int32.self))
    }
    let x = range(&reader), y = range(&reader), pressure = range(&reader), slot = range(&reader)
    var axes: [UInt16: AxisRange] = [:]
    var keys: Set<UInt16> = []
    switch touchProtocol {
    case .multiTouchSlots:
        axes = [EvdevCode.ABS_MT_POSITION_X: x, EvdevCode.ABS_MT_POSITION_Y: y, EvdevCode.ABS_MT_SLOT: slot,
                EvdevCode.ABS_X: x, EvdevCode.ABS_Y: y]
        keys = [EvdevCode.BTN_TOUCH]
    case .multiTouchAnonymous:
        axes = [EvdevCode.ABS_MT_POSITION_X: x, EvdevCode.ABS_MT_POSITION_Y: y]
        keys = [EvdevCode.BTN_TOUCH]
    case .singleTouch:
        axes = [EvdevCode.ABS_X: x, EvdevCode.ABS_Y: y]
        keys = [EvdevCode.BTN_TOUCH]
    case .pressureOnly:
        axes = [EvdevCode.ABS_X: x, EvdevCode.ABS_Y: y, EvdevCode.ABS_PRESSURE: pressure]
    }
    return InputDeviceCapabilities(name: "fuzz", properties: [EvdevCode.INPUT_PROP_DIRECT], keys: keys, absoluteAxes: axes)
}

/// A device state as libevdev would read it back: 9 bytes a slot, then the single-touch state.
func makeSnapshot(currentSlot: Int, slotCount: Int, _ reader: inout FuzzReader) -> TouchDeviceSnapshot {
    var slots: [TouchDeviceSnapshot.Slot] = []
    for _ in 0..<min(slotCount, reader.remainingCount / 9) {
        let id = Int32(Int8(bitPattern: reader.byte()))
        slots.append(.init(trackingID: id, x: reader.integer(Int32.self), y: reader.integer(Int32.self)))
    }
    let flags = reader.byte()
    return TouchDeviceSnapshot(currentSlot: currentSlot, slots: slots, touching: flags & 1 != 0,
                               x: reader.integer(Int32.self), y: reader.integer(Int32.self), pressure: reader.integer(Int32.self))
}

/// What the decoder has reported so far, built only from its changes.
struct ReportedContacts {
    let slotLimit: Int
    let transform: TouchTransform
    let screen: ScreenSize
    /// Down slots and where each was last reported.
    var down: [Int: (x: Int32, y: Int32)] = [:]
    var primary = PrimaryTouchFilter()
    var primaryDown: Int?

    mutating func apply(_ changes: [ContactChange]) {
        for change in changes {
            Fuzz.trace("  \(change) at \(change.time)")
            Fuzz.require((0..<slotLimit).contains(change.slot), "slot \(change.slot) beyond \(slotLimit)")
            Fuzz.require(!change.synthesized || change.phase == .release, "synthesized \(change)")
            switch change.phase {
            case .press:
                Fuzz.require(down[change.slot] == nil, "press of slot \(change.slot), which is down")
                down[change.slot] = (change.x, change.y)
            case .move:
                guard let last = down[change.slot] else { return Fuzz.require(false, "move of slot \(change.slot), which is up") }
                Fuzz.require(last != (change.x, change.y), "a move to where slot \(change.slot) already was")
                down[change.slot] = (change.x, change.y)
            case .release:
                guard let last = down[change.slot] else { return Fuzz.require(false, "release of slot \(change.slot), which is up") }
                Fuzz.require(last == (change.x, change.y), "release at \(change.x),\(change.y), last reported at \(last)")
                down[change.slot] = nil
            }
            let event = transform.event(change, device: "/dev/input/event0")
            Fuzz.require((0..<screen.width).contains(event.point.x) && (0..<screen.height).contains(event.point.y),
                         "\(change) lands off the \(screen) screen at \(event.point)")
            if let passed = primary.filter(event) {
                switch passed.phase {
                case .press:
                    Fuzz.require(primaryDown == nil, "a second primary press")
                    primaryDown = passed.slot
                case .move:
                    Fuzz.require(primaryDown == passed.slot, "a primary move of another contact")
                case .release:
                    Fuzz.require(primaryDown == passed.slot, "a primary release of another contact")
                    primaryDown = nil
                }
            }
        }
    }
}

@main
enum Main {
    static func main() { Fuzz.main("FuzzTouchDecoder", fuzzTouchDecoder) }
}
