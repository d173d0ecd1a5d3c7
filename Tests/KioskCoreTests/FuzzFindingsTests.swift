@testable import KioskCore
import XCTest

/// Inputs the fuzz targets in `Fuzz/` found (scripts/fuzz), each cut down to what makes
/// it fail and kept here so it stays fixed without the libFuzzer toolchain.
final class FuzzFindingsTests: XCTestCase {
    // MARK: Control messages (FuzzControlRequest)

    /// A number above 2^53 with a fraction reads as a Double; written back in its
    /// shortest form (1.2345678223336854e+17) it read back as the integer those digits
    /// spell, 4 less than the Double: a response no longer equal to itself.
    func testALargeNumberReadsBackAsItself() throws {
        let line = #"{"v":1,"id":1,"ok":true,"result":{"stats":123456782233368547.072,"lgvel":11.5}}"#
        guard case .response(let response) = try ControlServerLine.parse(Array(line.utf8)) else { return XCTFail("not a response") }
        guard case .response(let again) = try ControlServerLine.parse(Array(response.line().utf8)) else { return XCTFail("no read-back") }
        XCTAssertEqual(again, response, response.line())
        for value in [0x1p53, -0x1p60, 123456782233368544.0, 3.0, 0.5, 1e300] {
            let text = JSONValue.number(value).description
            let read = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
            XCTAssertEqual(read, .number(value), text)
        }
    }

    // MARK: TouchDecoder (FuzzTouchDecoder)

    /// A protocol A contact without a tracking ID is matched to the nearest contact of the
    /// last frame by squared distance; between Int32.min and Int32.max that square does
    /// not fit in 64 bits, and the daemon's input thread trapped on it.
    func testProtocolAContactsAtOppositeEndsOfTheAxisAreMatchedNotATrap() {
        func event(_ type: UInt16, _ code: UInt16, _ value: Int32, ms: Int64) -> RawInputEvent {
            RawInputEvent(type: type, code: code, value: value, time: MonotonicInstant(nanoseconds: ms * 1_000_000))
        }
        var decoder = TouchDecoder(touchProtocol: .multiTouchAnonymous)
        let down = decoder.feed([
            event(EvdevCode.EV_ABS, EvdevCode.ABS_MT_POSITION_X, 0, ms: 0),
            event(EvdevCode.EV_ABS, EvdevCode.ABS_MT_POSITION_Y, Int32.min, ms: 0),
            event(EvdevCode.EV_SYN, EvdevCode.SYN_MT_REPORT, 0, ms: 0),
            event(EvdevCode.EV_SYN, EvdevCode.SYN_REPORT, 0, ms: 0),
        ])
        XCTAssertEqual(down.map(\.phase), [.press])
        let moved = decoder.feed([
            event(EvdevCode.EV_ABS, EvdevCode.ABS_MT_POSITION_X, 0, ms: 10),
            event(EvdevCode.EV_ABS, EvdevCode.ABS_MT_POSITION_Y, Int32.max, ms: 10),
            event(EvdevCode.EV_SYN, EvdevCode.SYN_MT_REPORT, 0, ms: 10),
            event(EvdevCode.EV_SYN, EvdevCode.SYN_REPORT, 0, ms: 10),
        ])
        XCTAssertEqual(moved, [ContactChange(phase: .move, slot: 0, x: 0, y: Int32.max, time: MonotonicInstant(nanoseconds: 10_000_000))])
    }

    // MARK: FragmentedMP4Scan (FuzzSalvage)

    private func scan(_ bytes: [UInt8]) -> FragmentedMP4Scan.Result {
        FragmentedMP4Scan.scan(fileSize: Int64(bytes.count)) { offset, count in
            guard offset >= 0, offset < Int64(bytes.count) else { return [] }
            return Array(bytes[Int(offset)..<min(bytes.count, Int(offset) + count)])
        }
    }

    private func box(_ type: String, payload: Int) -> [UInt8] {
        withUnsafeBytes(of: UInt32(8 + payload).bigEndian, Array.init) + Array(type.utf8) + [UInt8](repeating: 0, count: payload)
    }

    /// A box with a 64-bit size has a 16-byte header, so it cannot be 8 to 15 bytes long.
    /// Such a box was kept, and the kept part, scanned again, lost it: the cut depended on
    /// the bytes after it (salvage cutting twice cut twice).
    func testABoxWithA64BitSizeSmallerThanItsHeaderEndsTheScan() {
        let whole = box("ftyp", payload: 12) + box("moov", payload: 40) + box("moof", payload: 16) + box("mdat", payload: 100)
        for size in UInt64(8)...15 {
            let bytes = whole + [0, 0, 0, 1] + Array("free".utf8) + withUnsafeBytes(of: size.bigEndian, Array.init)
            let result = scan(bytes)
            XCTAssertEqual(result, .init(playableLength: Int64(whole.count), fragments: 1, hasHeader: true), "size \(size)")
            XCTAssertEqual(scan(Array(bytes.prefix(Int(result.playableLength)))), result, "size \(size): scanning the kept part")
        }
    }

    /// A `moof` whose one `traf` holds one `trun` claiming `samples` samples.
    private func fragmentHeader(samples: UInt32) -> [UInt8] {
        let trun = withUnsafeBytes(of: UInt32(16).bigEndian, Array.init) + Array("trun".utf8) + [0, 0, 0, 0]
            + withUnsafeBytes(of: samples.bigEndian, Array.init)
        let traf = withUnsafeBytes(of: UInt32(8 + trun.count).bigEndian, Array.init) + Array("traf".utf8) + trun
        return withUnsafeBytes(of: UInt32(8 + traf.count).bigEndian, Array.init) + Array("moof".utf8) + traf
    }

    /// libavformat allocates an index entry (and a timing entry) for every sample a `trun`
    /// claims before reading any: a 3 KB torn file whose count said 16.9 million made
    /// salvage take 600 MB and seconds (FuzzSalvage timed out on it); on a board with
    /// 1 GB that is the OOM killer at every start. Every sample takes at least a byte of
    /// its fragment's `mdat`, so a larger count is damage, and the scan ends before it.
    func testAFragmentClaimingMoreSamplesThanItsDataHoldsEndsTheScan() {
        let start = box("ftyp", payload: 12) + box("moov", payload: 40)
        let good = fragmentHeader(samples: 30) + box("mdat", payload: 30)
        for samples: UInt32 in [31, 16_908_296, UInt32.max] {
            let bytes = start + good + fragmentHeader(samples: samples) + box("mdat", payload: 30) + good
            let result = scan(bytes)
            XCTAssertEqual(result, .init(playableLength: Int64(start.count + good.count), fragments: 1, hasHeader: true,
                                         endsAtDamagedFragment: true), "\(samples) samples")
            XCTAssertEqual(scan(Array(bytes.prefix(Int(result.playableLength)))),
                           .init(playableLength: result.playableLength, fragments: 1, hasHeader: true), "\(samples) samples: scanning the kept part")
        }
        let bytes = start + good + good
        XCTAssertEqual(scan(bytes), .init(playableLength: Int64(bytes.count), fragments: 2, hasHeader: true), "as many samples as bytes is whole")
    }
}
