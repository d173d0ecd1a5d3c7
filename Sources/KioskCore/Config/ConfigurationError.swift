/// A configuration problem, told the way a person editing the file needs it:
/// which file, which line, which key, what was wrong and what is allowed.
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    public var file: String?
    public var line: Int?
    public var key: String?
    public var message: String

    public init(file: String? = nil, line: Int? = nil, key: String? = nil, message: String) {
        self.file = file
        self.line = line
        self.key = key
        self.message = message
    }

    public var description: String {
        var location = file ?? "configuration"
        if let line { location += " line \(line)" }
        if let key { location += " (\(key))" }
        return location + ": " + message
    }
}
