/// A least-recently-used cache bounded by a total cost (bytes of decoded thumbnails) and a
/// count: adding past either bound evicts the oldest entries and counts them, so memory
/// never grows with the size of the library.
public struct BoundedCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    public let maximumCost: Int
    public let maximumCount: Int
    public private(set) var totalCost = 0
    /// Entries evicted to stay within bounds, since the start.
    public private(set) var evictions = 0
    public private(set) var hits = 0
    public private(set) var misses = 0

    private var entries: [Key: (value: Value, cost: Int, use: UInt64)] = [:]
    private var clock: UInt64 = 0

    /// - Parameters:
    ///   - maximumCost: Total cost allowed (at least 1); a single entry costing more is not kept.
    ///   - maximumCount: Entries allowed (at least 1).
    public init(maximumCost: Int, maximumCount: Int) {
        self.maximumCost = max(1, maximumCost)
        self.maximumCount = max(1, maximumCount)
    }

    public var count: Int { entries.count }

    /// The value for `key`, marked as just used; nil (a miss) when absent.
    public mutating func value(for key: Key) -> Value? {
        guard var entry = entries[key] else {
            misses += 1
            return nil
        }
        hits += 1
        clock += 1
        entry.use = clock
        entries[key] = entry
        return entry.value
    }

    /// Whether `key` is held, without counting a use.
    public func contains(_ key: Key) -> Bool { entries[key] != nil }

    /// Keeps `value`, evicting the least recently used entries as needed.
    /// - Returns: false when `cost` alone is beyond `maximumCost` (nothing is kept).
    @discardableResult
    public mutating func insert(_ value: Value, for key: Key, cost: Int) -> Bool {
        let cost = max(0, cost)
        if let old = entries.removeValue(forKey: key) { totalCost -= old.cost }
        guard cost <= maximumCost else { return false }
        while !entries.isEmpty && (totalCost + cost > maximumCost || entries.count + 1 > maximumCount) {
            guard let oldest = entries.min(by: { $0.value.use < $1.value.use }) else { break }
            entries.removeValue(forKey: oldest.key)
            totalCost -= oldest.value.cost
            evictions += 1
        }
        clock += 1
        entries[key] = (value, cost, clock)
        totalCost += cost
        return true
    }

    public mutating func removeAll() {
        entries.removeAll()
        totalCost = 0
    }
}
