import Glibc
import KioskCore
import XCTest
@testable import KioskALSA

/// Runs against real alsa-lib. This machine has no sound card, so the capture tests use
/// ALSA's software PCMs: `null` (negotiates like a device, delivers silence as fast as
/// it is read) and `file` over `null` reading a pipe that a test thread fills every
/// 20 ms (real-time pacing, see `PacedPipeWriter`). The hardware path (`hw:Loopback,1,0`)
/// runs in the QEMU HIL guest.
final class ALSAMicrophoneTests: XCTestCase {
    private let mono48k = AudioFormat(sampleRate: 48_000, channels: 1)

    func testNullDeviceNegotiatesTheRequestedFormat() throws {
        let mic = try ALSAMicrophone(device: "null", format: mono48k)
        XCTAssertEqual(mic.format, mono48k)
        XCTAssertEqual(mic.periodFrames, 960, "20 ms at 48 kHz")
        XCTAssertEqual(mic.bufferFrames, 4 * 960)
        XCTAssertEqual(mic.name, "ALSA null")

        let stereo = try ALSAMicrophone(device: "null", format: AudioFormat(sampleRate: 44_100, channels: 2),
                                        periodMilliseconds: 40)
        XCTAssertEqual(stereo.format, AudioFormat(sampleRate: 44_100, channels: 2))
        XCTAssertEqual(stereo.periodFrames, 1764)
    }

    func testNullDeviceDeliversWholePeriodsUntilStopped() throws {
        let mic = try ALSAMicrophone(device: "null", format: mono48k)
        let sink = RecordingSink(keep: 200)
        try mic.start(into: sink)
        XCTAssertTrue(sink.wait(forChunks: 20, seconds: 5))
        mic.stop()
        XCTAssertEqual(sink.ends, [.stopped])
        let chunks = sink.chunks
        XCTAssertGreaterThanOrEqual(chunks.count, 20)
        for chunk in chunks {
            XCTAssertEqual(chunk.byteCount, 960 * 2)
            XCTAssertEqual(chunk.format, mono48k)
        }
        // `null` is not paced, so chunks may share a stamp, but never go back in time.
        for (earlier, later) in zip(chunks, chunks.dropFirst()) {
            XCTAssertLessThanOrEqual(earlier.timestamp, later.timestamp)
        }
        XCTAssertEqual(mic.overruns, 0)
    }

    func testPacedCaptureStampsEachChunkWithItsMonotonicCaptureTime() throws {
        let writer = try XCTUnwrap(PacedPipeWriter())
        let mic = try ALSAMicrophone(device: "kioskcam_paced", format: mono48k,
                                     configuration: writer.configuration(name: "kioskcam_paced"))
        let diagnostics = DiagnosticLog()
        mic.onDiagnostic = { diagnostics.append($0) }
        let sink = RecordingSink()
        writer.start(frames: 960, periodNanoseconds: 20_000_000)
        try mic.start(into: sink)
        let arrived = sink.wait(forChunks: 25, seconds: 10)
        mic.stop()
        writer.stop()
        XCTAssertTrue(arrived)
        XCTAssertEqual(sink.ends, [.stopped])
        XCTAssertEqual(diagnostics.lines, [], "driver timestamps were used, no recovery was needed")

        let chunks = sink.chunks
        XCTAssertGreaterThanOrEqual(chunks.count, 25)
        for chunk in chunks {
            XCTAssertEqual(chunk.byteCount, 1920)
            // Stamped on CLOCK_MONOTONIC: before its delivery, by about the period plus
            // the frames still queued (here always the whole 80 ms ring).
            let age = chunk.deliveredAt.seconds(since: chunk.timestamp)
            XCTAssertGreaterThan(age, 0.02)
            XCTAssertLessThan(age, 0.5)
        }
        // Each chunk holds one block the writer wrote: the data is what was "captured".
        let values = chunks.map { Int($0.samples[0]) }
        for (chunk, value) in zip(chunks, values) {
            XCTAssertTrue(chunk.samples.allSatisfy { Int($0) == value })
        }
        XCTAssertEqual(values, Array(values[0]..<(values[0] + values.count)), "no block lost or repeated")

        let gaps = zip(chunks, chunks.dropFirst()).map { $1.timestamp.seconds(since: $0.timestamp) }
        XCTAssertTrue(gaps.allSatisfy { $0 > 0 }, "strictly increasing: \(gaps)")
        let mean = gaps.reduce(0, +) / Double(gaps.count)
        XCTAssertEqual(mean, 0.020, accuracy: 0.003, "about 20 ms apart: \(gaps)")
    }

    func testMissingDeviceNamesTheDeviceAndHowToFindOne() {
        XCTAssertThrowsError(try ALSAMicrophone(device: "hw:7,0", format: mono48k)) { error in
            guard let error = error as? ALSAError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.code, .deviceMissing)
            XCTAssertEqual(error.call, .open)
            XCTAssertNotNil(error.errno)
            XCTAssertTrue(error.description.contains("hw:7,0"), error.description)
            XCTAssertTrue(error.description.contains("arecord -l"), error.description)
            XCTAssertTrue(error.description.contains("microphone.source"), error.description)
            XCTAssertTrue(error.description.contains(error.systemMessage ?? "?"), error.description)
        }
        XCTAssertThrowsError(try ALSAMicrophone(device: "no-such-pcm", format: mono48k)) { error in
            XCTAssertEqual((error as? ALSAError)?.code, .deviceMissing)
        }
    }

    func testBadConfigurationTextIsReportedAsSuch() {
        XCTAssertThrowsError(try ALSAMicrophone(device: "x", format: mono48k, configuration: "pcm.x { type ")) { error in
            let error = error as? ALSAError
            XCTAssertEqual(error?.call, .loadConfiguration)
            XCTAssertTrue(error?.description.contains("asoundrc") ?? false, "\(String(describing: error))")
        }
    }

    func testNonsenseChannelCountAndRateAreRefusedWithWhatTheDeviceOffers() {
        XCTAssertThrowsError(try ALSAMicrophone(device: "null", format: AudioFormat(sampleRate: 48_000, channels: 0))) {
            let error = $0 as? ALSAError
            XCTAssertEqual(error?.code, .unsupported)
            XCTAssertEqual(error?.call, .setChannels(0))
            XCTAssertTrue(error?.description.contains("channels") ?? false)
        }
        XCTAssertThrowsError(try ALSAMicrophone(device: "null", format: AudioFormat(sampleRate: -5, channels: 1))) {
            XCTAssertEqual(($0 as? ALSAError)?.call, .setSampleRate(-5))
        }
        XCTAssertThrowsError(try ALSAMicrophone(device: "null", format: mono48k, periodMilliseconds: 0)) {
            XCTAssertEqual(($0 as? ALSAError)?.call, .setPeriod(milliseconds: 0))
        }
    }

    func testStartTwiceOrAfterStopIsAnError() throws {
        let mic = try ALSAMicrophone(device: "null", format: mono48k)
        let sink = RecordingSink(keep: 1)
        try mic.start(into: sink)
        XCTAssertThrowsError(try mic.start(into: sink)) {
            XCTAssertEqual(($0 as? ALSAError)?.call, .start)
            XCTAssertEqual(($0 as? ALSAError)?.code, .invalidState)
            XCTAssertTrue("\($0)".contains("already capturing"), "\($0)")
        }
        mic.stop()
        mic.stop()
        XCTAssertThrowsError(try mic.start(into: sink)) {
            XCTAssertEqual(($0 as? ALSAError)?.errno, EBADFD)
            XCTAssertTrue("\($0)".contains("open a new ALSAMicrophone"), "\($0)")
        }
        XCTAssertEqual(sink.ends, [.stopped])
    }

    func testDroppingAStartedMicrophoneStopsItsThread() throws {
        let sink = RecordingSink(keep: 5)
        do {
            let mic = try ALSAMicrophone(device: "null", format: mono48k)
            try mic.start(into: sink)
            XCTAssertTrue(sink.wait(forChunks: 5, seconds: 5))
        }
        XCTAssertEqual(sink.ends, [.stopped], "deinit stopped the thread before closing the PCM")
    }

    func testReleasingTheMicrophoneOnItsOwnCaptureThreadIsSafe() throws {
        let sink = ReleasingSink()
        try sink.startOwning(ALSAMicrophone(device: "null", format: mono48k))
        XCTAssertTrue(sink.waitForEnd(seconds: 5))
        XCTAssertEqual(sink.ends, [.stopped])
        XCTAssertTrue(sink.releasedOnCaptureThread)
    }
}

/// Holds the only reference to a microphone and drops it inside its third delivery, as
/// a pipeline tearing itself down from a callback would.
final class ReleasingSink: CaptureSink, @unchecked Sendable {
    private let lock = NSCondition()
    private var microphone: ALSAMicrophone?
    private var delivered = 0
    private var endings: [SourceEnd] = []
    private var releasedOnLoop = false

    var ends: [SourceEnd] { lock.withLock { endings } }
    var releasedOnCaptureThread: Bool { lock.withLock { releasedOnLoop } }

    func startOwning(_ microphone: ALSAMicrophone) throws {
        lock.withLock { self.microphone = microphone }
        try microphone.start(into: self)
    }

    func deliver(_ frame: VideoFrame) {}

    func deliver(_ chunk: AudioChunk) {
        var released: ALSAMicrophone? = lock.withLock {
            delivered += 1
            guard delivered == 3 else { return nil }
            defer { microphone = nil }
            return microphone
        }
        if released != nil {
            released = nil  // the last reference: deinit runs here, on the capture thread
            lock.withLock { releasedOnLoop = !Thread.isMainThread }
        }
    }

    func videoSourceEnded(_ name: String, _ end: SourceEnd) {}

    func audioSourceEnded(_ name: String, _ end: SourceEnd) {
        lock.withLock {
            endings.append(end)
            lock.broadcast()
        }
    }

    func waitForEnd(seconds: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        return lock.withLock {
            while endings.isEmpty { if !lock.wait(until: deadline) { return false } }
            return true
        }
    }
}

/// Collects diagnostic lines from the capture thread.
final class DiagnosticLog: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String] = []
    func append(_ line: String) { lock.withLock { stored.append(line) } }
    var lines: [String] { lock.withLock { stored } }
}
