import Foundation
import Glibc
import KioskCore
import XCTest
@testable import KioskALSA

/// The player against real alsa-lib. This machine has no sound card: `null` takes
/// playback without pacing it, which is enough for sizing, draining, stopping and
/// errors. `ALSAPlayerLoopbackTests` plays through snd-aloop in the HIL guest.
final class ALSAPlayerTests: XCTestCase {
    func testBuffersAreTheSeedsThreeHalfSeconds() throws {
        let player = try ALSAPlayer(device: "null", format: AudioFormat(sampleRate: 48_000, channels: 2))
        XCTAssertEqual(player.periodFrames, 24_000, "96000 bytes of 48 kHz stereo S16")
        XCTAssertEqual(player.bufferFrames, 3 * 24_000)
        XCTAssertEqual(try player.finish(), .finished)

        let low = try ALSAPlayer(device: "null", format: AudioFormat(sampleRate: 8000, channels: 1))
        XCTAssertEqual(low.periodFrames, 8192, "the 16 KiB floor")
        XCTAssertEqual(try low.finish(), .finished)
    }

    func testPlaysEverythingToTheEndAndDrains() throws {
        let player = try ALSAPlayer(device: "null", format: AudioFormat(sampleRate: 48_000, channels: 1))
        let tone = (0..<48_000).map { Int16(12_000 * sin(2 * Double.pi * 1000 * Double($0) / 48_000)) }
        // Handed on in odd-sized pieces, as a decoder does (1024-sample AAC frames).
        var offset = 0
        while offset < tone.count {
            let end = min(tone.count, offset + 1024)
            let more = try tone[offset..<end].withUnsafeBufferPointer { try player.write($0) }
            XCTAssertTrue(more)
            offset = end
        }
        XCTAssertEqual(try player.finish(), .finished)
        XCTAssertEqual(player.playedFrames, 48_000)
        XCTAssertEqual(player.underruns, 0)
    }

    func testTheLastPartialPeriodIsPaddedButNotCountedAsPlayed() throws {
        let player = try ALSAPlayer(device: "null", format: AudioFormat(sampleRate: 48_000, channels: 2))
        let samples = [Int16](repeating: 1000, count: 2 * 24_256)   // one period and 256 frames
        XCTAssertTrue(try samples.withUnsafeBufferPointer { try player.write($0) })
        XCTAssertEqual(try player.finish(), .finished)
        XCTAssertEqual(player.playedFrames, 24_256, "the padding is silence, not the recording's time")
    }

    func testStopWakesAPausedPlayerAndDropsTheRest() throws {
        let player = try ALSAPlayer(device: "null", format: AudioFormat(sampleRate: 48_000, channels: 1))
        player.pause()
        XCTAssertTrue(player.isPaused)
        let stopper = Thread { usleep(200_000); player.stop() }
        let started = Date()
        stopper.start()
        let second = [Int16](repeating: 100, count: 48_000)
        let more = try second.withUnsafeBufferPointer { try player.write($0) }
        let waited = Date().timeIntervalSince(started)
        XCTAssertFalse(more, "stop() ends the write")
        XCTAssertGreaterThanOrEqual(waited, 0.15, "paused: nothing was written before stop()")
        XCTAssertLessThan(waited, 2, "stop() wakes the paused player at once")
        XCTAssertEqual(try player.finish(), .stopped)
    }

    func testRestartDropsWhatIsQueuedAndPlaysOnThroughTheSameDevice() throws {
        let player = try ALSAPlayer(device: "null", format: AudioFormat(sampleRate: 48_000, channels: 1))
        let second = [Int16](repeating: 100, count: 48_000)
        XCTAssertTrue(try second.withUnsafeBufferPointer { try player.write($0) })
        XCTAssertEqual(player.playedFrames, 48_000, "null plays at once")
        player.stop()   // a seek cuts the pass short
        XCTAssertFalse(try second.withUnsafeBufferPointer { try player.write($0) }, "stopped")
        try player.restart()
        XCTAssertEqual(player.playedFrames, 0, "counted afresh from the restart")
        let part = [Int16](repeating: 100, count: 24_256)
        XCTAssertTrue(try part.withUnsafeBufferPointer { try player.write($0) }, "the restart cleared the stop")
        XCTAssertEqual(try player.drain(), .finished)
        XCTAssertEqual(player.playedFrames, 24_256)
        // After the end (a seek back once it has played out): the drained device is prepared again.
        try player.restart()
        XCTAssertTrue(try part.withUnsafeBufferPointer { try player.write($0) })
        XCTAssertEqual(try player.finish(), .finished)
        XCTAssertEqual(player.playedFrames, 24_256)
        XCTAssertThrowsError(try player.restart(), "closed by finish()") { error in
            XCTAssertEqual((error as? ALSAError)?.call, .restartPlayback, "\(error)")
            XCTAssertTrue("\(error)".contains("prepare playback again after a seek"), "\(error)")
        }
        player.close()   // a second close does nothing
    }

    func testVolumeIsClamped() throws {
        let player = try ALSAPlayer(device: "null", format: AudioFormat(sampleRate: 48_000, channels: 1))
        player.volume = 3
        XCTAssertEqual(player.volume, 1)
        player.volume = -1
        XCTAssertEqual(player.volume, 0)
        _ = try player.finish()
    }

    func testAMissingDeviceIsAClearErrorAtOnce() {
        let started = Date()
        for name in ["hw:99,0", "no_such_pcm"] {
            XCTAssertThrowsError(try ALSAPlayer(device: name, format: AudioFormat(sampleRate: 48_000, channels: 1))) { error in
                guard let error = error as? ALSAError else { return XCTFail("\(error)") }
                XCTAssertEqual(error.code, .deviceMissing, error.description)
                XCTAssertTrue(error.description.contains(name), error.description)
                XCTAssertTrue(error.description.contains("open for playback"), error.description)
                XCTAssertTrue(error.description.contains("aplay -l"), error.description)
            }
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 2)
    }

    func testAFormatTheDeviceRefusesNamesTheConvertingDevices() {
        // `null` takes every real format; a stream of 0 channels is refused as a
        // negotiation failure before the device is asked, through the same mapping.
        XCTAssertThrowsError(try ALSAPlayer(device: "null", format: AudioFormat(sampleRate: 48_000, channels: 0))) { error in
            guard let error = error as? ALSAError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.code, .unsupported, error.description)
            XCTAssertTrue(error.description.contains("alsa:default"), error.description)
            XCTAssertFalse(error.description.contains("microphone"), error.description)
        }
    }

    func testPlaybackHintsSpeakOfPlaybackNotTheMicrophone() {
        let busy = ALSAError(device: "hw:0,0", operation: .openPlayback, result: -EBUSY)
        XCTAssertEqual(busy.code, .busy)
        XCTAssertTrue(busy.description.contains("another program is playing"), busy.description)
        XCTAssertFalse(busy.description.contains("microphone"), busy.description)
        let capture = ALSAError(device: "hw:0,0", operation: .open, result: -EBUSY)
        XCTAssertFalse(capture.description.contains("playing"), capture.description)
    }
}

/// A 1 kHz tone played to snd-aloop's `hw:Loopback,0,0` is captured back from
/// `hw:Loopback,1,0` by kioskcam's own microphone: the right frequency, the right
/// length, no gap. Skipped where no Loopback card exists (the host); the HIL capture
/// scenario runs it in the guest (`modprobe snd-aloop`).
final class ALSAPlayerLoopbackTests: XCTestCase {
    /// Skips where no snd-aloop card exists (the host); the HIL guest loads it.
    private func requireLoopbackCard() throws {
        let cards = (try? String(contentsOfFile: "/proc/asound/cards", encoding: .utf8)) ?? ""
        guard cards.contains("Loopback") else {
            throw XCTSkip("no snd-aloop Loopback card in /proc/asound/cards (runs in the HIL guest)")
        }
    }

    /// kioskcam's own capture listening on the loopback's far end, with 0.3 s of silence
    /// recorded before the caller plays; the caller stops the microphone.
    private func listenOnTheLoopback(_ format: AudioFormat) throws -> (microphone: ALSAMicrophone, sink: RecordingSink) {
        try requireLoopbackCard()
        let mic = try ALSAMicrophone(device: "hw:Loopback,1,0", format: format)
        let sink = RecordingSink(keep: 100_000)
        try mic.start(into: sink)
        usleep(300_000)
        return (mic, sink)
    }

    /// `frames` of a sine at `hertz`, a little under half of full scale.
    private func tone(_ hertz: Double, frames: Int, rate: Int) -> [Int16] {
        (0..<frames).map { Int16(12_000 * sin(2 * Double.pi * hertz * Double($0) / Double(rate))) }
    }

    func testAToneComesBackWithItsFrequencyLengthAndNoGap() throws {
        let rate = 48_000
        let format = AudioFormat(sampleRate: rate, channels: 1)
        let (mic, sink) = try listenOnTheLoopback(format)   // with silence before the tone
        defer { mic.stop() }

        let player = try ALSAPlayer(device: "hw:Loopback,0,0", format: format)
        // 2 s and 256 frames, as a 2 s AAC file decodes: four whole periods and a
        // partial one, which the player pads (the end of the sound was lost without).
        let frames = 96_256
        let seconds = Double(frames) / Double(rate)
        let tone = tone(1000, frames: frames, rate: rate)
        var offset = 0
        while offset < tone.count {
            let end = min(tone.count, offset + 1024)
            _ = try tone[offset..<end].withUnsafeBufferPointer { try player.write($0) }
            offset = end
        }
        XCTAssertEqual(try player.finish(), .finished)
        XCTAssertEqual(player.underruns, 0)
        usleep(400_000)   // silence after it
        mic.stop()

        let samples = sink.chunks.flatMap(\.samples)
        let loud = 2000
        guard let first = samples.firstIndex(where: { abs(Int($0)) > loud }),
              let last = samples.lastIndex(where: { abs(Int($0)) > loud }) else {
            return XCTFail("no tone came back (\(samples.count) samples captured)")
        }
        let heard = Double(last - first + 1) / Double(rate)
        XCTAssertEqual(heard, seconds, accuracy: 0.05, "the tone's length")
        // A gap: half a cycle (24 samples) or more of quiet inside the tone.
        var quiet = 0, longest = 0
        for sample in samples[first...last] {
            quiet = abs(Int(sample)) > loud ? 0 : quiet + 1
            longest = max(longest, quiet)
        }
        XCTAssertLessThan(longest, 24, "no gap inside the tone (longest quiet run \(longest) samples)")
        let tone1 = samples[first...last]
        let crossings = zip(tone1, tone1.dropFirst()).filter { ($0 < 0) != ($1 < 0) }.count
        let hertz = Double(crossings) / 2 / heard
        XCTAssertEqual(hertz, 1000, accuracy: 10, "the tone's frequency")
        XCTAssertEqual(mic.overruns, 0)
    }

    /// The played count is the device's, read when asked: with nothing written for
    /// 0.3 s it has moved on with the time (it once stood still until the next write, and
    /// the media player's picture followed that stale clock up to 0.4 s late).
    func testPlayedFramesMoveOnWithTheSoundBetweenWrites() throws {
        try requireLoopbackCard()
        let format = AudioFormat(sampleRate: 48_000, channels: 1)
        let mic = try ALSAMicrophone(device: "hw:Loopback,1,0", format: format)
        try mic.start(into: RecordingSink(keep: 10))
        defer { mic.stop() }
        let player = try ALSAPlayer(device: "hw:Loopback,0,0", format: format)
        let second = [Int16](repeating: 1000, count: 48_000)
        // Two whole periods: playing from the first, with room left, so write returns.
        XCTAssertTrue(try second.withUnsafeBufferPointer { try player.write($0) })
        usleep(100_000)
        let (before, start) = (player.playedFrames, monotonicNow())
        usleep(300_000)
        let (after, end) = (player.playedFrames, monotonicNow())
        let elapsed = Double(end.nanoseconds(since: start)) / 1e9
        XCTAssertEqual(Double(after - before) / 48_000, elapsed, accuracy: 0.03,
                       "played \(after - before) frames in \(elapsed) s with no write between")
        player.stop()
        XCTAssertEqual(try player.finish(), .stopped)
    }

    /// A seek on a real card: 1 s of 1 kHz queued, cut after 0.3 s by `stop()` +
    /// `restart()` on the same PCM, then 0.75 s of 2 kHz: the 1 kHz tone stops short, the
    /// 2 kHz one comes back whole and without a gap.
    func testRestartCutsTheQueuedSoundAndPlaysTheNextWholeOnTheSameDevice() throws {
        let rate = 48_000
        let format = AudioFormat(sampleRate: rate, channels: 1)
        let (mic, sink) = try listenOnTheLoopback(format)
        defer { mic.stop() }
        let player = try ALSAPlayer(device: "hw:Loopback,0,0", format: format)
        XCTAssertTrue(try tone(1000, frames: rate, rate: rate).withUnsafeBufferPointer { try player.write($0) })
        usleep(300_000)
        player.stop()
        try player.restart()
        let after = 36_000   // 0.75 s
        XCTAssertTrue(try tone(2000, frames: after, rate: rate).withUnsafeBufferPointer { try player.write($0) })
        XCTAssertEqual(try player.finish(), .finished)
        usleep(400_000)
        mic.stop()

        // Each 10 ms: silent, 1 kHz (2 zero crossings a millisecond) or 2 kHz (4), judged
        // over the window's sounding part only, so a window the tone ends in is not slower.
        let samples = sink.chunks.flatMap(\.samples)
        var kinds: [Int] = []
        for start in stride(from: 0, to: samples.count - 480, by: 480) {
            let window = samples[start..<(start + 480)]
            guard let first = window.firstIndex(where: { abs(Int($0)) > 2000 }),
                  let last = window.lastIndex(where: { abs(Int($0)) > 2000 }), last - first >= 48 else {
                kinds.append(0)
                continue
            }
            let sounding = window[first...last]
            let crossings = zip(sounding, sounding.dropFirst()).filter { ($0 < 0) != ($1 < 0) }.count
            kinds.append(Double(crossings) / (Double(last - first) / 48) > 3 ? 2 : 1)
        }
        let low = Double(kinds.filter { $0 == 1 }.count) / 100
        guard let first = kinds.firstIndex(of: 2), let last = kinds.lastIndex(of: 2) else {
            return XCTFail("no 2 kHz came back after the restart: \(kinds)")
        }
        let high = Double(last - first + 1) / 100
        XCTAssertLessThan(low, 0.8, "the 1 kHz second was cut short (heard \(low) s)")
        XCTAssertGreaterThan(low, 0.1, "the 1 kHz tone played before the restart")
        XCTAssertEqual(high, 0.75, accuracy: 0.05, "the sound after the restart, whole")
        XCTAssertFalse(kinds[first...last].contains(0), "no gap in the sound after the restart")
        XCTAssertFalse(kinds[first...].contains(1), "nothing queued before the restart plays after it")
        XCTAssertEqual(player.underruns, 0)
    }
}
