import CEvdev
import Glibc
import KioskCore
import SystemPackage

/// One open evdev node (`/dev/input/eventN`) read through libevdev.
///
/// A class with one owner (`TouchPanel`, discovery, or a test): the descriptor and the
/// libevdev context are freed exactly once, by `close()` or else by `deinit`. Not for
/// use from several threads at once.
public final class EvdevDevice {
    /// The device node, e.g. "/dev/input/event2".
    public let path: String
    /// What the device can do, read once at open.
    public let capabilities: InputDeviceCapabilities
    /// The descriptor to poll for input (POLLIN; POLLERR/POLLHUP once it is unplugged).
    public var fileDescriptor: CInt { descriptor.rawValue }
    /// Whether event times are on CLOCK_MONOTONIC (EVIOCSCLOCKID worked; kernels ≥ 3.4).
    public let monotonicTimes: Bool

    private let descriptor: FileDescriptor
    private var handle: OpaquePointer?

    /// Opens `path` read-only, non-blocking and close-on-exec, and asks the kernel for
    /// monotonic event times (evdev's default is CLOCK_REALTIME, which jumps with NTP).
    /// - Throws: `InputError` with `.noSuchDevice` (ENOENT), `.permissionDenied` (EACCES:
    ///   join the `input` group), `.notAnInputDevice` (not an evdev node), `.unplugged`.
    public init(path: String) throws(InputError) {
        self.path = path
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.open(FilePath(path), .readOnly, options: [.nonBlocking, .closeOnExec])
        } catch let errno as Errno {
            throw InputError(path: path, operation: "open", errno: errno)
        } catch {
            throw InputError(.system, path: path, operation: "open", detail: "\(error)")
        }
        var handle: OpaquePointer?
        let rc = libevdev_new_from_fd(descriptor.rawValue, &handle)
        guard rc == 0, let handle else {
            try? descriptor.close()
            throw InputError(path: path, operation: "libevdev_new_from_fd", errno: Errno(rawValue: -rc),
                             detail: "not an evdev device")
        }
        self.descriptor = descriptor
        self.handle = handle
        monotonicTimes = libevdev_set_clock_id(handle, kc_clock_monotonic) == 0
        capabilities = Self.readCapabilities(handle)
    }

    deinit { close() }

    /// Frees libevdev's context and closes the descriptor; later calls do nothing.
    ///
    /// The corresponding C functions are `libevdev_free` and `close`.
    public func close() {
        guard let handle else { return }
        libevdev_free(handle)
        self.handle = nil
        try? descriptor.close()
    }

    public var isClosed: Bool { handle == nil }

    static func readCapabilities(_ handle: OpaquePointer) -> InputDeviceCapabilities {
        var caps = InputDeviceCapabilities(name: libevdev_get_name(handle).map { String(cString: $0) } ?? "",
                                           phys: libevdev_get_phys(handle).map { String(cString: $0) } ?? "")
        for property in [EvdevCode.INPUT_PROP_POINTER, EvdevCode.INPUT_PROP_DIRECT]
        where libevdev_has_property(handle, UInt32(property)) == 1 {
            caps.properties.insert(property)
        }
        if libevdev_has_event_type(handle, UInt32(EvdevCode.EV_KEY)) == 1 {
            for code in 0...EvdevCode.KEY_MAX where libevdev_has_event_code(handle, UInt32(EvdevCode.EV_KEY), UInt32(code)) == 1 {
                caps.keys.insert(code)
            }
        }
        if libevdev_has_event_type(handle, UInt32(EvdevCode.EV_ABS)) == 1 {
            for code in 0...EvdevCode.ABS_MAX {
                guard libevdev_has_event_code(handle, UInt32(EvdevCode.EV_ABS), UInt32(code)) == 1,
                      let info = libevdev_get_abs_info(handle, UInt32(code)) else { continue }
                caps.absoluteAxes[code] = AxisRange(minimum: info.pointee.minimum, maximum: info.pointee.maximum)
            }
        }
        caps.hasRelativeAxes = libevdev_has_event_type(handle, UInt32(EvdevCode.EV_REL)) == 1
        return caps
    }

    /// What one `readEvents()` call produced, in order.
    public enum ReadItem: Sendable, Equatable {
        case event(RawInputEvent)
        /// Events were lost (SYN_DROPPED); libevdev has re-read the device, and this is
        /// its state now. Feed it to `TouchDecoder.resync(state:time:)`.
        case resynced(TouchDeviceSnapshot, MonotonicInstant)
    }

    /// Reads everything that is waiting (at most `limit` events, so one busy device
    /// cannot starve the others), without blocking.
    ///
    /// When the kernel's buffer overflowed (SYN_DROPPED), libevdev's sync events are
    /// drained and a `.resynced` item carries the state they lead to.
    /// - Returns: Events and resyncs; empty when nothing was waiting.
    /// - Throws: `InputError` `.unplugged` (ENODEV) when the device has gone — only once
    ///   nothing read before it is left to return.
    public func readEvents(limit: Int = 4096) throws(InputError) -> [ReadItem] {
        guard let handle else { throw InputError(.system, path: path, operation: "read", errno: .badFileDescriptor, detail: "closed") }
        var items: [ReadItem] = []
        var event = input_event()
        while items.count < limit {
            let rc = libevdev_next_event(handle, kc_evdev_read_flag_normal, &event)
            if rc == kc_evdev_read_status_success {
                items.append(.event(Self.raw(event)))
            } else if rc == kc_evdev_read_status_sync {
                let dropped = Self.raw(event)
                items.append(.event(dropped))
                // Drain the sync events: libevdev's own state is what we read back.
                var drained = 0
                while drained < 100_000 {
                    let sync = libevdev_next_event(handle, kc_evdev_read_flag_sync, &event)
                    guard sync == kc_evdev_read_status_sync else { break }
                    drained += 1
                }
                items.append(.resynced(snapshot(), dropped.time))
            } else if rc == -EAGAIN {
                break
            } else if rc == -EINTR {
                continue
            } else {
                if !items.isEmpty { break }   // hand over what was read; the next call reports it
                let errno = Errno(rawValue: -rc)
                throw InputError(path: path, operation: "libevdev_next_event", errno: errno,
                                 detail: errno == .operationNotSupportedByDevice ? "the device went away" : nil)
            }
        }
        return items
    }

    /// The device's current state as libevdev knows it (all slots, BTN_TOUCH, ABS_X/Y, pressure).
    public func snapshot() -> TouchDeviceSnapshot {
        guard let handle else { return TouchDeviceSnapshot() }
        var state = TouchDeviceSnapshot()
        let slotCount = libevdev_get_num_slots(handle)
        if slotCount > 0 {
            state.currentSlot = Int(libevdev_get_current_slot(handle))
            state.slots = (0..<UInt32(slotCount)).map { slot in
                TouchDeviceSnapshot.Slot(
                    trackingID: libevdev_get_slot_value(handle, slot, UInt32(EvdevCode.ABS_MT_TRACKING_ID)),
                    x: libevdev_get_slot_value(handle, slot, UInt32(EvdevCode.ABS_MT_POSITION_X)),
                    y: libevdev_get_slot_value(handle, slot, UInt32(EvdevCode.ABS_MT_POSITION_Y)))
            }
        }
        state.touching = libevdev_get_event_value(handle, UInt32(EvdevCode.EV_KEY), UInt32(EvdevCode.BTN_TOUCH)) != 0
        state.x = libevdev_get_event_value(handle, UInt32(EvdevCode.EV_ABS), UInt32(EvdevCode.ABS_X))
        state.y = libevdev_get_event_value(handle, UInt32(EvdevCode.EV_ABS), UInt32(EvdevCode.ABS_Y))
        state.pressure = libevdev_get_event_value(handle, UInt32(EvdevCode.EV_ABS), UInt32(EvdevCode.ABS_PRESSURE))
        return state
    }

    static func raw(_ event: input_event) -> RawInputEvent {
        var event = event
        return RawInputEvent(type: event.type, code: event.code, value: event.value,
                             time: MonotonicInstant(nanoseconds: kc_evdev_event_nanoseconds(&event)))
    }
}
