/// The text burned into the picture (`overlay.text`): strftime conversions for the
/// frame's capture time, and fields in braces.
///
/// Conversions: `%Y %y %m %d %e %H %I %M %S %p %j %a %A %b %B %Z %z %F %T %%`; fields:
/// `{device_name}`, `{device_id}`, `{frame}` (the camera's frame number) and `{event}`
/// (the event's label while a clip records, else nothing). Written here rather than
/// with the C library's strftime so that the result does not depend on the process's
/// locale and is tested on any clock.
public struct OverlayText: Sendable, Equatable {
    public let template: String
    private let parts: [Part]

    enum Part: Sendable, Equatable {
        case literal(String)
        case conversion(Character)
        case field(Field)
    }

    public enum Field: String, Sendable, CaseIterable {
        case deviceName = "device_name"
        case deviceID = "device_id"
        case frame
        case event
    }

    static let conversions: Set<Character> = ["Y", "y", "m", "d", "e", "H", "I", "M", "S", "p", "j", "a", "A", "b", "B", "Z", "z", "F", "T", "%"]

    /// What the fields hold for one frame.
    public struct Values: Sendable, Equatable {
        public var deviceName: String
        public var deviceID: String
        public var frame: Int
        public var event: String

        public init(deviceName: String = "", deviceID: String = "", frame: Int = 0, event: String = "") {
            self.deviceName = deviceName
            self.deviceID = deviceID
            self.frame = frame
            self.event = event
        }
    }

    /// - Throws: `ConfigurationProblem`-style text naming the first unknown conversion or field.
    public init(_ template: String) throws(OverlayTextError) {
        self.template = template
        var parts: [Part] = []
        var literal = ""
        var index = template.startIndex
        func flush() {
            if !literal.isEmpty { parts.append(.literal(literal)) }
            literal = ""
        }
        while index < template.endIndex {
            let character = template[index]
            if character == "%" {
                let next = template.index(after: index)
                guard next < template.endIndex, Self.conversions.contains(template[next]) else {
                    let shown = next < template.endIndex ? "%\(template[next])" : "a lone % at the end"
                    throw OverlayTextError("\(shown) is not a conversion the overlay knows; use %Y %m %d %H %M %S (and %y %e %I %p %j %a %A %b %B %Z %z %F %T), %% for a percent sign")
                }
                flush()
                parts.append(.conversion(template[next]))
                index = template.index(after: next)
            } else if character == "{" {
                guard let close = template[index...].firstIndex(of: "}") else {
                    throw OverlayTextError("a { without its }; fields are {device_name}, {device_id}, {frame} and {event}")
                }
                let name = String(template[template.index(after: index)..<close])
                guard let field = Field(rawValue: name) else {
                    throw OverlayTextError("{\(name)} is not a field the overlay knows; use {device_name}, {device_id}, {frame} or {event}")
                }
                flush()
                parts.append(.field(field))
                index = template.index(after: close)
            } else {
                guard !character.isNewline, character.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }) else {
                    throw OverlayTextError("the overlay is one line: no line breaks or control characters")
                }
                literal.append(character)
                index = template.index(after: index)
            }
        }
        flush()
        self.parts = parts
    }

    public var isEmpty: Bool { parts.isEmpty }
    /// Whether the text changes with every frame ({frame}), not only every second.
    public var usesFrameNumber: Bool { parts.contains(.field(.frame)) }

    /// The text for a frame captured at `unixSeconds`, in a zone `utcOffsetSeconds` east
    /// of UTC named `zoneName`.
    public func render(unixSeconds: Int64, utcOffsetSeconds: Int, zoneName: String, values: Values) -> String {
        // Years 1 to 9999, offsets within a day: no arithmetic below can overflow.
        let offset = min(max(utcOffsetSeconds, -86_400), 86_400)
        let seconds = min(max(unixSeconds, -62_135_596_800), 253_402_300_799)
        let time = CivilTime(unixSeconds: seconds + Int64(offset))
        var text = ""
        for part in parts {
            switch part {
            case .literal(let literal): text += literal
            case .field(.deviceName): text += values.deviceName
            case .field(.deviceID): text += values.deviceID
            case .field(.frame): text += String(values.frame)
            case .field(.event): text += values.event
            case .conversion(let code): text += time.format(code, utcOffsetSeconds: offset, zoneName: zoneName)
            }
        }
        return text
    }
}

public struct OverlayTextError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// A wall-clock time broken into its calendar fields (proleptic Gregorian; the date from
/// `CalendarDate`, which retention counts days with).
struct CivilTime: Equatable {
    var year: Int64, month: Int, day: Int, hour: Int, minute: Int, second: Int
    var weekday: Int     // 0 = Sunday
    var dayOfYear: Int   // 1…366

    init(unixSeconds: Int64) {
        let days = unixSeconds >= 0 ? unixSeconds / 86_400 : (unixSeconds - 86_399) / 86_400
        let secondOfDay = Int(unixSeconds - days * 86_400)
        hour = secondOfDay / 3600
        minute = secondOfDay / 60 % 60
        second = secondOfDay % 60
        weekday = Int(((days % 7) + 11) % 7)   // 1970-01-01 was a Thursday
        let date = CalendarDate(daysSince1970: Int(days))
        (year, month, day) = (Int64(date.year), date.month, date.day)
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
        let before = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334][month - 1]
        dayOfYear = before + day + (leap && month > 2 ? 1 : 0)
    }

    static let weekdays = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
    static let months = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
                         "November", "December"]

    func format(_ code: Character, utcOffsetSeconds: Int, zoneName: String) -> String {
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : String(value) }
        switch code {
        case "Y": return String(year)
        case "y": return two(Int(((year % 100) + 100) % 100))
        case "m": return two(month)
        case "d": return two(day)
        case "e": return day < 10 ? " \(day)" : String(day)
        case "H": return two(hour)
        case "I": return two(hour % 12 == 0 ? 12 : hour % 12)
        case "M": return two(minute)
        case "S": return two(second)
        case "p": return hour < 12 ? "AM" : "PM"
        case "j": return dayOfYear < 10 ? "00\(dayOfYear)" : dayOfYear < 100 ? "0\(dayOfYear)" : String(dayOfYear)
        case "a": return String(Self.weekdays[weekday].prefix(3))
        case "A": return Self.weekdays[weekday]
        case "b": return String(Self.months[month - 1].prefix(3))
        case "B": return Self.months[month - 1]
        case "Z": return zoneName
        case "z":
            let magnitude = abs(utcOffsetSeconds) / 60
            return (utcOffsetSeconds < 0 ? "-" : "+") + two(magnitude / 60) + two(magnitude % 60)
        case "F": return "\(year)-\(two(month))-\(two(day))"
        case "T": return "\(two(hour)):\(two(minute)):\(two(second))"
        default: return "%"
        }
    }
}
