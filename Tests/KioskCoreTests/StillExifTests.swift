import KioskCore
import XCTest

/// The EXIF block of stills, read back byte by byte as a TIFF reader would; no trap on
/// any device id or any bytes given as a JPEG. (KioskMediaTests' JPEG test reads a real
/// still's tags back with ffprobe.)
final class StillExifTests: XCTestCase {
    private let exif = StillExif(taken: LocalTimestamp(year: 2026, month: 11, day: 24, hour: 10, minute: 55, second: 7),
                                 utcOffsetMinutes: 60, deviceID: "3f2a9c1e-0000-4000-8000-00000000abcd", software: "kioskcam 1.0")

    /// A small TIFF reader: tag → raw value bytes (ASCII without its NUL), from one IFD.
    private func readIFD(_ tiff: [UInt8], at offset: Int) -> [UInt16: [UInt8]]? {
        func u16(_ at: Int) -> Int? { at + 2 <= tiff.count ? Int(tiff[at]) << 8 | Int(tiff[at + 1]) : nil }
        func u32(_ at: Int) -> Int? { guard let high = u16(at), let low = u16(at + 2) else { return nil }; return high << 16 | low }
        guard let count = u16(offset) else { return nil }
        var tags: [UInt16: [UInt8]] = [:]
        var previous = -1
        for index in 0..<count {
            let entry = offset + 2 + index * 12
            guard let tag = u16(entry), let type = u16(entry + 2), let n = u32(entry + 4) else { return nil }
            XCTAssertGreaterThan(tag, previous, "tags in ascending order")
            previous = tag
            let size = [2: 1, 3: 2, 4: 4, 7: 1][type].map { $0 * n } ?? -1
            guard size >= 0 else { return nil }
            let start = size <= 4 ? entry + 8 : (u32(entry + 8) ?? Int.max)
            guard start + size <= tiff.count else { return nil }
            if size > 4 { XCTAssertEqual(start % 2, 0, "values at even offsets") }
            var value = Array(tiff[start..<start + size])
            if type == 2 { XCTAssertEqual(value.last, 0); value.removeLast() }
            tags[UInt16(tag)] = value
        }
        return tags
    }

    func testTheSegmentHoldsTimeDeviceAndOrientation() throws {
        let segment = exif.app1Segment
        XCTAssertEqual(Array(segment.prefix(2)), [0xFF, 0xE1])
        XCTAssertEqual(Int(segment[2]) << 8 | Int(segment[3]), segment.count - 2)
        XCTAssertEqual(Array(segment[4..<10]), Array("Exif".utf8) + [0, 0])
        let tiff = Array(segment[10...])
        XCTAssertEqual(Array(tiff.prefix(8)), [0x4D, 0x4D, 0, 0x2A, 0, 0, 0, 8])
        let ifd0 = try XCTUnwrap(readIFD(tiff, at: 8))
        XCTAssertEqual(ifd0[0x010F].map { String(decoding: $0, as: UTF8.self) }, "KioskCam")
        XCTAssertEqual(ifd0[0x010E].map { String(decoding: $0, as: UTF8.self) }, "kioskcam device 3f2a9c1e-0000-4000-8000-00000000abcd")
        XCTAssertEqual(ifd0[0x0112], [0, 1], "orientation 1: the pixels are already turned")
        XCTAssertEqual(ifd0[0x0131].map { String(decoding: $0, as: UTF8.self) }, "kioskcam 1.0")
        XCTAssertEqual(ifd0[0x0132].map { String(decoding: $0, as: UTF8.self) }, "2026:11:24 10:55:07")
        let pointer = try XCTUnwrap(ifd0[0x8769])
        let exifOffset = pointer.reduce(0) { $0 << 8 | Int($1) }
        let sub = try XCTUnwrap(readIFD(tiff, at: exifOffset))
        XCTAssertEqual(sub[0x9000], Array("0232".utf8))
        XCTAssertEqual(sub[0x9003].map { String(decoding: $0, as: UTF8.self) }, "2026:11:24 10:55:07")
        XCTAssertEqual(sub[0x9011].map { String(decoding: $0, as: UTF8.self) }, "+01:00")
        XCTAssertEqual(sub[0xA431].map { String(decoding: $0, as: UTF8.self) }, "3f2a9c1e-0000-4000-8000-00000000abcd")
    }

    func testInsertedRightAfterTheStartOfImageReplacingAnOldBlock() throws {
        let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x04, 0x4A, 0x46, 0xFF, 0xD9]
        let with = try XCTUnwrap(exif.inserted(into: jpeg))
        XCTAssertEqual(with, [0xFF, 0xD8] + exif.app1Segment + Array(jpeg[2...]))
        var later = exif
        later.taken.second = 8
        XCTAssertEqual(later.inserted(into: with), [0xFF, 0xD8] + later.app1Segment + Array(jpeg[2...]), "one EXIF block, the new one")
        XCTAssertNil(exif.inserted(into: Array("not a jpeg".utf8)))
        XCTAssertNil(exif.inserted(into: [0xFF, 0xD8, 0xFF, 0xE1, 0xFF, 0xFF] + Array("Exif".utf8) + [0, 0]), "a torn block")
    }

    func testAnyDeviceIDOrOffsetGivesAValidBlock() throws {
        var odd = exif
        odd.deviceID = "ü\u{0}\n" + String(repeating: "x", count: 500)
        odd.utcOffsetMinutes = 100_000
        odd.software = ""
        let tiff = Array(odd.app1Segment[10...])
        let ifd0 = try XCTUnwrap(readIFD(tiff, at: 8))
        XCTAssertEqual(ifd0[0x010E]?.count, "kioskcam device ".count + 64, "printable ASCII, 64 characters at most")
        XCTAssertNil(ifd0[0x0131])
        XCTAssertEqual(StillExif(taken: exif.taken, orientation: 99).orientation, 1)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let bytes = [0xFF, 0xD8] + (0..<Int.random(in: 0...24, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            _ = exif.inserted(into: bytes)
        }
    }
}
