import Foundation
import XCTest
@testable import KioskCore

final class QRCodeTests: XCTestCase {
    /// Byte-mode capacity of level M for versions 1…10 (ISO/IEC 18004 Table 7).
    static let byteCapacityM = [14, 26, 42, 62, 84, 106, 122, 152, 180, 213]

    private func string(length: Int, seed: String = "https://kiosk.local:8443/pair?t=") -> String {
        var s = seed
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        var i = 0
        while s.utf8.count < length { s.append(alphabet[i % alphabet.count]); i += 7 }
        return String(s.prefix(length))
    }

    // MARK: Real decoding with zbarimg

    /// Renders the symbol as a binary PGM with a 4-module quiet zone, runs
    /// zbarimg on it and returns what it decoded (nil on failure).
    /// `-Sbinary` makes zbar print the raw payload bytes; without it zbar 0.23
    /// guesses a legacy encoding for non-ASCII bytes (UTF-8 "ü" came back as "羹").
    private func decode(_ code: QRCode, scale: Int = 5, file: StaticString = #filePath, line: UInt = #line) -> String? {
        let zbar = "/usr/bin/zbarimg"
        guard FileManager.default.isExecutableFile(atPath: zbar) else {
            XCTFail("\(zbar) not found — install zbar-tools (apt-get install -y zbar-tools)", file: file, line: line)
            return nil
        }
        let quiet = 4
        let side = (code.size + 2 * quiet) * scale
        var pixels = Array("P5\n\(side) \(side)\n255\n".utf8)
        for py in 0..<side {
            for px in 0..<side {
                let dark = code.isDark(x: px / scale - quiet, y: py / scale - quiet)
                pixels.append(dark ? 0 : 255)
            }
        }
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("qr-\(UUID().uuidString).pgm")
        defer { try? FileManager.default.removeItem(at: url) }
        do {
            try Data(pixels).write(to: url)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: zbar)
            process.arguments = ["--raw", "-q", "-Sbinary", url.path]
            process.standardError = FileHandle.nullDevice
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            let output = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                XCTFail("zbarimg exit status \(process.terminationStatus)", file: file, line: line)
                return nil
            }
            var text = String(decoding: output, as: UTF8.self)
            if text.hasSuffix("\n") { text.removeLast() }
            return text
        } catch {
            XCTFail("running zbarimg failed: \(error)", file: file, line: line)
            return nil
        }
    }

    private func assertRoundTrip(_ text: String, minVersion: Int = 1, file: StaticString = #filePath, line: UInt = #line) {
        guard let code = QRCode(text: text) else { return XCTFail("encoding failed for \(text)", file: file, line: line) }
        XCTAssertGreaterThanOrEqual(code.version, minVersion, file: file, line: line)
        XCTAssertEqual(decode(code, file: file, line: line), text, "version \(code.version) mask \(code.mask)", file: file, line: line)
    }

    func testDecodesLanURL() {
        let code = QRCode(text: "https://192.168.1.20:8443/")
        XCTAssertEqual(code?.version, 2)
        assertRoundTrip("https://192.168.1.20:8443/")
    }

    func testDecodesSingleCharacter() {
        XCTAssertEqual(QRCode(text: "x")?.version, 1)
        assertRoundTrip("x")
    }

    func testDecodesVersion5URL() {
        assertRoundTrip("https://kiosk-camera.local:8443/pair?token=3f9a1c77e2b84d0aa1f0c9e2", minVersion: 5)
    }

    func testDecodesVersion7WithVersionInformation() {
        let url = "https://kiosk-camera.local:8443/pair?token=3f9a1c77e2b84d0aa1f0c9e2&device=front-door&session=7b1e44c2a9d0&lang=en-GB"
        assertRoundTrip(url, minVersion: 7)
    }

    func testDecodesExactVersion10Capacity() {
        let text = string(length: 213)
        XCTAssertEqual(QRCode(text: text)?.version, 10)
        assertRoundTrip(text, minVersion: 10)
    }

    func testRejectsOneByteOverVersion10Capacity() {
        XCTAssertNil(QRCode(text: string(length: 214)))
        XCTAssertNil(QRCode(text: string(length: 5000)))
    }

    func testDecodesNonASCIIUTF8() {
        assertRoundTrip("https://kamera-küche.local:8443/")
        assertRoundTrip("Grüße 👋 カメラ")
    }

    func testEveryVersionAtFullCapacityDecodes() {
        for (index, capacity) in Self.byteCapacityM.enumerated() {
            let text = string(length: capacity)
            guard let code = QRCode(text: text) else { XCTFail("v\(index + 1) capacity \(capacity) should fit"); continue }
            XCTAssertEqual(code.version, index + 1)
            XCTAssertEqual(decode(code), text, "version \(code.version)")
            if index < 9 { XCTAssertEqual(QRCode(text: string(length: capacity + 1))?.version, index + 2) }
        }
    }

    func testEveryMaskDecodes() {
        for version in [1, 7] {
            let text = string(length: Self.byteCapacityM[version - 1])
            for mask in 0..<8 {
                guard let code = QRCode(bytes: Array(text.utf8), forcedMask: mask) else { XCTFail("mask \(mask)"); continue }
                XCTAssertEqual(code.mask, mask)
                XCTAssertEqual(code.version, version)
                XCTAssertEqual(decode(code, scale: 4), text, "version \(version) mask \(mask)")
            }
        }
    }

    // MARK: Known values (no zbar needed)

    func testSizes() {
        for (index, capacity) in Self.byteCapacityM.enumerated() {
            let code = QRCode(text: string(length: capacity))
            XCTAssertEqual(code?.size, 17 + 4 * (index + 1))
        }
        XCTAssertEqual(QRCode(text: "a")?.size, 21)
        XCTAssertEqual(QRCode(text: string(length: 213))?.size, 57)
    }

    func testFinderPatternsTimingAndDarkModule() throws {
        let code = try XCTUnwrap(QRCode(text: "https://192.168.1.20:8443/"))
        let n = code.size
        for (ox, oy) in [(0, 0), (n - 7, 0), (0, n - 7)] {
            for dy in -1...7 {
                for dx in -1...7 {
                    let ring = max(abs(dx - 3), abs(dy - 3))  // 4 = separator
                    XCTAssertEqual(code.isDark(x: ox + dx, y: oy + dy), ring != 2 && ring != 4, "finder at \(ox),\(oy)")
                }
            }
        }
        for i in 8..<(n - 8) {
            XCTAssertEqual(code.isDark(x: i, y: 6), i % 2 == 0)
            XCTAssertEqual(code.isDark(x: 6, y: i), i % 2 == 0)
        }
        XCTAssertTrue(code.isDark(x: 8, y: n - 8))
        XCTAssertFalse(code.isDark(x: -1, y: 0))
        XCTAssertFalse(code.isDark(x: n, y: n))
    }

    func testFormatInformationMatchesStandardTable() throws {
        // Level M rows of the format information table (ISO/IEC 18004 Annex C).
        let table = [0b101010000010010, 0b101000100100101, 0b101111001111100, 0b101101101001011,
                     0b100010111111001, 0b100000011001110, 0b100111110010111, 0b100101010100000]
        for mask in 0..<8 { XCTAssertEqual(QRCode.formatBits(mask: mask), table[mask], "mask \(mask)") }

        // And the symbol carries it: row 8 left of the finder holds bits 14…9.
        let code = try XCTUnwrap(QRCode(text: "hello"))
        let bits = table[code.mask]
        for i in 9..<15 { XCTAssertEqual(code.isDark(x: 14 - i, y: 8), (bits >> i) & 1 == 1) }
        for i in 0..<8 { XCTAssertEqual(code.isDark(x: code.size - 1 - i, y: 8), (bits >> i) & 1 == 1) }
    }

    func testVersionInformationMatchesStandardTable() {
        // Annex D values for versions 7…10.
        XCTAssertEqual(QRCode.versionBits(version: 7), 0x07C94)
        XCTAssertEqual(QRCode.versionBits(version: 8), 0x085BC)
        XCTAssertEqual(QRCode.versionBits(version: 9), 0x09A99)
        XCTAssertEqual(QRCode.versionBits(version: 10), 0x0A4D3)
    }

    func testHelloWorld1MCodewords() {
        // The well-known "HELLO WORLD" 1-M example (alphanumeric mode): its data
        // codewords and the 10 error correction codewords that follow.
        let data: [UInt8] = [32, 91, 11, 120, 209, 114, 220, 77, 67, 64, 236, 17, 236, 17, 236, 17]
        XCTAssertEqual(QRCode.reedSolomon(data, ecCount: 10), [196, 35, 39, 119, 235, 215, 231, 226, 93, 23])
    }

    func testByteModeBitStream() {
        // "Hi" in 1-M: 0100 | 00000010 | 01001000 01101001 | 0000 | pad.
        XCTAssertEqual(QRCode.dataCodewords(Array("Hi".utf8), version: 1),
                       [0x40, 0x24, 0x86, 0x90, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11])
    }

    func testReedSolomonSyndromesAreZero() {
        // A valid codeword polynomial has roots α⁰…αⁿ⁻¹.
        for ecCount in [10, 16, 18, 22, 24, 26] {
            let data = (0..<40).map { UInt8(truncatingIfNeeded: $0 * 37 + ecCount) }
            let block = data + QRCode.reedSolomon(data, ecCount: ecCount)
            for i in 0..<ecCount {
                let x = QRCode.GF.exp[i]
                let value = block.reduce(UInt8(0)) { QRCode.GF.multiply($0, x) ^ $1 }
                XCTAssertEqual(value, 0, "ec \(ecCount) syndrome \(i)")
            }
        }
    }

    func testTotalCodewordsFillTheSymbol() {
        // Data + EC codewords per version must equal the standard's totals.
        let totals = [26, 44, 70, 100, 134, 172, 196, 242, 292, 346]
        for (index, layout) in QRCode.layouts.enumerated() {
            XCTAssertEqual(layout.dataCodewords + layout.ecPerBlock * layout.dataPerBlock.count, totals[index])
        }
    }

    func testEmptyAndOddInputsNeverTrap() {
        XCTAssertEqual(QRCode(text: "")?.version, 1)
        XCTAssertNotNil(QRCode(text: "\u{0}\u{FFFD}"))
        XCTAssertNil(QRCode(bytes: [1, 2, 3], forcedMask: 8))
        XCTAssertEqual(QRCode(text: "abc"), QRCode(text: "abc"))
    }
}
