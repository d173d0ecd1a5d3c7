import Foundation
import XCTest
@testable import KioskCore

final class ControlProtocolTests: XCTestCase {
    func parse(_ text: String) -> Result<ControlCall, ControlParseFailure> { ControlCall.parse(text) }

    func failure(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> ControlParseFailure? {
        switch parse(text) {
        case .success(let call):
            XCTFail("\(text) parsed as \(call)", file: file, line: line)
            return nil
        case .failure(let failure):
            return failure
        }
    }

    func testEveryRequestRoundTripsThroughItsLine() throws {
        let requests: [ControlRequest] = [
            .status, .recordStart(audioOnly: false, duration: nil), .recordStart(audioOnly: true, duration: 12.5),
            .recordStop, .snapshot, .list(date: nil), .list(date: "20261122"), .purge(dryRun: true), .purge(dryRun: false),
            .pinSet(pin: "0427"), .screenshot, .subscribe(events: nil), .subscribe(events: [.state, .levels]),
            .cameraGet, .cameraSet(try CameraAdjustment(parsing: ["zoom=2.5", "focus=auto", "torch=on", "exposure=-3"])),
            .eventStart, .eventStop, .subscribe(events: [.event]), .uploadStatus, .uploadNow,
            .broadcastStart(destinations: ["library", "rtmp://10.0.0.2/live/kiosk"], duration: nil),
            .broadcastStart(destinations: ["/var/www/live"], duration: 600), .broadcastStop, .subscribe(events: [.broadcast]),
            .broadcastStart(destinations: ["library"], duration: nil, size: FrameSize(width: 960, height: 540)),
            .clipExport(ClipExportRequest(file: "video/20261124/101455.mp4")),
            .clipExport(ClipExportRequest(file: "video/20261124/101455-motion-1.mp4", from: 1.5, to: 4, reencode: true,
                                          size: FrameSize(width: 640, height: 360), bitrateKbps: 500)),
            .clipExport(ClipExportRequest(file: "audio/20261124/101455.m4a", to: 2, wav: true)),
        ]
        XCTAssertEqual(Set(requests.map(\.command)), Set(ControlRequest.commands), "every command is covered")
        XCTAssertEqual(Set(requests.filter(\.needsRoot).map(\.command)), ["pin.set"], "only the PIN is root's alone")
        for (index, request) in requests.enumerated() {
            let call = ControlCall(id: Int64(index), request: request)
            let line = call.line()
            XCTAssertFalse(line.contains("\n"), line)
            XCTAssertEqual(try parse(line).get(), call, line)
        }
    }

    func testTheDocumentedShapesParse() throws {
        XCTAssertEqual(try parse(#"{"v":1,"id":7,"cmd":"record.start","args":{"audio_only":true,"duration":30}}"#).get(),
                       ControlCall(id: 7, request: .recordStart(audioOnly: true, duration: 30)))
        XCTAssertEqual(try parse(#"{"v":1,"cmd":"status"}"#).get(), ControlCall(id: nil, request: .status))
        XCTAssertEqual(try parse(#"  {"cmd":"purge","v":1,"id":-3,"args":{}}  "#).get(), ControlCall(id: -3, request: .purge(dryRun: false)))
        XCTAssertEqual(try parse(#"{"v":1,"id":1,"cmd":"list","args":null}"#).get(), ControlCall(id: 1, request: .list(date: nil)))
    }

    /// `broadcast.start`'s `size`: WIDTHxHEIGHT with even sides from 16 to 8192; anything
    /// else is refused with the form it takes, before a process is started.
    func testBroadcastStartSizeIsCheckedBeforeTheDaemonActs() throws {
        XCTAssertEqual(try parse(#"{"v":1,"id":4,"cmd":"broadcast.start","args":{"to":["library"],"size":"640x384"}}"#).get(),
                       ControlCall(id: 4, request: .broadcastStart(destinations: ["library"], duration: nil,
                                                                   size: FrameSize(width: 640, height: 384))))
        for bad in [#""641x384""#, #""0x0""#, #""-640x384""#, #""99999x2""#, #""640""#, "640", #""640x384x2""#] {
            let refused = failure(#"{"v":1,"id":5,"cmd":"broadcast.start","args":{"to":["library"],"size":"# + bad + "}}")
            XCTAssertEqual(refused?.error.code, .badArgument, bad)
            XCTAssertTrue(refused?.error.message.contains("960x540") ?? false, "\(bad): \(String(describing: refused))")
        }
    }

    func testEventCommandsTakeNoArgumentsAndEventsCarryTheLogLine() throws {
        XCTAssertEqual(try parse(#"{"v":1,"id":2,"cmd":"event.start"}"#).get(), ControlCall(id: 2, request: .eventStart))
        let stray = failure(#"{"v":1,"id":3,"cmd":"event.stop","args":{"trigger":"motion"}}"#)
        XCTAssertEqual(stray?.error.code, .badArgument)
        XCTAssertTrue(stray?.error.message.contains("it takes none") ?? false, "\(String(describing: stray))")
        let message = EventMessage(type: .new, id: "20261124-101500-1", start: 10, clipStart: 5, triggers: [.manual])
        let event = ControlEvent.event(message)
        XCTAssertEqual(event.kind, .event)
        XCTAssertEqual(event.data["id"], .string("20261124-101500-1"))
        XCTAssertEqual(event.data["type"], .string("new"))
        XCTAssertEqual(event.data["triggers"], .array([.string("manual")]))
        XCTAssertEqual(event.data["clip_start"]?.doubleValue, 5)
    }

    func testErrorsHaveTheirCodeAndKeepTheID() {
        let cases: [(String, ControlErrorCode, Int64?, String)] = [
            ("", .malformedJSON, nil, "JSON object"),
            ("{", .malformedJSON, nil, "JSON object"),
            ("status", .malformedJSON, nil, "JSON object"),
            ("[1,2]", .malformedJSON, nil, "an array"),
            ("\"status\"", .malformedJSON, nil, "a string"),
            (#"{"id":4,"cmd":"status"}"#, .unsupportedVersion, 4, "version 1"),
            (#"{"v":2,"id":4,"cmd":"status"}"#, .unsupportedVersion, 4, "version 2 is not supported"),
            (#"{"v":"1","id":4,"cmd":"status"}"#, .unsupportedVersion, 4, "a string"),
            (#"{"v":1,"id":"x","cmd":"status"}"#, .badArgument, nil, "id"),
            (#"{"v":1,"id":5}"#, .badArgument, 5, "cmd"),
            (#"{"v":1,"id":5,"cmd":7}"#, .badArgument, 5, "cmd"),
            (#"{"v":1,"id":5,"cmd":"reboot"}"#, .unknownCommand, 5, "reboot"),
            (#"{"v":1,"id":5,"cmd":"status","args":[]}"#, .badArgument, 5, "args"),
            (#"{"v":1,"id":5,"cmd":"status","argz":{}}"#, .badArgument, 5, "argz"),
            (#"{"v":1,"id":5,"cmd":"status","args":{"verbose":true}}"#, .badArgument, 5, "verbose"),
            (#"{"v":1,"id":6,"cmd":"record.start","args":{"audio_only":"yes"}}"#, .badArgument, 6, "audio_only"),
            (#"{"v":1,"id":6,"cmd":"record.start","args":{"audioonly":true}}"#, .badArgument, 6, "audio_only, duration"),
            (#"{"v":1,"id":6,"cmd":"record.start","args":{"duration":0}}"#, .badArgument, 6, "duration"),
            (#"{"v":1,"id":6,"cmd":"record.start","args":{"duration":1e9}}"#, .badArgument, 6, "duration"),
            (#"{"v":1,"id":6,"cmd":"list","args":{"date":"2026-11-22"}}"#, .badArgument, 6, "YYYYMMDD"),
            (#"{"v":1,"id":6,"cmd":"list","args":{"date":"20260231"}}"#, .badArgument, 6, "date"),
            (#"{"v":1,"id":6,"cmd":"purge","args":{"dry_run":1}}"#, .badArgument, 6, "dry_run"),
            (#"{"v":1,"id":6,"cmd":"pin.set"}"#, .badArgument, 6, "pin"),
            (#"{"v":1,"id":6,"cmd":"subscribe","args":{"events":["state","weather"]}}"#, .badArgument, 6, "levels"),
            (#"{"v":1,"id":6,"cmd":"subscribe","args":{"events":"state"}}"#, .badArgument, 6, "events"),
        ]
        for (text, code, id, mention) in cases {
            guard let failure = failure(text) else { continue }
            XCTAssertEqual(failure.error.code, code, "\(text): \(failure.error)")
            XCTAssertEqual(failure.id, id, text)
            XCTAssertTrue(failure.error.message.contains(mention), "\(text) should mention \(mention): \(failure.error.message)")
            // The response line is valid and says ok:false.
            let response = failure.response
            XCTAssertEqual(try? ControlServerLine.parse(Array(response.line().utf8)), .response(response))
        }
    }

    func testOversizedLinesAreTooLarge() {
        let padding = String(repeating: " ", count: ControlProtocol.maximumLineBytes)
        let failure = failure(#"{"v":1,"id":1,"cmd":"status"}"# + padding)
        XCTAssertEqual(failure?.error.code, .tooLarge)
        XCTAssertTrue(failure?.error.message.contains("65536") ?? false, "\(String(describing: failure))")
        // Exactly at the cap is fine.
        let fits = #"{"v":1,"id":1,"cmd":"status"}"#
        XCTAssertNoThrow(try parse(fits + String(repeating: " ", count: ControlProtocol.maximumLineBytes - fits.utf8.count)).get())
    }

    /// A PIN never appears in an error message, a description, a dump or a debug print.
    func testThePINIsNeverEchoed() {
        let pin = "8642"
        let bad = [
            #"{"v":1,"id":1,"cmd":"pin.set","args":{"pin":"86421"}}"#,
            #"{"v":1,"id":1,"cmd":"pin.set","args":{"pin":8642}}"#,
            #"{"v":1,"id":1,"cmd":"pin.set","args":{"pin":"8642","pn":"8642"}}"#,
            #"{"v":1,"id":1,"cmd":"pin.set","args":{"pin":["8642"]}}"#,
            #"{"v":1,"id":1,"cmd":"pin.set","args":{"pin":"86a2"}}"#,
            #"{"v":2,"id":1,"cmd":"pin.set","args":{"pin":"8642"}}"#,
        ]
        for text in bad {
            guard let failure = failure(text) else { continue }
            XCTAssertFalse(failure.error.message.contains(pin), "\(text) → \(failure.error.message)")
            XCTAssertFalse(failure.response.line().contains(pin))
            XCTAssertFalse(failure.response.line().contains("8642"))
        }
        let request = ControlRequest.pinSet(pin: pin)
        XCTAssertFalse("\(request)".contains(pin))
        XCTAssertFalse(String(reflecting: request).contains(pin))
        var dumped = ""
        dump(request, to: &dumped)
        XCTAssertFalse(dumped.contains(pin), dumped)
        XCTAssertFalse("\(ControlCall(id: 1, request: request))".contains(pin))
        XCTAssertEqual(request.command, "pin.set")
        XCTAssertTrue(ControlCall(id: 1, request: request).line().contains(pin), "the client must send it")
    }

    func testBroadcastStartNeedsDestinationsThatParse() {
        for (line, field) in [(#"{"v":1,"cmd":"broadcast.start"}"#, "to"),
                              (#"{"v":1,"cmd":"broadcast.start","args":{"to":[]}}"#, "to"),
                              (#"{"v":1,"cmd":"broadcast.start","args":{"to":["http://x/y"]}}"#, "to"),
                              (#"{"v":1,"cmd":"broadcast.start","args":{"to":["library"],"duration":0}}"#, "duration"),
                              (#"{"v":1,"cmd":"broadcast.start","args":{"to":["library"],"source":"camera"}}"#, "source")] {
            guard case .failure(let failure) = ControlCall.parse(line) else { return XCTFail("accepted \(line)") }
            XCTAssertEqual(failure.error.code, .badArgument, line)
            XCTAssertTrue(failure.error.message.hasPrefix(field), "\(line): \(failure.error.message)")
        }
    }

    func testPINRules() {
        XCTAssertTrue(ControlCall.isValidPIN("0000"))
        XCTAssertTrue(ControlCall.isValidPIN("9876"))
        for bad in ["", "123", "12345", "12a4", "１２３４", " 123", "-123"] {
            XCTAssertFalse(ControlCall.isValidPIN(bad), bad)
        }
    }

    func testResponsesAndEventsRoundTrip() throws {
        let responses = [
            ControlResponse(id: 7, result: ["state": "recording", "bytes": 123_456_789_012, "seconds": 1.5, "list": [1, "a", nil, true]]),
            ControlResponse(id: nil, result: [:]),
            ControlResponse(id: 3, failure: ControlError(.failed, "already recording")),
        ]
        for response in responses {
            let line = response.line()
            XCTAssertTrue(line.hasPrefix("{") && !line.contains("\n"), line)
            XCTAssertTrue(line.contains(#""v":1"#), line)
            XCTAssertEqual(try ControlServerLine.parse(Array(line.utf8)), .response(response))
        }
        XCTAssertEqual(responses[2].line(), #"{"error":{"code":"failed","message":"already recording"},"id":3,"ok":false,"v":1}"#)

        let levels = AudioLevels(rmsDBFS: [-20.5, -120], peakHoldDBFS: [-3, -120], updatedAt: MonotonicInstant(nanoseconds: 0))
        let touch = TouchEvent(phase: .press, point: ScreenPoint(x: 10, y: 20), time: MonotonicInstant(nanoseconds: 0))
        let events = [ControlEvent.state(.recording, file: "/m/video/20261122/101010.mp4"), .levels(levels), .touch(touch),
                      .button("record", press: "short"), ControlEvent(.dropped, ["count": 3])]
        for event in events {
            let line = event.line()
            XCTAssertEqual(try ControlServerLine.parse(Array(line.utf8)), .event(event), line)
        }
        XCTAssertEqual(events[0].line(), #"{"data":{"file":"/m/video/20261122/101010.mp4","state":"recording"},"event":"state","v":1}"#)
        XCTAssertEqual(events[1].summary, "levels peak_dbfs=-3.0,-120.0 rms_dbfs=-20.5,-120.0")
        XCTAssertThrowsError(try ControlServerLine.parse(Array(#"{"v":2,"ok":true}"#.utf8)))
        XCTAssertThrowsError(try ControlServerLine.parse(Array(#"{"v":1}"#.utf8)))
        XCTAssertThrowsError(try ControlServerLine.parse(Array("nope".utf8)))
    }

    func testJSONValueKeepsIntegersExactAndMapsNonFiniteToNull() throws {
        let value: JSONValue = ["big": .integer(Int64.max), "half": 0.5, "inf": .number(-.infinity)]
        XCTAssertEqual(value.description, #"{"big":9223372036854775807,"half":0.5,"inf":null}"#)
        let back = try JSONDecoder().decode(JSONValue.self, from: Data(value.description.utf8))
        XCTAssertEqual(back.objectValue?["big"], .integer(Int64.max))
        XCTAssertEqual(back.objectValue?["inf"], .null)
        XCTAssertEqual(JSONValue.integer(3).intValue, 3)
        XCTAssertEqual(JSONValue.number(3.0).intValue, 3)
        XCTAssertNil(JSONValue.number(3.5).intValue)
        XCTAssertEqual(JSONValue.integer(3), JSONValue.number(3))
        XCTAssertNotEqual(JSONValue.integer(3), JSONValue.number(3.5))
        XCTAssertNotEqual(JSONValue.integer(Int64.max), JSONValue.number(Double(Int64.max)), "2^63 is not Int64.max")
        XCTAssertEqual(Set<JSONValue>([.integer(3), .number(3)]).count, 1)
    }

    func testStatusReportRoundTripsAndPrints() throws {
        var report = StatusReport(state: .recording)
        report.kind = "video"
        report.currentFile = "/var/lib/kioskcam/media/.incoming/101010.mp4.part"
        report.bytesWritten = 3_500_000
        report.secondsRecorded = 12.25
        report.segment = 2
        report.droppedFrames = 4
        report.droppedAudioChunks = 2
        report.freeBytes = 5 << 30
        report.camera = "ok /dev/video0"
        report.microphone = "ok hw:1,0"
        report.deviceID = "0b6c1c52-0d0e-4a8e-8a4c-2f0e3b1d9f00"
        report.uptimeSeconds = 90_061
        report.defaultPIN = true
        report.pinFailures = 3
        report.levelsRMSDBFS = [-18.25]
        report.levelsPeakDBFS = [-6]
        let response = ControlResponse(id: 1, outcome: .encoding(report))
        let fields = try XCTUnwrap(response.result)
        XCTAssertEqual(fields["state"], "recording")
        XCTAssertEqual(fields["bytes_written"], .integer(3_500_000))
        XCTAssertEqual(fields["default_pin"], true)
        XCTAssertNil(fields["last_error"], "unset fields are left out")
        let parsed = try ControlServerLine.parse(Array(response.line().utf8))
        guard case .response(let back) = parsed else { return XCTFail("\(parsed)") }
        XCTAssertEqual(try back.decode(StatusReport.self), report)

        let text = report.lines.joined(separator: "\n")
        XCTAssertEqual(fields["dropped_audio_chunks"], .integer(2))
        for expected in ["state:        recording (video)", "dropped:      4 frames, 2 sound chunks", "12.2 s, 3.3 MiB, segment 2", "free space:   5.0 GiB",
                         "camera:       ok /dev/video0", "-18.2 (peak -6.0)", "factory default PIN", "PIN failures: 3",
                         "device id:    0b6c1c52", "uptime:       1d 01:01:01"] {
            XCTAssertTrue(text.contains(expected), "missing \(expected) in:\n\(text)")
        }
        XCTAssertEqual(StatusReport(state: .idle).lines, ["state:        idle"])
        // The uptime is the socket's number: one no daemon has is shown, never trapped on.
        var odd = StatusReport(state: .idle)
        for (seconds, shown) in [(1e300, "uptime:       11574074074d 01:46:40"), (-5, "uptime:       00:00:00")] {
            odd.uptimeSeconds = seconds
            XCTAssertEqual(odd.lines.last, shown)
        }
        // A daemon that sends an error answer: decode throws that error.
        XCTAssertThrowsError(try ControlResponse(id: 1, failure: ControlError(.failed, "x")).decode(StatusReport.self)) { error in
            XCTAssertEqual(error as? ControlError, ControlError(.failed, "x"))
        }
    }
}
