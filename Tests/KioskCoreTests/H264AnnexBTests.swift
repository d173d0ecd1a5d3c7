import KioskCore
import XCTest

/// Annex B parsing for the hardware encoder's late SPS/PPS: exact on real shapes, and
/// no trap on anything.
final class H264AnnexBTests: XCTestCase {
    private let sps: [UInt8] = [0x67, 0x64, 0x00, 0x28, 0xAC, 0xD9, 0x40]
    private let pps: [UInt8] = [0x68, 0xEB, 0xE3, 0xCB]
    private let idr: [UInt8] = [0x65, 0x88, 0x84, 0x00, 0x10]
    private let slice: [UInt8] = [0x41, 0x9A, 0x02]

    private func units(_ bytes: [UInt8]) -> [H264AnnexB.Unit] { bytes.withUnsafeBytes { H264AnnexB.units(in: $0) } }

    func testFindsUnitsAfterThreeAndFourByteStartCodes() {
        let stream: [UInt8] = [0, 0, 0, 1] + sps + [0, 0, 1] + pps + [0, 0, 0, 1] + idr
        XCTAssertEqual(units(stream).map(\.type), [7, 8, 5])
        let found = units(stream)
        XCTAssertEqual(Array(stream[found[0].range]), sps)
        XCTAssertEqual(Array(stream[found[1].range]), pps)
        XCTAssertEqual(Array(stream[found[2].range]), idr)
    }

    /// The Pi 4 encoder's first IDR: SPS and PPS in front of it; later IDRs without.
    func testParameterSetsFromTheFirstIDR() {
        let first: [UInt8] = [0, 0, 0, 1] + sps + [0, 0, 0, 1] + pps + [0, 0, 0, 1] + idr
        let extradata = first.withUnsafeBytes { H264AnnexB.parameterSets(in: $0) }
        XCTAssertEqual(extradata, [0, 0, 0, 1] + sps + [0, 0, 0, 1] + pps)
        XCTAssertTrue(first.withUnsafeBytes { H264AnnexB.containsIDR($0) })
        XCTAssertTrue(first.withUnsafeBytes { H264AnnexB.containsParameterSets($0) })
        let later: [UInt8] = [0, 0, 0, 1] + idr
        XCTAssertNil(later.withUnsafeBytes { H264AnnexB.parameterSets(in: $0) })
        XCTAssertFalse(later.withUnsafeBytes { H264AnnexB.containsParameterSets($0) })
        XCTAssertFalse(([0, 0, 1] + slice).withUnsafeBytes { H264AnnexB.containsIDR($0) })
        XCTAssertEqual(H264AnnexB.profileAndLevel(extradata ?? [])?.profile, 0x64)
        XCTAssertEqual(H264AnnexB.profileAndLevel(extradata ?? [])?.level, 0x28)
    }

    func testTrailingZerosAndLeadingJunk() {
        let stream: [UInt8] = [9, 9] + [0, 0, 1] + sps + [0, 0, 0, 0] + [0, 0, 1] + pps
        XCTAssertEqual(units(stream).map { Array(stream[$0.range]) }, [sps, pps])
        XCTAssertEqual(units([0, 0, 1]).count, 0, "a start code with nothing after it")
        XCTAssertEqual(units([]).count, 0)
    }

    func testRandomBytesNeverTrap() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let bytes = (0..<Int.random(in: 0...64, using: &generator)).map { _ in
                UInt8.random(in: 0...3, using: &generator)   // many zeros and ones: many start codes
            }
            bytes.withUnsafeBytes { raw in
                for unit in H264AnnexB.units(in: raw) {
                    XCTAssertTrue(unit.range.lowerBound >= 0 && unit.range.upperBound <= raw.count && !unit.range.isEmpty)
                }
                _ = H264AnnexB.parameterSets(in: raw)
            }
            _ = H264AnnexB.profileAndLevel(bytes)
        }
    }
}
