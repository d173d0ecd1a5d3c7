import Foundation
import KioskCore
import XCTest
@testable import KioskALSA

/// The same microphone against a real kernel device, for the HIL guest:
///
///     KIOSKCAM_TEST_ALSA_DEVICE=hw:Loopback,1,0 swift test --filter ALSAHardwareTests
///
/// (`KIOSKCAM_TEST_ALSA_CHANNELS`, default 1.) Skipped when the variable is not set.
final class ALSAHardwareTests: XCTestCase {
    private var device = ""
    private var format = AudioFormat(sampleRate: 48_000, channels: 1)

    override func setUpWithError() throws {
        let environment = ProcessInfo.processInfo.environment
        guard let device = environment["KIOSKCAM_TEST_ALSA_DEVICE"], !device.isEmpty else {
            throw XCTSkip("set KIOSKCAM_TEST_ALSA_DEVICE (e.g. hw:Loopback,1,0) to run against a sound card")
        }
        self.device = device
        format.channels = environment["KIOSKCAM_TEST_ALSA_CHANNELS"].flatMap(Int.init) ?? 1
    }

    func testDeliversPeriodsStampedOnTheMonotonicClock() throws {
        let mic = try ALSAMicrophone(device: device, format: format)
        let diagnostics = DiagnosticLog()
        mic.onDiagnostic = { diagnostics.append($0) }
        let sink = RecordingSink()
        try mic.start(into: sink)
        let arrived = sink.wait(forChunks: 50, seconds: 5)
        mic.stop()
        XCTAssertTrue(arrived)
        XCTAssertEqual(sink.ends, [.stopped])
        XCTAssertEqual(diagnostics.lines, [], "driver timestamps, no xruns")
        let chunks = sink.chunks
        for chunk in chunks {
            XCTAssertEqual(chunk.byteCount, mic.periodFrames * mic.format.bytesPerFrame)
            let age = chunk.deliveredAt.seconds(since: chunk.timestamp)
            XCTAssertGreaterThan(age, 0)
            XCTAssertLessThan(age, 0.5)
        }
        let gaps = zip(chunks, chunks.dropFirst()).map { $1.timestamp.seconds(since: $0.timestamp) }
        let period = Double(mic.periodFrames) / Double(mic.format.sampleRate)
        for gap in gaps { XCTAssertEqual(gap, period, accuracy: 0.005, "\(gaps)") }
    }

    func testOverrunIsRecoveredCountedAndLeftAsAGapInTheTimestamps() throws {
        let mic = try ALSAMicrophone(device: device, format: format)
        let diagnostics = DiagnosticLog()
        mic.onDiagnostic = { diagnostics.append($0) }
        // Blocking the capture thread for 0.4 s overflows the ~80 ms ring.
        let sink = RecordingSink(stall: (chunk: 5, seconds: 0.4))
        try mic.start(into: sink)
        let arrived = sink.wait(forChunks: 40, seconds: 10)
        mic.stop()
        XCTAssertTrue(arrived)
        XCTAssertEqual(sink.ends, [.stopped], "an overrun does not end capture")
        XCTAssertGreaterThanOrEqual(mic.overruns, 1)
        XCTAssertTrue(diagnostics.lines.contains { $0.contains("overrun") }, "\(diagnostics.lines)")
        let gaps = zip(sink.chunks, sink.chunks.dropFirst()).map { $1.timestamp.seconds(since: $0.timestamp) }
        XCTAssertNotNil(gaps.first { $0 > 0.2 }, "the lost time shows in the timestamps: \(gaps)")
        XCTAssertTrue(gaps.allSatisfy { $0 > 0 })
    }

    func testProbeListsTheDevice() throws {
        guard device.hasPrefix("hw:") else { throw XCTSkip("probe lists hw: devices only") }
        let devices = ALSADevices.captureDevices()
        XCTAssertFalse(devices.isEmpty)
        for entry in devices where entry.error == nil {
            XCTAssertEqual(entry.capabilities?.supportsS16, true, "\(entry)")
            XCTAssertFalse(entry.capabilities?.rates.isEmpty ?? true, "\(entry)")
        }
    }
}
