import Foundation
import XCTest
@testable import KioskCore

/// The metrics text must be what node_exporter's textfile collector accepts.
final class ControlMetricsTests: XCTestCase {
    struct Sample: Equatable {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    /// A strict reader of the text exposition format (0.0.4) for what we emit: HELP and
    /// TYPE once per family and before its samples, samples belonging to the family,
    /// escaped label values, no timestamps, a final newline.
    func parseExposition(_ text: String) throws -> [Sample] {
        struct Problem: Error, CustomStringConvertible { let description: String }
        guard text.hasSuffix("\n") else { throw Problem(description: "no final newline") }
        let name = #"[a-zA-Z_:][a-zA-Z0-9_:]*"#
        let help = try NSRegularExpression(pattern: #"^# HELP (\#(name)) (.*)$"#)
        let type = try NSRegularExpression(pattern: #"^# TYPE (\#(name)) (counter|gauge|untyped)$"#)
        let labelValue = #""(?:[^"\\\n]|\\[\\"n])*""#
        let sample = try NSRegularExpression(pattern:
            #"^(\#(name))(\{(?:[a-zA-Z_][a-zA-Z0-9_]*=\#(labelValue))(?:,[a-zA-Z_][a-zA-Z0-9_]*=\#(labelValue))*\})? ([-+]?(?:[0-9]+(?:\.[0-9]*)?(?:e[-+]?[0-9]+)?|Inf|NaN))$"#)
        let pair = try NSRegularExpression(pattern: #"([a-zA-Z_][a-zA-Z0-9_]*)=(\#(labelValue))"#)
        var helped: Set<String> = [], typed: [String: String] = [:], current: String?
        var samples: [Sample] = []
        func groups(_ regex: NSRegularExpression, _ line: String) -> [String?]? {
            let ns = line as NSString
            guard let match = regex.firstMatch(in: line, range: NSRange(location: 0, length: ns.length)) else { return nil }
            return (0..<match.numberOfRanges).map { match.range(at: $0).location == NSNotFound ? nil : ns.substring(with: match.range(at: $0)) }
        }
        for line in text.dropLast().split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if let g = groups(help, line), let family = g[1] {
                guard helped.insert(family).inserted else { throw Problem(description: "HELP twice for \(family)") }
                current = family
            } else if let g = groups(type, line), let family = g[1], let kind = g[2] {
                guard typed[family] == nil, current == family else { throw Problem(description: "TYPE out of place: \(line)") }
                typed[family] = kind
            } else if let g = groups(sample, line), let metric = g[1], let value = g[3] {
                guard metric == current, typed[metric] != nil else { throw Problem(description: "sample outside its family: \(line)") }
                var labels: [String: String] = [:]
                if let labelText = g[2] {
                    let ns = labelText as NSString
                    for match in pair.matches(in: labelText, range: NSRange(location: 0, length: ns.length)) {
                        let raw = ns.substring(with: match.range(at: 2)).dropFirst().dropLast()
                        labels[ns.substring(with: match.range(at: 1))] = raw.replacingOccurrences(of: "\\n", with: "\n")
                            .replacingOccurrences(of: "\\\"", with: "\"").replacingOccurrences(of: "\\\\", with: "\\")
                    }
                }
                let number = value == "+Inf" || value == "Inf" ? Double.infinity : value == "-Inf" ? -Double.infinity : Double(value) ?? .nan
                samples.append(Sample(name: metric, labels: labels, value: number))
            } else {
                throw Problem(description: "not exposition format: \(line)")
            }
        }
        return samples
    }

    func testEveryLineIsValidExpositionFormat() throws {
        var snapshot = MetricsSnapshot()
        snapshot.state = .recording
        snapshot.bytesWrittenTotal = 123_456_789_012
        snapshot.segmentsTotal = 4
        snapshot.recordingsTotal = 2
        snapshot.droppedFramesTotal = 17
        snapshot.droppedAudioChunksTotal = 9
        snapshot.freeBytes = 9_876_543_210
        snapshot.totalBytes = 32_000_000_000
        snapshot.cameraUp = true
        snapshot.microphoneUp = false
        snapshot.audioXrunsTotal = 3
        snapshot.pinFailuresTotal = 5
        snapshot.defaultPIN = true
        snapshot.controlClients = 2
        snapshot.uptimeSeconds = 3600.5
        snapshot.eventsToday = 7
        snapshot.motionScorePercent = 2.25
        snapshot.eventRecording = true
        snapshot.deviceID = "0b6c1c52-0d0e-4a8e-8a4c-2f0e3b1d9f00"
        snapshot.version = "0.1.0 \"beta\"\\x\nnext"
        let text = MetricsFormatter.text(snapshot)
        let samples = try parseExposition(text)
        func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
            samples.first { $0.name == "kioskcam_" + name && $0.labels == labels }?.value
        }
        XCTAssertEqual(value("recording"), 1)
        XCTAssertEqual(value("recorder_state", ["state": "recording"]), 1)
        XCTAssertEqual(value("recorder_state", ["state": "idle"]), 0)
        XCTAssertEqual(value("bytes_written_total"), 123_456_789_012)
        XCTAssertEqual(value("segments_total"), 4)
        XCTAssertEqual(value("dropped_frames_total"), 17)
        XCTAssertEqual(value("dropped_audio_chunks_total"), 9)
        XCTAssertEqual(value("free_bytes"), 9_876_543_210)
        XCTAssertEqual(value("camera_up"), 1)
        XCTAssertEqual(value("microphone_up"), 0)
        XCTAssertEqual(value("audio_xruns_total"), 3)
        XCTAssertEqual(value("pin_failures_total"), 5)
        XCTAssertEqual(value("default_pin"), 1)
        XCTAssertEqual(value("uptime_seconds"), 3600.5)
        XCTAssertEqual(value("events_today"), 7)
        XCTAssertEqual(value("motion_score_percent"), 2.25)
        XCTAssertEqual(value("event_recording"), 1)
        XCTAssertEqual(value("info", ["device_id": snapshot.deviceID, "version": snapshot.version]), 1, "label escaping round-trips")
        XCTAssertTrue(text.contains("# TYPE kioskcam_bytes_written_total counter\n"), text)

        // Counters end in _total; unknown free space is left out, not exported as 0.
        for line in text.split(separator: "\n") where line.hasPrefix("# TYPE") && line.hasSuffix("counter") {
            XCTAssertTrue(line.split(separator: " ")[2].hasSuffix("_total"), String(line))
        }
        let idle = MetricsFormatter.text(MetricsSnapshot())
        XCTAssertNoThrow(try parseExposition(idle))
        XCTAssertFalse(idle.contains("kioskcam_free_bytes"))
        XCTAssertFalse(idle.contains("kioskcam_events_today"), "events off: no event metrics, rather than zeros")
    }

    func testTheParserRejectsWhatTheCollectorRejects() {
        for bad in ["kioskcam_x 1\n", "# HELP kioskcam_x x\n# TYPE kioskcam_x gauge\nkioskcam_x 1 1700000000\n",
                    "# HELP kioskcam_x x\n# TYPE kioskcam_x gauge\nkioskcam_x{a=\"b\"c} 1\n",
                    "# HELP kioskcam_x x\n# TYPE kioskcam_x gauge\nkioskcam_x 1"] {
            XCTAssertThrowsError(try parseExposition(bad), bad)
        }
        XCTAssertEqual(MetricsFormatter.number(.infinity), "+Inf")
        XCTAssertEqual(MetricsFormatter.number(.nan), "NaN")
        XCTAssertEqual(MetricsFormatter.number(2), "2")
    }
}
