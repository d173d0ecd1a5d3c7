import KioskCore
import XCTest

/// The live view as HLS segments: each begins at a keyframe and lasts at least the minimum,
/// the newest few are kept, numbers never repeat, and the playlist lists exactly them.
final class HLSWindowTests: XCTestCase {
    /// 30 fps fragments of one byte each (the frame's number), a keyframe every `gop`.
    private func feed(_ window: inout HLSWindow, frames: Range<Int>, gop: Int = 60) {
        for frame in frames {
            window.add(fragment: [UInt8(truncatingIfNeeded: frame)], keyframe: frame % gop == 0, seconds: Double(frame) / 30)
        }
    }

    func testSegmentsBeginAtKeyframesAndLastAGOP() throws {
        var window = HLSWindow(minimumSeconds: 1, keep: 4)
        feed(&window, frames: 0..<10)
        XCTAssertTrue(window.segments.isEmpty, "nothing before the init segment")
        window.start(initSegment: [0xFF])
        feed(&window, frames: 10..<60)
        XCTAssertTrue(window.segments.isEmpty, "fragments before the first keyframe are not a segment's start")
        XCTAssertNil(window.playlist(prefix: "/api/live"), "no playlist before a whole segment")
        feed(&window, frames: 60..<181)
        XCTAssertEqual(window.segments.map(\.sequence), [0, 1])
        XCTAssertEqual(window.segments[0].bytes, (60..<120).map { UInt8($0) }, "frames 60…119: one GOP, from its keyframe")
        XCTAssertEqual(window.segments[0].seconds, 2, accuracy: 1e-9)
        let playlist = try XCTUnwrap(window.playlist(prefix: "/api/live"))
        XCTAssertEqual(playlist, """
            #EXTM3U
            #EXT-X-VERSION:7
            #EXT-X-TARGETDURATION:2
            #EXT-X-MEDIA-SEQUENCE:0
            #EXT-X-INDEPENDENT-SEGMENTS
            #EXT-X-MAP:URI="/api/live/init.mp4"
            #EXTINF:2.000,
            /api/live/0.m4s
            #EXTINF:2.000,
            /api/live/1.m4s

            """)
    }

    func testKeyframesFasterThanTheMinimumMakeLongerSegments() {
        var window = HLSWindow(minimumSeconds: 1)
        window.start(initSegment: [0])
        feed(&window, frames: 0..<100, gop: 10)   // a keyframe every third of a second
        XCTAssertEqual(window.segments.map(\.seconds).map { ($0 * 30).rounded() }, [30, 30, 30], "ends at the first keyframe after 1 s")
    }

    func testTheWindowKeepsTheNewestAndANewStreamStartsAfresh() throws {
        var window = HLSWindow(minimumSeconds: 1, keep: 3, firstSequence: 40)
        window.start(initSegment: [1])
        feed(&window, frames: 0..<(60 * 8 + 1))
        XCTAssertEqual(window.segments.map(\.sequence), [45, 46, 47])
        XCTAssertNil(window.segment(44), "an old segment is gone: 404, fetch the playlist again")
        XCTAssertEqual(window.segment(47)?.bytes.first, UInt8(truncatingIfNeeded: 420))
        XCTAssertTrue(try XCTUnwrap(window.playlist(prefix: "/p")).contains("#EXT-X-MEDIA-SEQUENCE:45\n"))
        let next = window.upcomingSequence
        window.start(initSegment: [2])
        XCTAssertTrue(window.segments.isEmpty && window.initSegment == [2], "the old stream's segments do not follow the new init")
        feed(&window, frames: 0..<61)
        XCTAssertEqual(window.segments.map(\.sequence), [next], "numbers go on: a player never mistakes a new segment for an old one")
    }

    func testNonsenseTimesAreIgnored() {
        var window = HLSWindow()
        window.start(initSegment: [0])
        window.add(fragment: [1], keyframe: true, seconds: .nan)
        window.add(fragment: [1], keyframe: true, seconds: .infinity)
        XCTAssertTrue(window.segments.isEmpty)
        XCTAssertNil(window.playlist(prefix: "/p"))
    }
}
