import KioskCore
import XCTest

/// What the web API parses: byte ranges (RFC 9110), ETags, the JSON bodies that become
/// control requests, `[web]`'s keys, and the live view's MIME type.
final class WebRequestTests: XCTestCase {
    func testRanges() {
        XCTAssertEqual(HTTPByteRange.resolve(nil, size: 1000), .whole)
        XCTAssertEqual(HTTPByteRange.resolve("bytes=0-99", size: 1000), .partial(first: 0, last: 99))
        XCTAssertEqual(HTTPByteRange.resolve("bytes=900-", size: 1000), .partial(first: 900, last: 999))
        XCTAssertEqual(HTTPByteRange.resolve("bytes=-100", size: 1000), .partial(first: 900, last: 999))
        XCTAssertEqual(HTTPByteRange.resolve("bytes=-5000", size: 1000), .partial(first: 0, last: 999))
        XCTAssertEqual(HTTPByteRange.resolve("bytes=500-5000", size: 1000), .partial(first: 500, last: 999))
        XCTAssertEqual(HTTPByteRange.resolve("bytes=1000-", size: 1000), .unsatisfiable)
        XCTAssertEqual(HTTPByteRange.resolve("bytes=-0", size: 1000), .unsatisfiable)
        XCTAssertEqual(HTTPByteRange.resolve("bytes=0-0", size: 0), .unsatisfiable)
        XCTAssertEqual(HTTPByteRange.resolve("bytes=5-1", size: 1000), .whole, "an invalid range is ignored")
        XCTAssertEqual(HTTPByteRange.resolve("bytes=0-1,5-9", size: 1000), .whole, "several ranges: the whole file")
        XCTAssertEqual(HTTPByteRange.resolve("items=0-1", size: 1000), .whole)
        XCTAssertEqual(HTTPByteRange.resolve("bytes=99999999999999999999-", size: 1000), .whole, "no overflow")
        XCTAssertEqual(HTTPByteRange.resolve("bytes=-99999999999999999999", size: 1000), .whole)
        XCTAssertEqual(HTTPByteRange.resolve("bytes=abc-def", size: 1000), .whole)
    }

    func testETags() {
        let tag = HTTPETag.of(size: 1000, modifiedSeconds: 1_764_000_000, modifiedNanoseconds: 5)
        XCTAssertTrue(HTTPETag.matches(ifNoneMatch: tag, etag: tag))
        XCTAssertTrue(HTTPETag.matches(ifNoneMatch: "\"x\", \(tag)", etag: tag))
        XCTAssertTrue(HTTPETag.matches(ifNoneMatch: "*", etag: tag))
        XCTAssertFalse(HTTPETag.matches(ifNoneMatch: "\"other\"", etag: tag))
        XCTAssertNotEqual(tag, HTTPETag.of(size: 1000, modifiedSeconds: 1_764_000_000, modifiedNanoseconds: 6))
    }

    /// The web API is the control protocol: a body becomes the request the socket sends.
    func testBodiesBecomeControlRequests() throws {
        func request(_ route: WebRoute, _ body: String) -> Result<ControlRequest, ControlError> {
            WebAPI.controlRequest(for: route, body: Array(body.utf8))
        }
        XCTAssertEqual(try request(.recording, #"{"action":"start","kind":"video"}"#).get(), .recordStart(audioOnly: false, duration: nil))
        XCTAssertEqual(try request(.recording, #"{"action":"start","kind":"audio"}"#).get(), .recordStart(audioOnly: true, duration: nil))
        XCTAssertEqual(try request(.recording, #"{"action":"start","duration":30}"#).get(), .recordStart(audioOnly: false, duration: 30))
        XCTAssertEqual(try request(.recording, #"{"action":"stop"}"#).get(), .recordStop)
        XCTAssertEqual(try request(.snapshot, "").get(), .snapshot)
        XCTAssertEqual(try request(.event, #"{"action":"start"}"#).get(), .eventStart)
        XCTAssertEqual(try request(.event, #"{"action":"stop"}"#).get(), .eventStop)
        XCTAssertEqual(try request(.export, #"{"file":"video/20261128/101455.mp4","from":1.5,"to":4}"#).get(),
                       .clipExport(ClipExportRequest(file: "video/20261128/101455.mp4", from: 1.5, to: 4)))
        // Refusals name the field, as the socket's do.
        for (route, body, code) in [(WebRoute.recording, #"{"action":"dance"}"#, ControlErrorCode.badArgument),
                                    (.recording, #"{"action":"start","kind":"smell"}"#, .badArgument),
                                    (.recording, #"{"action":"start","duration":-1}"#, .badArgument),
                                    (.recording, #"{"action":"start","extra":1}"#, .badArgument),
                                    (.snapshot, #"{"x":1}"#, .badArgument),
                                    (.export, #"{"file":"../../etc/passwd"}"#, .badArgument),
                                    (.export, "[1,2]", .malformedJSON),
                                    (.event, "{", .malformedJSON)] {
            guard case .failure(let error) = request(route, body) else { return XCTFail(body) }
            XCTAssertEqual(error.code, code, body)
        }
        guard case .failure(let error) = WebAPI.controlRequest(for: .recording, body: Array(repeating: 32, count: 20_000)) else {
            return XCTFail("a 20 kB body")
        }
        XCTAssertEqual(error.code, .tooLarge)
    }

    func testDays() {
        XCTAssertEqual(try WebAPI.day("20261128").get(), "20261128")
        XCTAssertEqual(try WebAPI.day(nil).get(), nil)
        for bad in ["2026-11-28", "20261332", "../..", ""] {
            guard case .failure = WebAPI.day(bad) else { return XCTFail(bad) }
        }
    }

    func testTheWebSection() throws {
        let configuration = try Configuration(toml: """
            [web]
            enabled = false
            listen = "[::]:9443"
            tls = "files"
            cert_file = "/etc/kioskcam/web.pem"
            key_file = "/etc/kioskcam/web.key"
            max_connections = 16
            idle_timeout_seconds = 10
            max_viewers = 3
            """)
        XCTAssertFalse(configuration.web.enabled)
        XCTAssertEqual(configuration.web.listen, WebListenAddress(host: "::", port: 9443))
        XCTAssertEqual(configuration.web.tls, .files)
        XCTAssertEqual(configuration.web.certFile, "/etc/kioskcam/web.pem")
        XCTAssertEqual(configuration.web.maxConnections, 16)
        XCTAssertEqual(configuration.web.maxViewers, 3)
        let defaults = Configuration()
        XCTAssertTrue(defaults.web.enabled, "on by default (and nobody can log in until a user exists)")
        XCTAssertEqual(defaults.web.listen.description, "0.0.0.0:8443")
        XCTAssertEqual(defaults.web.tls, .selfSigned)
        for bad in ["listen = \"8443\"", "listen = \"localhost:8443\"", "listen = \"0.0.0.0:0\"", "listen = \"1.2.3.256:80\"",
                    "tls = \"maybe\"", "cert_file = \"relative.pem\"", "max_connections = 1"] {
            XCTAssertThrowsError(try Configuration(toml: "[web]\n" + bad), bad)
        }
    }

    func testTheLiveViewsMimeTypeComesFromItsInitSegment() {
        let avcC: [UInt8] = Array("avcC".utf8) + [1, 0x64, 0x00, 0x1F, 0xFF]
        XCTAssertEqual(MSEMimeType.of(initSegment: [0, 0, 0, 8] + avcC + Array("mp4a".utf8)),
                       "video/mp4; codecs=\"avc1.64001f, mp4a.40.2\"")
        XCTAssertEqual(MSEMimeType.of(initSegment: avcC), "video/mp4; codecs=\"avc1.64001f\"")
        XCTAssertNil(MSEMimeType.of(initSegment: Array("avcC".utf8)))
        XCTAssertNil(MSEMimeType.of(initSegment: []))
    }
}

/// A live viewer's queue: a slow viewer loses whole GOPs, counted, and goes on at a keyframe.
final class LiveViewerBudgetTests: XCTestCase {
    func testAViewerStartsAtAKeyframe() {
        var budget = LiveViewerBudget(byteLimit: 1000)
        XCTAssertFalse(budget.admit(bytes: 10, keyframe: false), "not before the first keyframe")
        XCTAssertTrue(budget.admit(bytes: 10, keyframe: true))
        XCTAssertTrue(budget.admit(bytes: 10, keyframe: false))
        XCTAssertEqual(budget.droppedGOPs, 0)
    }

    func testASlowViewerLosesTheRestOfTheGOPAndGoesOnAtTheNextKeyframe() {
        var budget = LiveViewerBudget(byteLimit: 1000)
        XCTAssertTrue(budget.admit(bytes: 600, keyframe: true))
        XCTAssertTrue(budget.admit(bytes: 300, keyframe: false))
        XCTAssertFalse(budget.admit(bytes: 200, keyframe: false), "over the limit")
        XCTAssertEqual(budget.droppedGOPs, 1)
        budget.consumed(bytes: 900)
        XCTAssertFalse(budget.admit(bytes: 10, keyframe: false), "the rest of that GOP goes too, though there is room")
        XCTAssertEqual(budget.droppedGOPs, 1, "one GOP counted once")
        XCTAssertTrue(budget.admit(bytes: 500, keyframe: true), "a clean start at the next keyframe")
        XCTAssertEqual(budget.queuedBytes, 500)
        XCTAssertEqual(budget.sentBytes, 1400)
    }

    func testAViewerThatNeverReadsHoldsAtMostItsLimit() {
        var budget = LiveViewerBudget(byteLimit: 10_000)
        for frame in 0..<10_000 { _ = budget.admit(bytes: 700, keyframe: frame % 30 == 0) }
        XCTAssertLessThanOrEqual(budget.queuedBytes, 10_000)
        XCTAssertGreaterThan(budget.droppedGOPs, 300)
    }
}
