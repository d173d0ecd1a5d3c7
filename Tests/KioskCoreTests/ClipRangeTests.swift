import XCTest
@testable import KioskCore

final class ClipRangeTests: XCTestCase {
    func testClipTimeForms() {
        let cases: [(String, Double)] = [
            ("1.5", 1.5), ("0", 0), ("1.5s", 1.5), ("2m", 120), ("250ms", 0.25), ("1m30s", 90),
            ("00:00:01.50", 1.5), ("1:02:03.25", 3723.25), ("02:03", 123), ("0:59.5", 59.5), (" 0:01 ", 1),
        ]
        for (text, seconds) in cases {
            guard let parsed = parseClipTime(text) else { XCTFail("'\(text)' was rejected"); continue }
            XCTAssertEqual(parsed, seconds, accuracy: 1e-9, "'\(text)'")
        }
    }

    func testClipTimeRejects() {
        for text in ["", "abc", "1:75", "1:2:3:4", ":30", "1:", "-1", "1.5.5", "0x10", "1e3", "1:-2", "1.5:00", "nan", "1:00:60"] {
            XCTAssertNil(parseClipTime(text), "'\(text)' should be rejected")
        }
    }

    func testRangeInsideTheRecording() throws {
        let range = try ClipRange(from: 1, to: 3, length: 6)
        XCTAssertEqual(range, ClipRange(start: 1, end: 3, endWasClamped: false))
        XCTAssertEqual(range.duration, 2)
    }

    func testEndBeyondTheRecordingIsClampedAndSaysSo() throws {
        let range = try ClipRange(from: 4, to: 100, length: 6)
        XCTAssertEqual(range, ClipRange(start: 4, end: 6, endWasClamped: true))
    }

    func testBadRanges() {
        XCTAssertThrowsError(try ClipRange(from: 3, to: 1, length: 6)) { error in
            XCTAssertEqual(error as? ClipRange.Problem, .emptyRange(from: 3, to: 1))
            XCTAssertTrue("\(error)".contains("give a --from earlier than --to"), "\(error)")
        }
        XCTAssertThrowsError(try ClipRange(from: 2, to: 2, length: 6)) {
            XCTAssertEqual($0 as? ClipRange.Problem, .emptyRange(from: 2, to: 2))
        }
        XCTAssertThrowsError(try ClipRange(from: 7, to: 9, length: 6)) {
            XCTAssertEqual($0 as? ClipRange.Problem, .startBeyondEnd(from: 7, length: 6))
        }
        XCTAssertThrowsError(try ClipRange(from: -1, to: 2, length: 6)) {
            XCTAssertEqual($0 as? ClipRange.Problem, .invalidTime(-1))
        }
        XCTAssertThrowsError(try ClipRange(from: 0, to: .infinity, length: 6)) {
            XCTAssertEqual($0 as? ClipRange.Problem, .invalidTime(.infinity))
        }
        for length in [0, -1, Double.nan] {
            XCTAssertThrowsError(try ClipRange(from: 0, to: 1, length: length)) {
                XCTAssertEqual($0 as? ClipRange.Problem, .unknownLength)
            }
        }
    }

    func testFormatClipTime() {
        XCTAssertEqual(formatClipTime(2), "2 s")
        XCTAssertEqual(formatClipTime(1.5), "1.5 s")
        XCTAssertEqual(formatClipTime(62.25), "1:02.25")
        XCTAssertEqual(formatClipTime(0.99997), "1 s")
        XCTAssertEqual(formatClipTime(0.501), "0.5 s")
        XCTAssertEqual(formatClipTime(3723), "1:02:03")
    }

    func testWAVHeader() throws {
        let header = try XCTUnwrap(WAVHeader.pcm16(sampleRate: 48_000, channels: 1, frames: 48_000))
        XCTAssertEqual(header.count, WAVHeader.size)
        XCTAssertEqual(Array(header[0..<4]), Array("RIFF".utf8))
        XCTAssertEqual(Array(header[8..<16]), Array("WAVEfmt ".utf8))
        func le32(_ at: Int) -> Int { (0..<4).reduce(0) { $0 | Int(header[at + $1]) << (8 * $1) } }
        func le16(_ at: Int) -> Int { Int(header[at]) | Int(header[at + 1]) << 8 }
        XCTAssertEqual(le32(4), 36 + 96_000)
        XCTAssertEqual(le16(20), 1)        // PCM
        XCTAssertEqual(le16(22), 1)        // channels
        XCTAssertEqual(le32(24), 48_000)   // rate
        XCTAssertEqual(le32(28), 96_000)   // bytes per second
        XCTAssertEqual(le16(32), 2)        // block align
        XCTAssertEqual(le16(34), 16)       // bits
        XCTAssertEqual(Array(header[36..<40]), Array("data".utf8))
        XCTAssertEqual(le32(40), 96_000)
        XCTAssertNil(WAVHeader.pcm16(sampleRate: 0, channels: 1, frames: 1))
        XCTAssertNil(WAVHeader.pcm16(sampleRate: 48_000, channels: 1, frames: Int.max / 2))
        XCTAssertNil(WAVHeader.pcm16(sampleRate: 48_000, channels: 1, frames: -1))
        XCTAssertEqual(WAVHeader.pcm16Sample(1.5), 32767)
        XCTAssertEqual(WAVHeader.pcm16Sample(-1), -32767)
        XCTAssertEqual(WAVHeader.pcm16Sample(.nan), 0)
    }
}
