/// A message to publish.
public struct OutgoingMessage: Sendable, Equatable {
    public var topic: String
    public var payload: [UInt8]
    public var retained: Bool

    public init(topic: String, payload: [UInt8], retained: Bool) {
        self.topic = topic
        self.payload = payload
        self.retained = retained
    }
}

/// What waits to be published while the broker is away or slow: bounded, so a broker
/// that is down for a day costs a fixed amount of memory, never a blocked recorder.
///
/// A retained message replaces the one waiting for the same topic (only the newest state
/// matters); others queue in order, and beyond `limit` messages or `byteLimit` bytes the
/// oldest go, counted in `dropped`.
public struct MQTTOutbox: Sendable {
    public let limit: Int
    public let byteLimit: Int
    private var queue: [OutgoingMessage] = []
    private var head = 0
    public private(set) var bytes = 0
    public private(set) var dropped = 0

    public init(limit: Int, byteLimit: Int = 4 << 20) {
        self.limit = max(1, limit)
        self.byteLimit = max(1, byteLimit)
    }

    public var count: Int { queue.count - head }
    public var isEmpty: Bool { count == 0 }

    public mutating func append(_ message: OutgoingMessage) {
        if message.retained, let index = queue[head...].firstIndex(where: { $0.retained && $0.topic == message.topic }) {
            bytes += message.payload.count - queue[index].payload.count
            queue[index] = message
        } else {
            queue.append(message)
            bytes += message.payload.count
        }
        while count > limit || (bytes > byteLimit && count > 1) {
            bytes -= queue[head].payload.count
            head += 1
            dropped += 1
        }
        compact()
    }

    /// The oldest message, removed.
    public mutating func next() -> OutgoingMessage? {
        guard head < queue.count else { return nil }
        let message = queue[head]
        head += 1
        bytes -= message.payload.count
        compact()
        return message
    }

    /// Puts back a message the client could not take (it goes first again).
    public mutating func putBack(_ message: OutgoingMessage) {
        if head > 0 {
            head -= 1
            queue[head] = message
        } else {
            queue.insert(message, at: 0)
        }
        bytes += message.payload.count
    }

    private mutating func compact() {
        if head > 64 && head * 2 > queue.count {
            queue.removeFirst(head)
            head = 0
        }
    }
}

/// Waits between reconnection attempts: 1 s doubling to a ceiling, with a random part so
/// ten boards that lost the same broker do not all come back in the same instant; back to
/// the start once a connection has held.
public struct ReconnectBackoff: Sendable, Equatable {
    public let initial: Double
    public let ceiling: Double
    public private(set) var attempts = 0

    public init(initial: Double = 1, ceiling: Double = 60) {
        self.initial = max(0.01, initial)
        self.ceiling = max(self.initial, ceiling)
    }

    /// The wait before the next attempt; `unit` (0…1) is the random part.
    public mutating func nextDelay(unit: Double) -> Double {
        let exponent = min(attempts, 30)
        attempts += 1
        let base = min(ceiling, initial * Double(1 << exponent))
        let fraction = unit.isFinite ? min(max(unit, 0), 1) : 0.5
        return min(ceiling, base * (0.75 + 0.5 * fraction))
    }

    public mutating func reset() { attempts = 0 }
}
