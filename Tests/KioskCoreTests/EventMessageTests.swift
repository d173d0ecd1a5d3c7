import KioskCore
import XCTest

final class EventMessageTests: XCTestCase {
    private let sample = EventMessage(type: .update, id: "20261124-101500-1", start: 1_795_602_900.25, clipStart: 1_795_602_895.25,
                                      triggers: [.motion, .sound], peakScore: 3.5,
                                      peakRegion: MotionRegion(x: 0.25, y: 0.5, width: 0.125, height: 0.25),
                                      clip: "video/20261124/101455-motion.mp4", snapshot: "photo/20261124/101502-motion.jpg")

    func testALineReadsBackToTheSameMessage() throws {
        let line = sample.line
        XCTAssertFalse(line.contains("\n"))
        XCTAssertTrue(line.contains("\"peak_score\":3.5"), line)
        XCTAssertTrue(line.contains("\"clip\":\"video/20261124/101455-motion.mp4\""), line)
        XCTAssertTrue(line.contains("\"triggers\":[\"motion\",\"sound\"]"), line)
        XCTAssertEqual(EventMessage(line: line), sample)
    }

    func testTheLastMessageAboutEachEventWinsInStartOrder() {
        var first = sample
        first.type = .new
        first.peakScore = 0
        var end = sample
        end.type = .end
        end.end = sample.start + 12
        let other = EventMessage(type: .new, id: "20261124-090000-7", start: 1_795_598_000, clipStart: 1_795_597_995,
                                 triggers: [.button])
        let text = [first.line, sample.line, other.line, end.line].joined(separator: "\n") + "\n"
        let listing = EventLogListing(text: text)
        XCTAssertEqual(listing.events.map(\.id), ["20261124-090000-7", "20261124-101500-1"])
        XCTAssertEqual(listing.events.last?.type, .end)
        XCTAssertEqual(listing.events.last?.end, sample.start + 12)
        XCTAssertEqual(listing.unreadableLines, 0)
    }

    func testATornLineAndGarbageAreCountedNotFatal() {
        let torn = String(sample.line.prefix(40))
        let text = [sample.line, torn, "not json", "{\"type\":\"new\"}", "[1,2]", ""].joined(separator: "\n")
        let listing = EventLogListing(text: text)
        XCTAssertEqual(listing.events.count, 1)
        XCTAssertEqual(listing.unreadableLines, 4)
    }

    func testInsaneValuesAreRefused() {
        XCTAssertNil(EventMessage(line: #"{"type":"new","id":"","start":1,"clip_start":1,"triggers":[],"peak_score":0}"#),
                     "an empty id")
        XCTAssertNil(EventMessage(line: #"{"type":"new","id":"x","start":1e400,"clip_start":1,"triggers":[],"peak_score":0}"#),
                     "a start that is not a finite number")
        XCTAssertNil(EventMessage(line: #"{"type":"later","id":"x","start":1,"clip_start":1,"triggers":[],"peak_score":0}"#))
        XCTAssertNil(EventMessage(line: #"{"type":"new","id":"x","start":1,"clip_start":1,"triggers":["laser"],"peak_score":0}"#))
        XCTAssertNil(EventMessage(line: String(repeating: " ", count: 70_000)))
        XCTAssertNotNil(EventMessage(line: #"{"type":"new","id":"x","start":1,"clip_start":1,"triggers":[],"peak_score":0}"#))
    }
}
