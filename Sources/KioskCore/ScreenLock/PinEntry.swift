/// The digits typed on the PIN pad so far: "del" removes the last one,
/// the fourth completes the entry.
///
/// Only the count is ever shown; `description` never reveals the digits, so the
/// entry can be logged by accident without leaking the PIN.
public struct PinEntry: Sendable, Equatable, CustomStringConvertible {
    /// PINs have exactly this many digits.
    public static let length = 4

    private var digits: [Character] = []

    public init() {}

    /// Digits typed so far.
    public var count: Int { digits.count }
    public var isEmpty: Bool { digits.isEmpty }

    /// Applies one key.
    /// - Returns: The complete PIN when this key was the fourth digit (the entry is then
    ///   empty again), else nil.
    public mutating func press(_ key: PinKey) -> String? {
        switch key {
        case .delete:
            if !digits.isEmpty { digits.removeLast() }
            return nil
        case .digit(let value):
            guard (0...9).contains(value), let character = String(value).first else { return nil }
            digits.append(character)
            guard digits.count == Self.length else { return nil }
            defer { digits.removeAll() }
            return String(digits)
        }
    }

    public mutating func clear() {
        digits.removeAll()
    }

    public var description: String { "PIN entry with \(digits.count) of \(Self.length) digits" }
}
