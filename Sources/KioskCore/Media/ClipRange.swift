import Foundation

/// Parses a point in a recording: seconds ("1.5"), a duration as the other commands
/// take it ("1.5s", "2m", "1m30s"), or a clock reading ("hh:mm:ss.xx", "mm:ss").
/// Returns seconds, or nil if the text is none of these.
public func parseClipTime(_ text: String) -> Double? {
    let trimmed = text.trimmingCharacters(in: .whitespaces)
    guard trimmed.contains(":") else { return parseDuration(trimmed) }
    let fields = trimmed.split(separator: ":", omittingEmptySubsequences: false)
    guard fields.count == 2 || fields.count == 3 else { return nil }
    // Only the seconds field may have a fraction; minutes and seconds stay below 60 so
    // "1:75" is read as the typo it is rather than as 2:15.
    var total = 0.0
    for (position, field) in fields.enumerated() {
        let isSeconds = position == fields.count - 1
        let allowed: (Character) -> Bool = { $0.isASCIIDigit || (isSeconds && $0 == ".") }
        guard !field.isEmpty, field.allSatisfy(allowed), let value = Double(field), value.isFinite else { return nil }
        if position > 0 && value >= 60 { return nil }
        total = total * 60 + value
    }
    return total
}

/// The stretch of a recording to export, checked against the recording's length.
public struct ClipRange: Equatable, Sendable {
    /// Seconds from the start of the recording.
    public var start: Double
    /// Seconds from the start of the recording; after `start`.
    public var end: Double
    /// True when the asked end lay beyond the recording and was moved to its end.
    public var endWasClamped: Bool

    public var duration: Double { end - start }

    /// Why a range cannot be cut.
    public enum Problem: Error, Equatable, CustomStringConvertible {
        /// The start is not before the end.
        case emptyRange(from: Double, to: Double)
        /// The start lies at or beyond the recording's end.
        case startBeyondEnd(from: Double, length: Double)
        /// A time below zero or not a number.
        case invalidTime(Double)
        /// The recording's length is unknown or not a number.
        case unknownLength

        public var description: String {
            switch self {
            case let .emptyRange(from, to):
                "--from \(formatClipTime(from)) is not before --to \(formatClipTime(to)): give a --from earlier than --to"
            case let .startBeyondEnd(from, length):
                "--from \(formatClipTime(from)) is beyond the end of the recording (\(formatClipTime(length)) long): give an earlier --from"
            case let .invalidTime(value):
                "\(value) is not a time in the recording: use seconds from 0"
            case .unknownLength:
                "the recording's length cannot be read: the file is damaged (try `kioskcam salvage`)"
            }
        }
    }

    /// Checks `from`…`to` against a recording `length` seconds long. An end beyond the
    /// recording is moved to its end (and says so in `endWasClamped`): "to the end" is
    /// a common wish and the result is still what was asked for, all of it.
    /// - Throws: `Problem` for an empty or reversed range, a start at or beyond the end,
    ///   negative or non-finite times, or an unusable length.
    public init(from: Double, to: Double, length: Double) throws(Problem) {
        guard from.isFinite, from >= 0 else { throw .invalidTime(from) }
        guard to.isFinite, to >= 0 else { throw .invalidTime(to) }
        guard from < to else { throw .emptyRange(from: from, to: to) }
        guard length.isFinite, length > 0 else { throw .unknownLength }
        guard from < length else { throw .startBeyondEnd(from: from, length: length) }
        start = from
        end = min(to, length)
        endWasClamped = to > length
    }

    public init(start: Double, end: Double, endWasClamped: Bool) {
        self.start = start
        self.end = end
        self.endWasClamped = endWasClamped
    }
}

/// "1.5 s" for short times, "1:02:03.25" for long ones, to the hundredth: how the export
/// messages show times (finer digits would only show the jitter of capture times).
public func formatClipTime(_ seconds: Double) -> String {
    guard seconds.isFinite, abs(seconds) < 1e12 else { return "\(seconds)" }
    let hundredths = Int((seconds * 100).rounded())
    if abs(hundredths) < 6000 {
        let value = Double(hundredths) / 100
        return hundredths % 100 == 0 ? "\(hundredths / 100) s" : "\(value) s"
    }
    let hours = hundredths / 360_000, minutes = hundredths / 6000 % 60, secs = hundredths / 100 % 60, rest = hundredths % 100
    let clock = hours > 0 ? String(format: "%d:%02d:%02d", hours, minutes, secs) : String(format: "%d:%02d", minutes, secs)
    return rest == 0 ? clock : clock + String(format: ".%02d", rest)
}
