@testable import KioskCore
import XCTest

/// The scan reads sizes from files a crash tore: any value must end the scan, never trap.
final class FragmentedMP4ScanTests: XCTestCase {
    private func box(_ type: String, payload: Int) -> [UInt8] {
        let size = UInt32(8 + payload)
        return [UInt8(size >> 24), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)]
            + Array(type.utf8) + [UInt8](repeating: 0, count: payload)
    }

    private func largeBox(_ type: String, size: UInt64) -> [UInt8] {
        [0, 0, 0, 1] + Array(type.utf8) + (0..<8).map { UInt8(size >> (56 - 8 * UInt64($0)) & 0xFF) }
    }

    private func scan(_ bytes: [UInt8]) -> FragmentedMP4Scan.Result {
        FragmentedMP4Scan.scan(fileSize: Int64(bytes.count)) { offset, count in
            guard offset >= 0, offset < Int64(bytes.count) else { return [] }
            let start = Int(offset)
            return Array(bytes[start..<min(bytes.count, start + count)])
        }
    }

    private var whole: [UInt8] {
        box("ftyp", payload: 12) + box("moov", payload: 40) + box("moof", payload: 16) + box("mdat", payload: 100)
    }

    func testAWholeFileIsKeptWhole() {
        let bytes = whole
        XCTAssertEqual(scan(bytes), .init(playableLength: Int64(bytes.count), fragments: 1, hasHeader: true))
    }

    func testATornLastFragmentIsCutOff() {
        let bytes = whole + box("moof", payload: 16) + Array(box("mdat", payload: 100).prefix(50))
        XCTAssertEqual(scan(bytes), .init(playableLength: Int64(whole.count), fragments: 1, hasHeader: true))
    }

    /// The crash seen in the field: a 64-bit size near UInt64.max was added to the offset
    /// and overflowed (`kioskcam salvage` died with "arithmetic overflow" on every boot).
    func testA64BitSizeNearTheMaximumEndsTheScan() {
        for size in [UInt64.max, UInt64.max - 7, UInt64(Int64.max), UInt64(Int64.max) - 100, 1 << 63] {
            let bytes = whole + largeBox("mdat", size: size) + [UInt8](repeating: 7, count: 64)
            XCTAssertEqual(scan(bytes), .init(playableLength: Int64(whole.count), fragments: 1, hasHeader: true), "size \(size)")
        }
    }

    func testSizesTooSmallOrPastTheEndEndTheScan() {
        for size: UInt32 in [2, 7, UInt32.max, 0x8000_0000] {
            let torn = [UInt8(size >> 24), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)]
                + Array("moof".utf8) + [UInt8](repeating: 0, count: 32)
            XCTAssertEqual(scan(whole + torn).playableLength, Int64(whole.count), "size \(size)")
        }
        // A 64-bit size smaller than its own header.
        XCTAssertEqual(scan(whole + largeBox("mdat", size: 3)).playableLength, Int64(whole.count))
    }

    func testNoHeaderMeansNothingPlayable() {
        XCTAssertEqual(scan(box("ftyp", payload: 12) + box("moof", payload: 8) + box("mdat", payload: 8)).playableLength, 0)
        XCTAssertEqual(scan([]), .init(playableLength: 0, fragments: 0, hasHeader: false))
        XCTAssertEqual(scan([0, 0, 0]).hasHeader, false)
    }

    /// A file whose reader returns less than asked (a short read) ends the scan cleanly.
    func testShortReadsEndTheScan() {
        let bytes = whole + whole
        let result = FragmentedMP4Scan.scan(fileSize: Int64(bytes.count)) { offset, _ in
            offset == 0 ? Array(bytes.prefix(16)) : []
        }
        XCTAssertEqual(result.playableLength, 0)
    }

    /// Random bytes, and random sizes patched into a real layout: the scan always ends,
    /// within the file, and never claims more than the file holds.
    func testRandomInputNeverTraps() {
        var generator = SystemRandomNumberGenerator()
        for round in 0..<5_000 {
            var bytes = round % 2 == 0
                ? (0..<Int.random(in: 0...256, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
                : whole + whole
            if round % 2 == 1 {
                for _ in 0..<3 { bytes[Int.random(in: 0..<bytes.count, using: &generator)] = .random(in: 0...255, using: &generator) }
            }
            let result = scan(bytes)
            XCTAssertTrue((0...Int64(bytes.count)).contains(result.playableLength))
        }
    }
}
