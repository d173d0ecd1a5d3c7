/// Keeps only the primary contact's events: the finger that went down while no other
/// was down, until it lifts. The UI is driven by one finger; a second finger resting on
/// the panel must not press buttons.
public struct PrimaryTouchFilter: Sendable {
    /// The primary contact: device and slot.
    private var primary: (device: String, slot: Int)?

    public init() {}

    /// The event if it belongs to the primary contact (a press when none is down starts one).
    public mutating func filter(_ event: TouchEvent) -> TouchEvent? {
        if let current = primary {
            guard current.device == event.device, current.slot == event.slot else { return nil }
            if event.phase == .release { primary = nil }
            return event
        }
        guard event.phase == .press else { return nil }
        primary = (event.device, event.slot)
        return event
    }
}
