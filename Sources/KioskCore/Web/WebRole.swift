/// What a web user may do. A viewer watches, browses and downloads; an admin also records,
/// takes stills, triggers events, exports, deletes and changes settings.
public enum WebRole: String, Sendable, Codable, CaseIterable, Comparable {
    case viewer, admin

    /// Whether this role may do what `required` allows.
    public func allows(_ required: WebRole) -> Bool { self >= required }

    public static func < (a: WebRole, b: WebRole) -> Bool { a.rank < b.rank }

    private var rank: Int { self == .viewer ? 0 : 1 }
}

/// A web user's name: 1–32 characters from `a-z A-Z 0-9 . _ -`, so that it is safe in a
/// log line, a file and a cookie without escaping.
public enum WebUserName {
    public static let maximumLength = 32

    /// Whether `name` is a user name this appliance accepts.
    public static func isValid(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (1...maximumLength).contains(bytes.count) else { return false }
        return bytes.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
    }

    /// What a valid name looks like, for error messages.
    public static let rule = "1 to 32 letters, digits, dots, underscores or hyphens"
}
