/// A KioskCam config file, read as a flat list of `key = value` assignments.
///
/// KioskCam uses its own reader instead of a TOML library because every config error must name
/// the key and the exact line, and the available libraries drop line numbers. It accepts a strict
/// subset of TOML 1.0 and rejects everything else with an error that says so, rather than guessing.
///
/// Over 400 lines as one thing: the parser of that subset (strings, numbers, arrays,
/// tables, dates) and its errors, each naming its line.
public struct TOMLDocument: Sendable {
    /// Every key = value assignment in file order, with its full dotted path ("camera.size" for key `size` under `[camera]`).
    public var entries: [TOMLEntry]

    public init(parsing text: String) throws(TOMLSyntaxError) {
        var parser = TOMLParser(text: text)
        entries = try parser.parseDocument()
    }
}

/// One assignment, kept with its line so later validation can point at it.
public struct TOMLEntry: Sendable, Equatable {
    public var path: [String]
    public var value: TOMLValue
    /// 1-based line of the key.
    public var line: Int
    public var dottedPath: String { path.joined(separator: ".") }

    public init(path: [String], value: TOMLValue, line: Int) {
        self.path = path
        self.value = value
        self.line = line
    }
}

public enum TOMLValue: Sendable, Equatable {
    case string(String), integer(Int64), float(Double), boolean(Bool), array([TOMLValue])

    /// Human name of the value's type for error messages: "string", "integer", "float", "boolean", "array".
    public var typeName: String {
        switch self {
        case .string: "string"
        case .integer: "integer"
        case .float: "float"
        case .boolean: "boolean"
        case .array: "array"
        }
    }
}

/// A config file that is not valid (supported) TOML; line and column are 1-based.
public struct TOMLSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    public var line: Int
    public var column: Int
    public var message: String
    public var description: String { "line \(line), column \(column): \(message)" }

    public init(line: Int, column: Int, message: String) {
        self.line = line
        self.column = column
        self.message = message
    }
}

// MARK: - Parser

/// Single-pass recursive-descent parser over Unicode scalars, so columns are stable and every
/// lookup is bounds-checked (`current`/`peek` return nil past the end instead of trapping).
private struct TOMLParser {
    private struct Position { var line: Int; var column: Int }

    /// How a table came to exist matters: TOML forbids re-opening a table with a header if it was
    /// created by dotted keys, and forbids extending a header-defined table with dotted keys.
    private enum TableOrigin { case header, impliedByHeader, dottedKeys }
    private struct TableRecord { var line: Int; var origin: TableOrigin }

    /// Deep enough for any real config, shallow enough that hostile input cannot overflow the stack.
    private static let maxArrayDepth = 32
    private static let unsupported = "is not supported by KioskCam's config reader"
    private static let bareKeyRule = "bare keys may contain only A-Z, a-z, 0-9, '_' and '-' (quote other names)"

    private let scalars: [Unicode.Scalar]
    private var index = 0
    private var line = 1
    private var lineStart = 0
    private var arrayDepth = 0
    private var currentTable: [String] = []
    private var entries: [TOMLEntry] = []
    private var valueLines: [[String]: Int] = [:]
    private var tables: [[String]: TableRecord] = [:]

    init(text: String) {
        scalars = Array(text.unicodeScalars)
        if scalars.first == "\u{FEFF}" { index = 1; lineStart = 1 }  // editors on some kiosks add a BOM
    }

    mutating func parseDocument() throws(TOMLSyntaxError) -> [TOMLEntry] {
        while true {
            skipSpaces()
            if current == nil { return entries }
            if consumeNewline() { continue }
            if current == "#" { skipComment(); continue }
            if current == "[" {
                try parseTableHeader()
                try expectLineEnd(after: "the table header")
            } else {
                let key = try parseKeyValue()
                try expectLineEnd(after: "the value of '\(key)'")
            }
        }
    }

    // MARK: Lines and tables

    private mutating func parseTableHeader() throws(TOMLSyntaxError) {
        let start = position
        index += 1
        if current == "[" {
            throw fail("an array of tables ([[...]]) \(Self.unsupported); use a separate [table] per item", at: start)
        }
        skipSpaces()
        let path = try parseKey()
        guard current == "]" else {
            throw fail("expected ']' to close the table header [\(dotted(path))], found \(describe(current))", at: position)
        }
        index += 1
        try defineTable(path, at: start)
        currentTable = path
    }

    private mutating func defineTable(_ path: [String], at start: Position) throws(TOMLSyntaxError) {
        for end in path.indices {
            let prefix = Array(path[...end])
            try ensureNotAValue(prefix, start: start)
            if end < path.count - 1, tables[prefix] == nil {
                tables[prefix] = TableRecord(line: start.line, origin: .impliedByHeader)
            }
        }
        switch tables[path] {
        case let record? where record.origin == .header:
            throw fail("duplicate table [\(dotted(path))] (first defined on line \(record.line))", at: start)
        case let record? where record.origin == .dottedKeys:
            throw fail("table [\(dotted(path))] was already defined by dotted keys on line \(record.line); a header cannot reopen it", at: start)
        default:
            tables[path] = TableRecord(line: start.line, origin: .header)
        }
    }

    /// Parses `key = value` and returns the key's full dotted path for later messages.
    private mutating func parseKeyValue() throws(TOMLSyntaxError) -> String {
        let start = position
        let key = try parseKey()
        guard current == "=" else {
            if isAtLineEnd { throw fail("missing '=' after key '\(dotted(key))'", at: position) }
            throw fail("expected '=' after key '\(dotted(key))', found \(describe(current)); \(Self.bareKeyRule)", at: position)
        }
        index += 1
        skipSpaces()
        let path = currentTable + key
        if isAtLineEnd || current == "#" {
            throw fail("missing value after '=' for key '\(dotted(path))'", at: position)
        }
        try recordValue(at: path, keyLength: key.count, start: start)
        let value = try parseValue()
        entries.append(TOMLEntry(path: path, value: value, line: start.line))
        return dotted(path)
    }

    private mutating func recordValue(at path: [String], keyLength: Int, start: Position) throws(TOMLSyntaxError) {
        // Intermediate tables created by the dotted part of the key (`a.b` in `a.b.c = 1`).
        for end in path.indices.dropLast() where end >= path.count - keyLength {
            let prefix = Array(path[...end])
            try ensureNotAValue(prefix, start: start)
            switch tables[prefix] {
            case nil: tables[prefix] = TableRecord(line: start.line, origin: .dottedKeys)
            case let record? where record.origin != .dottedKeys:
                throw fail("table [\(dotted(prefix))] was defined by a header on line \(record.line) and cannot be extended with dotted keys", at: start)
            default: break
            }
        }
        if let firstLine = valueLines[path] {
            throw fail("duplicate key '\(dotted(path))' (first defined on line \(firstLine))", at: start)
        }
        if let table = tables[path] {
            throw fail("'\(dotted(path))' is already a table (line \(table.line)) and cannot be assigned a value", at: start)
        }
        valueLines[path] = start.line
    }

    /// A table path may not pass through a key that already holds a value (`a = 1` then `[a.b]`).
    private func ensureNotAValue(_ tablePath: [String], start: Position) throws(TOMLSyntaxError) {
        guard let valueLine = valueLines[tablePath] else { return }
        throw fail("'\(dotted(tablePath))' is already a value (line \(valueLine)) and cannot be redefined as a table", at: start)
    }

    private mutating func expectLineEnd(after what: String) throws(TOMLSyntaxError) {
        skipSpaces()
        skipComment()
        if current == nil || consumeNewline() { return }
        throw fail("unexpected \(describe(current)) after \(what); only a comment (#) may follow on the same line", at: position)
    }

    // MARK: Keys and strings

    /// Parses a possibly dotted key (`a`, `a.b`, `"x y".z`) and the spaces after it.
    private mutating func parseKey() throws(TOMLSyntaxError) -> [String] {
        var parts = [try parseSimpleKey()]
        skipSpaces()
        while current == "." {
            index += 1
            skipSpaces()
            parts.append(try parseSimpleKey())
            skipSpaces()
        }
        return parts
    }

    private mutating func parseSimpleKey() throws(TOMLSyntaxError) -> String {
        if current == "\"" || current == "'" { return try parseString() }
        let start = position
        var name = ""
        while let scalar = current, isBareKeyScalar(scalar) {
            name.unicodeScalars.append(scalar)
            index += 1
        }
        guard name.isEmpty else { return name }
        throw fail("expected a key name, found \(describe(current)); \(Self.bareKeyRule)", at: start)
    }

    /// Parses a single-line basic ("...") or literal ('...') string; the current scalar is the quote.
    private mutating func parseString() throws(TOMLSyntaxError) -> String {
        let start = position
        guard let quote = current else { throw fail("expected a string", at: start) }
        if peek(1) == quote && peek(2) == quote {
            throw fail("a multi-line string (\(quote)\(quote)\(quote)) \(Self.unsupported); put the text on one line and use \\n for line breaks", at: start)
        }
        index += 1
        var result = ""
        while true {
            guard let scalar = current, !isAtLineEnd else {
                throw fail("unterminated string: add the closing \(quote) before the end of the line", at: start)
            }
            let here = position
            index += 1
            if scalar == quote { return result }
            if scalar == "\\" && quote == "\"" {
                result.unicodeScalars.append(try parseEscape(at: here))
            } else if (scalar.value < 0x20 && scalar != "\t") || scalar.value == 0x7F {
                throw fail("control character \(describe(scalar)) is not allowed in a string; use an escape such as \\t", at: here)
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
    }

    /// Decodes the escape after a backslash (already consumed) at `backslash`.
    private mutating func parseEscape(at backslash: Position) throws(TOMLSyntaxError) -> Unicode.Scalar {
        let allowed = "allowed escapes are \\\" \\\\ \\n \\t \\r \\b \\f \\uXXXX and \\UXXXXXXXX"
        guard let code = current, !isAtLineEnd else {
            throw fail("invalid escape: '\\' at the end of the line; \(allowed)", at: backslash)
        }
        index += 1
        switch code {
        case "\"": return "\""
        case "\\": return "\\"
        case "n": return "\n"
        case "t": return "\t"
        case "r": return "\r"
        case "b": return "\u{08}"
        case "f": return "\u{0C}"
        case "u", "U":
            let digitCount = code == "u" ? 4 : 8
            var value: UInt32 = 0
            for _ in 0..<digitCount {
                guard let scalar = current, let digit = digitValue(Character(scalar)) else {
                    throw fail("invalid escape: \\\(code) must be followed by exactly \(digitCount) hex digits", at: backslash)
                }
                value = value * 16 + UInt32(digit)
                index += 1
            }
            guard let scalar = Unicode.Scalar(value) else {
                throw fail("invalid escape: \\\(code) value \(hex(value)) is not a Unicode scalar", at: backslash)
            }
            return scalar
        default:
            throw fail("invalid escape sequence '\\\(code)'; \(allowed)", at: backslash)
        }
    }

    // MARK: Values

    private mutating func parseValue() throws(TOMLSyntaxError) -> TOMLValue {
        let start = position
        switch current {
        case "\"", "'": return .string(try parseString())
        case "[": return .array(try parseArray())
        case "{": throw fail("an inline table ({...}) \(Self.unsupported); use a [table] section instead", at: start)
        default: break
        }
        var token = ""
        while let scalar = current, !" \t,]#\r\n".unicodeScalars.contains(scalar) {
            token.unicodeScalars.append(scalar)
            index += 1
        }
        switch token {
        case "": throw fail("expected a value, found \(describe(current))", at: start)
        case "true": return .boolean(true)
        case "false": return .boolean(false)
        case "inf", "+inf", "-inf", "nan", "+nan", "-nan":
            throw fail("'\(token)' \(Self.unsupported); use a finite number", at: start)
        default: break
        }
        guard let first = token.unicodeScalars.first, "0123456789+-".unicodeScalars.contains(first) else {
            throw fail("invalid value '\(token)'; expected a quoted string, a number, true/false, or an array", at: start)
        }
        if looksLikeDateTime(token) {
            throw fail("a date-time (\(token)) \(Self.unsupported); use a quoted string", at: start)
        }
        return try parseNumber(token, at: start)
    }

    private mutating func parseArray() throws(TOMLSyntaxError) -> [TOMLValue] {
        let start = position
        guard arrayDepth < Self.maxArrayDepth else {
            throw fail("nesting arrays more than \(Self.maxArrayDepth) levels deep \(Self.unsupported)", at: start)
        }
        arrayDepth += 1
        defer { arrayDepth -= 1 }
        index += 1
        var elements: [TOMLValue] = []
        while true {
            try skipArrayFiller(arrayStart: start)
            if current == "]" { index += 1; return elements }
            elements.append(try parseValue())
            try skipArrayFiller(arrayStart: start)
            switch current {
            case ",": index += 1
            case "]": index += 1; return elements
            default:
                throw fail("expected ',' or ']' after an array element, found \(describe(current)) (the array starts on line \(start.line))", at: position)
            }
        }
    }

    /// Arrays may span lines and contain comments; running out of input inside one is the only way to leave it unclosed.
    private mutating func skipArrayFiller(arrayStart: Position) throws(TOMLSyntaxError) {
        while true {
            skipSpaces()
            skipComment()
            if consumeNewline() { continue }
            if current == nil { throw fail("unterminated array: missing ']' for the array that starts here", at: arrayStart) }
            return
        }
    }

    private func parseNumber(_ token: String, at start: Position) throws(TOMLSyntaxError) -> TOMLValue {
        let invalid = fail("invalid number '\(token)'; expected an integer like 42, -7, 1_000 or 0xFF, or a float like 1.5 or 6.02e23", at: start)
        var body = Substring(token)
        let isNegative = body.first == "-"
        if body.first == "+" || body.first == "-" { body = body.dropFirst() }
        for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] where body.hasPrefix(prefix) {
            guard body.count == token.count else { throw invalid }  // TOML forbids signs on 0x/0o/0b
            return .integer(try parseInteger(body.dropFirst(2), radix: radix, isNegative: false, token: token, at: start))
        }
        let exponentStart = body.firstIndex { $0 == "e" || $0 == "E" }
        let mantissa = body[..<(exponentStart ?? body.endIndex)]
        let dot = mantissa.firstIndex(of: ".")
        let integerPart = mantissa[..<(dot ?? mantissa.endIndex)]
        guard isDigitRun(integerPart, radix: 10), integerPart.count == 1 || integerPart.first != "0" else { throw invalid }
        if exponentStart == nil && dot == nil {
            return .integer(try parseInteger(integerPart, radix: 10, isNegative: isNegative, token: token, at: start))
        }
        if let dot, !isDigitRun(mantissa[mantissa.index(after: dot)...], radix: 10) { throw invalid }
        if let exponentStart {
            var exponent = body[body.index(after: exponentStart)...]
            if exponent.first == "+" || exponent.first == "-" { exponent = exponent.dropFirst() }
            guard isDigitRun(exponent, radix: 10) else { throw invalid }
        }
        guard let value = Double(token.filter { $0 != "_" }), value.isFinite else {
            throw fail("float '\(token)' is out of range for a 64-bit float", at: start)
        }
        return .float(value)
    }

    /// Accumulates with the sign applied so Int64.min parses, and reports overflow instead of trapping.
    private func parseInteger(_ digits: Substring, radix: Int, isNegative: Bool, token: String, at start: Position) throws(TOMLSyntaxError) -> Int64 {
        var value: Int64 = 0
        guard isDigitRun(digits, radix: radix) else {
            throw fail("invalid number '\(token)'; digits must be 0-9 (or hex/octal/binary after 0x/0o/0b), with '_' only between digits", at: start)
        }
        for character in digits {
            guard let digit = digitValue(character) else { continue }  // skips the '_' separators
            let (shifted, shiftOverflow) = value.multipliedReportingOverflow(by: Int64(radix))
            let (next, addOverflow) = shifted.addingReportingOverflow(isNegative ? -Int64(digit) : Int64(digit))
            guard !shiftOverflow, !addOverflow else {
                throw fail("integer '\(token)' does not fit in 64 bits (allowed range \(Int64.min) to \(Int64.max))", at: start)
            }
            value = next
        }
        return value
    }

    // MARK: Scanning helpers

    private var position: Position { Position(line: line, column: index - lineStart + 1) }
    private var current: Unicode.Scalar? { peek(0) }
    private var isAtLineEnd: Bool { current == nil || current == "\n" || (current == "\r" && peek(1) == "\n") }

    private func peek(_ offset: Int) -> Unicode.Scalar? {
        index + offset < scalars.count ? scalars[index + offset] : nil
    }

    private mutating func skipSpaces() {
        while current == " " || current == "\t" { index += 1 }
    }

    private mutating func skipComment() {
        guard current == "#" else { return }
        while !isAtLineEnd { index += 1 }
    }

    /// Consumes "\n" or "\r\n" and advances the line counter; returns false if not at a line break.
    private mutating func consumeNewline() -> Bool {
        if current == "\r" && peek(1) == "\n" { index += 1 }
        guard current == "\n" else { return false }
        index += 1
        line += 1
        lineStart = index
        return true
    }

    private func fail(_ message: String, at location: Position) -> TOMLSyntaxError {
        TOMLSyntaxError(line: location.line, column: location.column, message: message)
    }
}

// MARK: - Character classes

private func isBareKeyScalar(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar {
    case "A"..."Z", "a"..."z", "0"..."9", "_", "-": true
    default: false
    }
}

/// ASCII-only on purpose: Character.hexDigitValue also accepts fullwidth digits.
private func digitValue(_ character: Character) -> Int? {
    guard let ascii = character.asciiValue else { return nil }
    switch ascii {
    case 48...57: return Int(ascii) - 48   // 0-9
    case 65...70: return Int(ascii) - 55   // A-F
    case 97...102: return Int(ascii) - 87  // a-f
    default: return nil
    }
}

/// Digits of `radix` with single underscores only between digits ("1_000", not "_1", "1__0" or "1_").
private func isDigitRun(_ run: Substring, radix: Int) -> Bool {
    var previousWasDigit = false
    for character in run {
        if character == "_" {
            guard previousWasDigit else { return false }
            previousWasDigit = false
        } else {
            guard let digit = digitValue(character), digit < radix else { return false }
            previousWasDigit = true
        }
    }
    return previousWasDigit
}

/// Matches the start of TOML dates ("1979-05-27") and times ("07:32:00") so they get a clear "not supported" error.
private func looksLikeDateTime(_ token: String) -> Bool {
    let scalars = Array(token.unicodeScalars)
    func digits(_ count: Int, then separator: Unicode.Scalar) -> Bool {
        scalars.count > count && scalars[count] == separator
            && scalars[..<count].allSatisfy { ("0"..."9").contains($0) }
    }
    return digits(4, then: "-") || digits(2, then: ":")
}

private func dotted(_ path: [String]) -> String { path.joined(separator: ".") }

private func hex(_ value: UInt32) -> String {
    let digits = String(value, radix: 16, uppercase: true)
    return "U+" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
}

/// Names a scalar readably in messages, spelling out invisible ones.
private func describe(_ scalar: Unicode.Scalar?) -> String {
    guard let scalar else { return "end of file" }
    if scalar == "\n" || scalar == "\r" { return "end of line" }
    if scalar.value < 0x20 || scalar.value == 0x7F || scalar.properties.isWhitespace { return hex(scalar.value) }
    return "'\(scalar)'"
}
