import KioskCore
import XCTest

/// Inputs the fuzz targets in `Fuzz/` found (scripts/fuzz), each cut down to what makes
/// it fail and kept here so it stays fixed without the libFuzzer toolchain.
final class FuzzFindingsTests: XCTestCase {
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
}
