import Foundation

/// Parses human durations: "10s", "1.5s", "250ms", "5m", "1h", "1h30m", or a bare
/// number of seconds. Returns seconds, or nil if the text is not a duration.
public func parseDuration(_ text: String) -> Double? {
    let units: [(String, Double)] = [("ms", 0.001), ("h", 3600), ("m", 60), ("s", 1)]
    var rest = Substring(text.trimmingCharacters(in: .whitespaces).lowercased())
    guard !rest.isEmpty else { return nil }
    // Only plain decimal digits: Double("0x10") would read hex, Double("1e3") exponents.
    if rest.allSatisfy({ $0.isASCIIDigit || $0 == "." }) {
        guard let bare = Double(rest), bare.isFinite else { return nil }
        return bare
    }
    var total = 0.0
    var usedUnits: Set<String> = []
    while !rest.isEmpty {
        let number = rest.prefix { $0.isASCIIDigit || $0 == "." }
        guard !number.isEmpty, let value = Double(number) else { return nil }
        rest = rest.dropFirst(number.count)
        guard let (unit, scale) = units.first(where: { rest.hasPrefix($0.0) }) else { return nil }
        rest = rest.dropFirst(unit.count)
        guard usedUnits.insert(unit).inserted else { return nil }  // "1h1h" is a typo, not 2 h
        total += value * scale
    }
    return total
}
