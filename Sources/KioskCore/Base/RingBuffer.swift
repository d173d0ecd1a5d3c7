/// A fixed-capacity FIFO that never reallocates after `init`.
struct RingBuffer<Element> {
    private var slots: [Element?]
    private var head = 0
    private(set) var count = 0

    init(capacity: Int) { slots = Array(repeating: nil, count: max(capacity, 1)) }

    var capacity: Int { slots.count }
    var isEmpty: Bool { count == 0 }
    var isFull: Bool { count == slots.count }
    var first: Element? { count == 0 ? nil : slots[head] }

    /// Appends; the caller must have made room.
    mutating func append(_ element: Element) {
        precondition(!isFull, "RingBuffer.append on a full buffer is a programming error")
        slots[(head + count) % slots.count] = element
        count += 1
    }

    /// Empties it; the elements are released.
    mutating func removeAll() {
        while popFirst() != nil {}
    }

    mutating func popFirst() -> Element? {
        guard count > 0 else { return nil }
        let element = slots[head]
        slots[head] = nil
        head = (head + 1) % slots.count
        count -= 1
        return element
    }
}

extension RingBuffer: Sendable where Element: Sendable {}
