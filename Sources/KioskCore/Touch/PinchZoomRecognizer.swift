/// Two fingers on the preview change the zoom; a double tap on it goes back to 1×; a
/// single tap (once the double tap's window has passed without a second) is handed out
/// by `singleTap(at:)` for tap-to-focus.
///
/// Fed every touch event of every contact (in logical screen pixels), it answers with
/// the zoom factor to ask for. The factor follows the ratio of the fingers' distance to
/// their distance when the second finger came down, times the zoom at that moment,
/// clamped to 1…`maximum`; the camera or the digital zoom ramps to it. Only presses
/// inside `area` (the preview) start a pinch or a tap, so the buttons stay buttons.
/// Pure: no clock but the events' own times.
public struct PinchZoomRecognizer: Sendable {
    /// The zoom the last answer asked for (1 until the first pinch).
    public private(set) var zoom: Double = 1
    public let maximum: Double
    public let area: ScreenRect
    /// A tap is a press and release this close in time and space…
    public static let tapNanoseconds: Int64 = 250_000_000
    public static let tapSlop: Double = 20
    /// …and a double tap two taps this close.
    public static let doubleTapNanoseconds: Int64 = 350_000_000
    public static let doubleTapDistance: Double = 40
    /// Answers smaller than this change are not worth a camera control write.
    public static let smallestStep = 0.02

    private struct Contact: Sendable {
        var slot: Int
        var start: (x: Double, y: Double)
        var now: (x: Double, y: Double)
        var pressed: MonotonicInstant
    }
    private var contacts: [Contact] = []
    /// Set while two fingers pinch: their distance and the zoom when the second came down.
    private var pinchStart: (distance: Double, zoom: Double)?
    /// True from the second finger down until every finger is up: no tap counts meanwhile.
    private var pinched = false
    /// The last single tap: where and when it ended.
    private var lastTap: (x: Double, y: Double, time: MonotonicInstant)?

    /// - Parameters:
    ///   - maximum: The largest zoom (the camera's, or the digital zoom's); at least 1.
    ///   - area: Where pinches and taps count: the preview.
    public init(maximum: Double, area: ScreenRect) {
        self.maximum = maximum.isFinite ? max(1, min(maximum, 100)) : 1
        self.area = area
    }

    /// The zoom asked for elsewhere (the control socket): the next pinch starts from it.
    public mutating func zoomChanged(to factor: Double) {
        guard factor.isFinite else { return }
        zoom = min(max(1, factor), maximum)
    }

    /// When the single tap waiting out the double tap's window counts; nil when none waits.
    public var singleTapDue: MonotonicInstant? {
        lastTap.map { $0.time.advanced(byNanoseconds: Self.doubleTapNanoseconds + 1_000_000) }
    }

    /// The single tap whose double-tap window has passed by `now`, handed out once: the
    /// first tap of a double tap never comes out here, nor does a tap that ended a pinch.
    public mutating func singleTap(at now: MonotonicInstant) -> ScreenPoint? {
        guard let due = singleTapDue, let last = lastTap, now >= due else { return nil }
        lastTap = nil
        return ScreenPoint(x: Int(last.x.rounded()), y: Int(last.y.rounded()))
    }

    /// Handles one touch event.
    /// - Returns: The zoom factor to ask for now, or nil when nothing changes.
    public mutating func handle(_ event: TouchEvent) -> Double? {
        let point = (x: Double(event.point.x), y: Double(event.point.y))
        switch event.phase {
        case .press:
            contacts.removeAll { $0.slot == event.slot }
            // A finger that lands off the preview takes no part (a button press), unless
            // it is the second finger of a pinch that began on the preview.
            guard contacts.count == 1 || area.contains(event.point) else { return nil }
            guard contacts.count < 2 else { return nil }
            contacts.append(Contact(slot: event.slot, start: point, now: point, pressed: event.time))
            if contacts.count == 2 {
                pinched = true
                lastTap = nil
                let distance = Self.distance(contacts[0].now, contacts[1].now)
                pinchStart = distance >= 1 ? (distance, zoom) : nil
            }
            return nil
        case .move:
            guard let index = contacts.firstIndex(where: { $0.slot == event.slot }) else { return nil }
            contacts[index].now = point
            guard contacts.count == 2, let start = pinchStart else { return nil }
            let ratio = Self.distance(contacts[0].now, contacts[1].now) / start.distance
            return ask(start.zoom * ratio)
        case .release:
            guard let index = contacts.firstIndex(where: { $0.slot == event.slot }) else { return nil }
            let contact = contacts.remove(at: index)
            pinchStart = nil
            if contacts.isEmpty {
                defer { pinched = false }
                if !pinched { return tap(contact, at: point, time: event.time) }
            }
            return nil
        }
    }

    /// A single finger's release: a tap when short and still; a second tap near the first
    /// goes back to 1×.
    private mutating func tap(_ contact: Contact, at point: (x: Double, y: Double), time: MonotonicInstant) -> Double? {
        let held = time.nanoseconds(since: contact.pressed)
        guard held >= 0, held <= Self.tapNanoseconds, Self.distance(contact.start, point) <= Self.tapSlop else {
            lastTap = nil
            return nil
        }
        if let last = lastTap, time.nanoseconds(since: last.time) <= Self.doubleTapNanoseconds,
           Self.distance((last.x, last.y), point) <= Self.doubleTapDistance {
            lastTap = nil
            guard zoom != 1 else { return nil }
            zoom = 1
            return 1
        }
        lastTap = (point.x, point.y, time)
        return nil
    }

    /// Clamps and remembers a new zoom; nil when it moved less than `smallestStep`.
    private mutating func ask(_ factor: Double) -> Double? {
        guard factor.isFinite else { return nil }
        let clamped = min(max(1, factor), maximum)
        guard abs(clamped - zoom) >= Self.smallestStep || (clamped != zoom && (clamped == 1 || clamped == maximum)) else { return nil }
        zoom = clamped
        return clamped
    }

    private static func distance(_ a: (x: Double, y: Double), _ b: (x: Double, y: Double)) -> Double {
        ((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y)).squareRoot()
    }
}
