import XCTest
import KioskCore  // deliberately not @testable: these tests exercise only the public API

final class TOMLDocumentTests: XCTestCase {

    // MARK: Helpers

    private func parse(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> [TOMLEntry] {
        do {
            return try TOMLDocument(parsing: text).entries
        } catch {
            XCTFail("unexpected error: \(error)", file: file, line: line)
            return []
        }
    }

    private func value(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> TOMLValue? {
        let entries = parse(text, file: file, line: line)
        XCTAssertEqual(entries.count, 1, "expected exactly one entry", file: file, line: line)
        return entries.first?.value
    }

    /// Asserts that parsing fails at `expectedLine` (and column, if given) with a message containing every fragment.
    private func assertSyntaxError(
        _ text: String, line expectedLine: Int, column expectedColumn: Int? = nil, _ fragments: String...,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        do throws(TOMLSyntaxError) {
            let document = try TOMLDocument(parsing: text)
            XCTFail("expected a syntax error, got \(document.entries)", file: file, line: line)
        } catch {
            XCTAssertEqual(error.line, expectedLine, "wrong line in: \(error)", file: file, line: line)
            if let expectedColumn {
                XCTAssertEqual(error.column, expectedColumn, "wrong column in: \(error)", file: file, line: line)
            }
            for fragment in fragments {
                XCTAssertTrue(error.message.contains(fragment), "'\(error.message)' lacks '\(fragment)'", file: file, line: line)
            }
        }
    }

    // MARK: Documents, paths and lines

    func testEmptyDocument() {
        XCTAssertEqual(parse(""), [])
        XCTAssertEqual(parse("\n\n   \n\t\n"), [])
        XCTAssertEqual(parse("# only a comment\n\n# another"), [])
    }

    func testTablesAndDottedKeysProduceFullPathsAndLines() {
        let text = """
        name = "lobby"

        [camera]
        size = 1080
        lens.focal_mm = 35
        lens.aperture = 2.8

        [network.wifi]
        ssid = "kiosk"
        "quoted key" = true
        'literal key'.x = 1
        """
        let entries = parse(text)
        XCTAssertEqual(entries.map(\.dottedPath), [
            "name", "camera.size", "camera.lens.focal_mm", "camera.lens.aperture",
            "network.wifi.ssid", "network.wifi.quoted key", "network.wifi.literal key.x",
        ])
        XCTAssertEqual(entries.map(\.line), [1, 4, 5, 6, 9, 10, 11])
        XCTAssertEqual(entries[2].path, ["camera", "lens", "focal_mm"])
        XCTAssertEqual(entries[5], TOMLEntry(path: ["network", "wifi", "quoted key"], value: .boolean(true), line: 10))
    }

    func testHeadersAllowSpacesQuotedKeysAndSubtablesOfImplicitTables() {
        let entries = parse("[ a . \"b c\" ]\nx = 1\n[a]\ny = 2\n[a.d]\nz = 3")
        XCTAssertEqual(entries.map(\.dottedPath), ["a.b c.x", "a.y", "a.d.z"])
        XCTAssertEqual(entries.map(\.line), [2, 4, 6])
    }

    func testSubtableUnderDottedKeyTableIsAllowed() {
        let entries = parse("[fruit]\napple.color = \"red\"\n[fruit.apple.texture]\nsmooth = true")
        XCTAssertEqual(entries.map(\.dottedPath), ["fruit.apple.color", "fruit.apple.texture.smooth"])
    }

    func testCommentsEverywhere() {
        let text = """
        # leading comment
        [camera] # after a header
          # indented comment
        size = 4 # after a value
        name = "a # not a comment" # but this is
        raw = 'b # also not' #
        list = [ # after the bracket
            1, # after an element
            # on its own line
            2  # before the close
        ] # after the array
        """
        let entries = parse(text)
        XCTAssertEqual(entries.map(\.dottedPath), ["camera.size", "camera.name", "camera.raw", "camera.list"])
        XCTAssertEqual(entries.map(\.value), [
            .integer(4), .string("a # not a comment"), .string("b # also not"), .array([.integer(1), .integer(2)]),
        ])
        XCTAssertEqual(entries.map(\.line), [4, 5, 6, 7])
    }

    func testMultiLineArraysKeepLineNumbersOfLaterKeys() {
        let text = "ports = [\n  80,\n  443,\n]\nnext = [[1, 2], [\"a\"],\n[]]\nlast = 1"
        let entries = parse(text)
        XCTAssertEqual(entries.map(\.line), [1, 5, 7])
        XCTAssertEqual(entries[0].value, .array([.integer(80), .integer(443)]))
        XCTAssertEqual(entries[1].value, .array([.array([.integer(1), .integer(2)]), .array([.string("a")]), .array([])]))
    }

    func testWindowsLineEndingsAndByteOrderMark() {
        let entries = parse("\u{FEFF}a = 1\r\n[t]\r\nb = [\r\n 2,\r\n]\r\nc = 'x'\r\n")
        XCTAssertEqual(entries.map(\.dottedPath), ["a", "t.b", "t.c"])
        XCTAssertEqual(entries.map(\.line), [1, 3, 6])
        assertSyntaxError("a = 1\r\nb = \"open\r\n", line: 2, column: 5, "unterminated string")
    }

    // MARK: Value kinds

    func testStrings() {
        XCTAssertEqual(value(#"s = "plain""#), .string("plain"))
        XCTAssertEqual(value(#"s = """#), .string(""))
        XCTAssertEqual(value(#"s = "q\" b\\ n\n t\t r\r b\b f\f""#), .string("q\" b\\ n\n t\t r\r b\u{08} f\u{0C}"))
        XCTAssertEqual(value(#"s = "\u00E9\U0001F4F7""#), .string("é📷"))
        XCTAssertEqual(value(#"s = 'C:\path\n'"#), .string(#"C:\path\n"#))
        XCTAssertEqual(value("s = \"tab\tinside\""), .string("tab\tinside"))
        XCTAssertEqual(value("s = \"ünïcödé 日本\""), .string("ünïcödé 日本"))
    }

    func testIntegers() {
        XCTAssertEqual(value("n = 42"), .integer(42))
        XCTAssertEqual(value("n = +17"), .integer(17))
        XCTAssertEqual(value("n = -5"), .integer(-5))
        XCTAssertEqual(value("n = 0"), .integer(0))
        XCTAssertEqual(value("n = -0"), .integer(0))
        XCTAssertEqual(value("n = 1_000_000"), .integer(1_000_000))
        XCTAssertEqual(value("n = 0xDEAD_beef"), .integer(0xDEAD_BEEF))
        XCTAssertEqual(value("n = 0o755"), .integer(0o755))
        XCTAssertEqual(value("n = 0b1010"), .integer(10))
        XCTAssertEqual(value("n = 9223372036854775807"), .integer(.max))
        XCTAssertEqual(value("n = -9223372036854775808"), .integer(.min))
        XCTAssertEqual(value("n = 0x7FFFFFFFFFFFFFFF"), .integer(.max))
    }

    func testFloats() {
        XCTAssertEqual(value("f = 1.5"), .float(1.5))
        XCTAssertEqual(value("f = -0.25"), .float(-0.25))
        XCTAssertEqual(value("f = +3.0"), .float(3.0))
        XCTAssertEqual(value("f = 1e3"), .float(1000))
        XCTAssertEqual(value("f = 6.02e23"), .float(6.02e23))
        XCTAssertEqual(value("f = 1E-2"), .float(0.01))
        XCTAssertEqual(value("f = 2.5e+2"), .float(250))
        XCTAssertEqual(value("f = 1_000.000_1"), .float(1000.0001))
        XCTAssertEqual(value("f = 0.5"), .float(0.5))
    }

    func testBooleans() {
        XCTAssertEqual(value("b = true"), .boolean(true))
        XCTAssertEqual(value("b = false # off"), .boolean(false))
    }

    func testArrays() {
        XCTAssertEqual(value("a = []"), .array([]))
        XCTAssertEqual(value("a = [ 1 , 2 , 3 , ]"), .array([.integer(1), .integer(2), .integer(3)]))
        XCTAssertEqual(value("a = [\"x\", 'y', 1.5, true, [0x10]]"),
                       .array([.string("x"), .string("y"), .float(1.5), .boolean(true), .array([.integer(16)])]))
    }

    func testTypeNamesAndErrorDescription() {
        let values: [TOMLValue] = [.string(""), .integer(0), .float(0), .boolean(false), .array([])]
        XCTAssertEqual(values.map(\.typeName), ["string", "integer", "float", "boolean", "array"])
        XCTAssertEqual(TOMLSyntaxError(line: 7, column: 12, message: "unterminated string").description,
                       "line 7, column 12: unterminated string")
    }

    // MARK: Errors: keys and tables

    func testDuplicateKeyNamesKeyAndFirstLine() {
        assertSyntaxError("a = 1\n\nb = 2\na = 3", line: 4, column: 1, "duplicate key 'a'", "first defined on line 1")
        assertSyntaxError("a.b = 1\n# comment\na.b = 2", line: 3, column: 1, "duplicate key 'a.b'", "first defined on line 1")
    }

    func testDuplicateKeyInsideTableAndViaQuotingAndDottedKeys() {
        assertSyntaxError("[camera]\nsize = 1\n\"size\" = 2", line: 3, column: 1, "duplicate key 'camera.size'", "line 2")
        assertSyntaxError("[a]\nb.c = 1\n  b.c = 2", line: 3, column: 3, "duplicate key 'a.b.c'", "line 2")
        assertSyntaxError("x.y = 1\n[x]\n", line: 2, column: 1, "table [x] was already defined by dotted keys on line 1")
    }

    func testDuplicateTableHeader() {
        assertSyntaxError("[camera]\nsize = 1\n\n[camera]\n", line: 4, column: 1, "duplicate table [camera]", "first defined on line 1")
        assertSyntaxError("[a.b]\n[a]\n[a.b]", line: 3, column: 1, "duplicate table [a.b]", "line 1")
    }

    func testKeyRedefinedAsTable() {
        assertSyntaxError("camera = 1\n[camera]\n", line: 2, column: 1, "'camera' is already a value (line 1)", "cannot be redefined as a table")
        assertSyntaxError("[a]\nb = 1\n[a.b.c]", line: 3, "'a.b' is already a value (line 2)")
        assertSyntaxError("size = 1\nsize.width = 2", line: 2, column: 1, "'size' is already a value (line 1)")
    }

    func testTableRedefinedAsValue() {
        assertSyntaxError("[a.b]\nx = 1\n[a]\nb = 2", line: 4, column: 1, "'a.b' is already a table (line 1)", "cannot be assigned a value")
        assertSyntaxError("a.b.c = 1\na.b = 2", line: 2, "'a.b' is already a table (line 1)")
        assertSyntaxError("[a.b]\nx = 1\n[a]\nb.y = 2", line: 4, "table [a.b] was defined by a header on line 1", "dotted keys")
    }

    func testMissingEqualsAndMissingValue() {
        assertSyntaxError("a = 1\nport 8080", line: 2, column: 6, "expected '=' after key 'port'", "bare keys may contain only")
        assertSyntaxError("\n\nname", line: 3, column: 5, "missing '=' after key 'name'")
        assertSyntaxError("a =\n", line: 1, column: 4, "missing value after '=' for key 'a'")
        assertSyntaxError("[t]\na = # nothing", line: 2, column: 5, "missing value after '=' for key 't.a'")
    }

    func testInvalidKeys() {
        assertSyntaxError("\n= 1", line: 2, column: 1, "expected a key name, found '='")
        assertSyntaxError("größe = 1", line: 1, column: 3, "found 'ö'", "bare keys may contain only A-Z")
        assertSyntaxError("a. = 1", line: 1, column: 4, "expected a key name")
        assertSyntaxError("[]", line: 1, column: 2, "expected a key name, found ']'")
        assertSyntaxError("[camera\nsize = 1", line: 1, column: 8, "expected ']' to close the table header [camera]")
    }

    func testGarbageAfterValueOrHeader() {
        assertSyntaxError("a = 1\nb = 2 3", line: 2, column: 7, "unexpected '3' after the value of 'b'", "only a comment")
        assertSyntaxError("a = \"x\"y", line: 1, column: 8, "unexpected 'y'")
        assertSyntaxError("a = [1] 2", line: 1, column: 9, "unexpected '2'")
        assertSyntaxError("[t] x = 1", line: 1, column: 5, "unexpected 'x' after the table header")
    }

    // MARK: Errors: values

    func testUnterminatedStrings() {
        assertSyntaxError("a = 1\nname = \"lobby\n", line: 2, column: 8, "unterminated string")
        assertSyntaxError("name = 'lobby", line: 1, column: 8, "unterminated string")
        assertSyntaxError("a = 1\nname = \"abc\\\"", line: 2, column: 8, "unterminated string")
        assertSyntaxError("\"key = 1", line: 1, column: 1, "unterminated string")
    }

    func testInvalidEscapes() {
        assertSyntaxError("a = 1\nb = \"C:\\path\"", line: 2, column: 8, "invalid escape sequence '\\p'", "\\uXXXX")
        assertSyntaxError(#"b = "\u12""#, line: 1, column: 6, "exactly 4 hex digits")
        assertSyntaxError(#"b = "\UFFFFFFFF""#, line: 1, column: 6, "not a Unicode scalar")
        assertSyntaxError(#"b = "\uD800""#, line: 1, column: 6, "not a Unicode scalar")
        assertSyntaxError("b = \"end\\", line: 1, column: 9, "invalid escape")
        assertSyntaxError("b = \"bell\u{07}\"", line: 1, column: 10, "control character U+0007")
    }

    func testBadNumbers() {
        for bad in ["01", "1__0", "1_", "1.", "1.e5", "1e", "1e+", "0x", "+0xFF", "-0b1", "0xG1", "0o8",
                    "0b2", "1.2.3", "1e5e5", "00.5", "12abc", "--1", "1_000_", "0X1F"] {
            assertSyntaxError("x = 1\nn = \(bad)", line: 2, column: 5, "number '\(bad)'")
        }
    }

    func testIntegerAndFloatOverflowAreErrors() {
        assertSyntaxError("\nn = 9223372036854775808", line: 2, column: 5, "does not fit in 64 bits")
        assertSyntaxError("n = -9223372036854775809", line: 1, column: 5, "does not fit in 64 bits")
        assertSyntaxError("n = 0x8000000000000000", line: 1, column: 5, "does not fit in 64 bits")
        assertSyntaxError("n = 99999999999999999999999999", line: 1, column: 5, "does not fit in 64 bits")
        assertSyntaxError("f = 1e400", line: 1, column: 5, "out of range")
    }

    func testInvalidBareValues() {
        assertSyntaxError("\nmode = auto", line: 2, column: 8, "invalid value 'auto'", "quoted string")
        assertSyntaxError("b = True", line: 1, column: 5, "invalid value 'True'")
        assertSyntaxError("b = .5", line: 1, column: 5, "invalid value '.5'")
        assertSyntaxError("b = _1", line: 1, column: 5, "invalid value '_1'")
        assertSyntaxError("b = ,", line: 1, column: 5, "expected a value, found ','")
    }

    func testUnterminatedArray() {
        assertSyntaxError("a = 1\nports = [\n  80,\n  443\n", line: 2, column: 9, "unterminated array")
        assertSyntaxError("ports = [1, [2, 3]", line: 1, column: 9, "unterminated array")
        assertSyntaxError("ports = [ # comment ]", line: 1, column: 9, "unterminated array")
    }

    func testMalformedArrays() {
        assertSyntaxError("a = [1 2]", line: 1, column: 8, "expected ',' or ']'", "found '2'")
        assertSyntaxError("x = 0\nports = [1,\n2\nname = \"x\"", line: 4, column: 1, "expected ',' or ']'", "starts on line 2")
        assertSyntaxError("a = [1,,2]", line: 1, column: 8, "expected a value, found ','")
        assertSyntaxError("a = [,]", line: 1, column: 6, "expected a value")
    }

    func testDeeplyNestedArraysAreRejectedWithoutCrashing() {
        let deep = "a = " + String(repeating: "[", count: 100_000)
        assertSyntaxError(deep, line: 1, column: 37, "nesting arrays more than 32 levels deep is not supported")
        XCTAssertNotNil(value("a = " + String(repeating: "[", count: 32) + String(repeating: "]", count: 32)))
    }

    // MARK: Errors: unsupported TOML features

    func testUnsupportedFeaturesSaySo() {
        let notSupported = "is not supported by KioskCam's config reader"
        assertSyntaxError("a = 1\n[[cameras]]\nname = 'x'", line: 2, column: 1, "an array of tables", notSupported)
        assertSyntaxError("\nlens = { focal = 35 }", line: 2, column: 8, "an inline table", notSupported)
        assertSyntaxError("a = [1, {}]", line: 1, column: 9, "an inline table", notSupported)
        assertSyntaxError("\n\nmotd = \"\"\"\nhello\n\"\"\"", line: 3, column: 8, "a multi-line string", notSupported)
        assertSyntaxError("motd = '''raw'''", line: 1, column: 8, "a multi-line string", notSupported)
        assertSyntaxError("when = 1979-05-27", line: 1, column: 8, "a date-time", notSupported)
        assertSyntaxError("\nwhen = 1979-05-27T07:32:00Z", line: 2, column: 8, "a date-time", notSupported)
        assertSyntaxError("when = 1979-05-27 07:32:00", line: 1, column: 8, "a date-time", notSupported)
        assertSyntaxError("at = 07:32:00", line: 1, column: 6, "a date-time", notSupported)
        assertSyntaxError("f = inf", line: 1, column: 5, "'inf'", notSupported)
        assertSyntaxError("f = -nan", line: 1, column: 5, "'-nan'", notSupported)
    }
}
