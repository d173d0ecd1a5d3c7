import Foundation
import XCTest
@testable import KioskCore

/// Mutated and random lines through the request parser: every one must give a call or
/// a failure with a known code, never a crash, a hang or an unbounded message.
final class ControlFuzzTests: XCTestCase {
    /// A small deterministic generator (SplitMix64), so a failure can be replayed.
    struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static let seeds: [String] = [
        #"{"v":1,"id":7,"cmd":"record.start","args":{"audio_only":true,"duration":30}}"#,
        #"{"v":1,"id":1,"cmd":"status"}"#,
        #"{"v":1,"id":2,"cmd":"record.stop"}"#,
        #"{"v":1,"id":3,"cmd":"list","args":{"date":"20261122"}}"#,
        #"{"v":1,"id":4,"cmd":"purge","args":{"dry_run":true}}"#,
        #"{"v":1,"id":5,"cmd":"pin.set","args":{"pin":"8642"}}"#,
        #"{"v":1,"id":6,"cmd":"subscribe","args":{"events":["state","levels","touch"]}}"#,
        #"{"v":1,"id":9,"cmd":"snapshot"}"#,
        #"{"v":1,"id":10,"cmd":"screenshot","args":null}"#,
    ]

    /// Fragments that tend to reach deep parser paths.
    static let tokens: [String] = [
        "{", "}", "[", "]", "\"", ":", ",", "null", "true", "false", "-0", "1e999", "-1e-999", "9223372036854775808",
        "0.1", "\\u0000", "\\ud800", "\\\"", "\u{FEFF}", "é", "\u{10FFFF}", "\"v\":1", "\"cmd\":", "\"args\":{", "\"pin\":\"",
        "\"id\":", "NaN", "Infinity", " ", "\t", "\r", "\n",
    ]

    func mutate(_ input: [UInt8], _ rng: inout SplitMix) -> [UInt8] {
        var bytes = input
        for _ in 0..<Int.random(in: 1...4, using: &rng) {
            switch Int.random(in: 0..<9, using: &rng) {
            case 0 where !bytes.isEmpty:  // flip a bit
                let i = Int.random(in: 0..<bytes.count, using: &rng)
                bytes[i] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &rng)
            case 1 where !bytes.isEmpty:  // replace a byte with anything
                bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
            case 2:  // insert a random byte
                bytes.insert(UInt8.random(in: 0...255, using: &rng), at: Int.random(in: 0...bytes.count, using: &rng))
            case 3 where !bytes.isEmpty:  // delete a range
                let start = Int.random(in: 0..<bytes.count, using: &rng)
                bytes.removeSubrange(start..<min(bytes.count, start + Int.random(in: 1...8, using: &rng)))
            case 4:  // insert a token
                let token = Array(Self.tokens.randomElement(using: &rng)!.utf8)
                bytes.insert(contentsOf: token, at: Int.random(in: 0...bytes.count, using: &rng))
            case 5 where !bytes.isEmpty:  // truncate
                bytes.removeLast(Int.random(in: 0..<bytes.count, using: &rng))
            case 6:  // splice with another seed
                let other = Array(Self.seeds.randomElement(using: &rng)!.utf8)
                let cut = Int.random(in: 0...bytes.count, using: &rng)
                bytes = Array(bytes[..<cut]) + other[Int.random(in: 0...other.count, using: &rng)...]
            case 7 where !bytes.isEmpty:  // duplicate a range
                let start = Int.random(in: 0..<bytes.count, using: &rng)
                let slice = bytes[start..<min(bytes.count, start + Int.random(in: 1...16, using: &rng))]
                bytes.insert(contentsOf: slice, at: Int.random(in: 0...bytes.count, using: &rng))
            default:  // swap two bytes
                guard bytes.count > 1 else { continue }
                bytes.swapAt(Int.random(in: 0..<bytes.count, using: &rng), Int.random(in: 0..<bytes.count, using: &rng))
            }
        }
        return bytes
    }

    func testHundredThousandMutatedAndRandomRequests() {
        var rng = SplitMix(state: 0x6B69_6F73_6B63_616D)
        let seeds = Self.seeds.map { Array($0.utf8) }
        let total = 100_000
        var parsed = 0
        var codes: [ControlErrorCode: Int] = [:]
        let started = Date()
        for index in 0..<total {
            let input: [UInt8]
            switch index % 10 {
            case 0:  // pure noise
                input = (0..<Int.random(in: 0...96, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            case 1:  // random tokens glued together
                input = Array((0..<Int.random(in: 1...24, using: &rng)).map { _ in Self.tokens.randomElement(using: &rng)! }.joined().utf8)
            default:
                input = mutate(seeds.randomElement(using: &rng)!, &rng)
            }
            switch ControlCall.parse(input) {
            case .success(let call):
                parsed += 1
                // Whatever parsed must re-encode to a line that parses to the same call.
                if case .success(let again) = ControlCall.parse(call.line()) {
                    XCTAssertEqual(again, call)
                } else {
                    XCTFail("re-encoded \(call) does not parse")
                }
            case .failure(let failure):
                codes[failure.error.code, default: 0] += 1
                XCTAssertLessThan(failure.error.message.utf8.count, 400, "messages stay short")
                XCTAssertFalse(failure.response.line().contains("\n"))
            }
        }
        // Pathological shapes: deep nesting, huge lines, long strings.
        let extremes: [[UInt8]] = [
            Array(String(repeating: "[", count: 60_000).utf8),
            Array(String(repeating: "{\"a\":", count: 10_000).utf8),
            Array(("{\"v\":1,\"cmd\":\"" + String(repeating: "x", count: 60_000) + "\"}").utf8),
            [UInt8](repeating: 0xFF, count: ControlProtocol.maximumLineBytes + 1),
            Array(#"{"v":1,"id":1,"cmd":"status","v":1}"#.utf8),
        ]
        for input in extremes {
            if case .failure(let failure) = ControlCall.parse(input) {
                codes[failure.error.code, default: 0] += 1
                XCTAssertLessThan(failure.error.message.utf8.count, 400)
            } else {
                parsed += 1
            }
        }
        let seconds = Date().timeIntervalSince(started)
        let summary = codes.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue) \($0.value)" }.joined(separator: ", ")
        print("control fuzz: \(total + extremes.count) inputs in \(String(format: "%.1f", seconds)) s, 0 crashes; \(parsed) parsed; \(summary)")
        XCTAssertGreaterThan(parsed, 300, "some mutations stay valid (about 0.6 %)")
        XCTAssertGreaterThan(codes[.malformedJSON] ?? 0, 1000)
        XCTAssertGreaterThan(codes[.badArgument] ?? 0, 100)
        XCTAssertGreaterThan(codes[.unknownCommand] ?? 0, 100)
    }
}
