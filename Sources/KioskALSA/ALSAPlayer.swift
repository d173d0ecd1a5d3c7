import CALSA
import Glibc
import KioskCore
import KioskWakeUp

/// Plays interleaved S16 sound through an ALSA device, in the manner of seed 003's
/// AudioQueue player: three buffers of about half a second (sized by
/// `PlaybackBufferSizing`) in flight in the device's ring, refilled as each one plays.
///
/// One thread plays: it hands sound to `write(_:)` and ends with `finish()`, which
/// drains what is queued and closes the device. A player that jumps elsewhere in the
/// sound (a seek) calls `restart()` instead: what is queued is dropped and the same
/// device is prepared again, not closed and reopened. Any thread may `pause()`, `resume()`,
/// `stop()` or set `volume`; each wakes the playing thread at once (it waits in `poll`
/// on the PCM's descriptors and a `WakeUpEvent`, never in a blocking ALSA call).
/// Underruns (-EPIPE) are recovered with `snd_pcm_prepare` and counted; a suspended
/// device is resumed, or prepared again where the driver cannot resume.
///
/// The device is opened non-blocking and holds nothing but the PCM, so a card that
/// allows it keeps capturing from its microphone meanwhile; a busy or missing device
/// is an error at once, never a wait.
///
/// Over 400 lines as one thing: one PCM, one playing thread and the states other
/// threads move it between (pause, seek, stop, volume, underrun, suspend) must be read
/// together to see that no path blocks or leaks the device.
public final class ALSAPlayer: Sendable {
    /// What happened to the sound handed to the player.
    public enum End: Sendable, Equatable {
        /// Everything was played to the end (drained).
        case finished
        /// `stop()` cut it short; what was queued was dropped.
        case stopped
    }

    /// The ALSA device name, as given.
    public let device: String
    /// The negotiated format (the rate may differ from the file's by at most 1 %).
    public let format: AudioFormat
    /// Frames in one of the three buffers (the device's period).
    public let periodFrames: Int
    /// Frames in the device's whole ring.
    public let bufferFrames: Int

    /// No room in the ring for this long means the device stopped consuming.
    static let stallMilliseconds: Int32 = 3000

    private struct State {
        var volume = 1.0
        var paused = false
        var stopRequested = false
        var underruns = 0
        var suspends = 0
        /// Frames handed to the device, and frames the listener has heard.
        var written = 0
        var played = 0
        /// Frames of sound handed on (the silence that pads the last period left out).
        var handedOn = 0
        /// Bumped by `restart()`, so a count taken before it is never applied after it.
        var restarts = 0
    }

    private let pcm: SharedPCM
    private let canPause: Bool
    private let wakeUp: WakeUpEvent
    private let state = Locked(State())
    /// The period being filled; used only by the playing thread.
    private let staging: Locked<[Int16]>

    /// Opens `device` for playback of `format` and sizes its buffers.
    /// - Parameters:
    ///   - device: An ALSA PCM name ("default", "hw:Loopback,0,0", "plughw:0,0", "null").
    ///   - format: The sound's rate and channels (S16 interleaved).
    ///   - secondsPerBuffer: Sound per buffer before the 16 KiB…320 KiB clamp.
    ///   - configuration: asoundrc text merged over the system's, for this open only.
    /// - Throws: `ALSAError` with `.openPlayback` and `.deviceMissing`, `.busy` or
    ///   `.permissionDenied`; `.unsupported` when the device refuses the format.
    public init(device: String, format: AudioFormat, secondsPerBuffer: Double = PlaybackBufferSizing.defaultSeconds,
                configuration: String? = nil) throws(ALSAError) {
        let handle = try PCMHandle(openingPlaybackOf: device, configuration: configuration)
        let frames = PlaybackBufferSizing.frames(sampleRate: format.sampleRate, channels: format.channels,
                                                 bytesPerSample: 2, seconds: secondsPerBuffer)
        let setup: PlaybackSetup
        do {
            setup = try handle.configurePlayback(format: format, periodFrames: frames,
                                                 periods: PlaybackBufferSizing.bufferCount)
        } catch var error where error.code == .unsupported {
            // The shared hint speaks of microphone settings; a recording's format is fixed.
            let plug = ALSAError.plugDeviceName(for: device)
            error.hint = "The device cannot play \(format) sound as it is; play through `alsa:\(plug)` "
                + "or `alsa:default`, which convert."
            throw error
        }
        do {
            wakeUp = try WakeUpEvent()
        } catch {
            throw ALSAError(device: device, operation: .createThread, result: -error.rawValue)
        }
        self.device = device
        self.format = setup.format
        periodFrames = max(1, setup.periodFrames)
        bufferFrames = max(periodFrames, setup.bufferFrames)
        canPause = setup.canPause
        var buffer: [Int16] = []
        buffer.reserveCapacity(max(1, setup.periodFrames) * max(1, setup.format.channels))
        staging = Locked(buffer)
        pcm = SharedPCM(handle)
    }

    // MARK: Control, from any thread

    /// The software gain, 0…1 (values outside are clamped). It applies to sound handed
    /// to `write` from now on: what is already queued (up to 1.5 s) plays as it was.
    public var volume: Double {
        get { state.withLock { $0.volume } }
        set { state.withLock { $0.volume = PlaybackGain.clamp(newValue) } }
    }

    /// Holds playback where it is (in place where the hardware can pause; otherwise the
    /// queued sound is dropped and playback resumes after it).
    public func pause() { state.withLock { $0.paused = true }; wakeUp.signal() }

    public func resume() { state.withLock { $0.paused = false }; wakeUp.signal() }

    /// Ends playback soon: `write` returns false and `finish` drops what is queued.
    public func stop() { state.withLock { $0.stopRequested = true }; wakeUp.signal() }

    public var isPaused: Bool { state.withLock { $0.paused } }
    /// Underruns recovered since the start or the last `restart()` (the device ran out
    /// of sound: a gap was heard).
    public var underruns: Int { state.withLock { $0.underruns } }
    /// Suspends (system sleep) recovered since the start or the last `restart()`.
    public var suspends: Int { state.withLock { $0.suspends } }
    /// Frames the listener has heard since the start or the last `restart()` (handed on
    /// minus what waits in the ring), asked of the device now (`snd_pcm_delay`): the
    /// playing thread updates its count only when it writes, and it sleeps up to a whole
    /// half-second period waiting for room, so a clock read from that count alone ran
    /// up to 0.5 s behind what was heard (the HIL media test saw pictures 85–400 ms late).
    public var playedFrames: Int {
        refreshPlayed()
        return state.withLock { min($0.played, $0.handedOn) }
    }

    // MARK: Playing, on one thread

    /// Queues `samples` (interleaved, `format.channels` per frame) for playback, waiting
    /// while the ring is full or playback is paused.
    /// - Returns: false once `stop()` was called (the rest need not be handed on).
    /// - Throws: `ALSAError` with `.write` when the device fails or disappears
    ///   (`.deviceMissing`), or stops taking sound for `stallMilliseconds`.
    @discardableResult
    public func write(_ samples: UnsafeBufferPointer<Int16>) throws(ALSAError) -> Bool {
        let channels = max(1, format.channels)
        let periodSamples = periodFrames * channels
        state.withLock { $0.handedOn += samples.count / channels }
        var offset = 0
        while offset < samples.count {
            let full = try staging.withLock { (buffer) throws(ALSAError) -> Bool in
                let take = min(periodSamples - buffer.count, samples.count - offset)
                buffer.append(contentsOf: UnsafeBufferPointer(rebasing: samples[offset..<(offset + take)]))
                offset += take
                return buffer.count == periodSamples
            }
            if full {
                guard try flushStaging() else { return false }
            }
        }
        return !state.withLock { $0.stopRequested }
    }

    /// Plays what is left, waits until the device has played it all (drain), and closes
    /// the device; after `stop()`, drops what is queued instead.
    /// - Throws: `ALSAError` with `.write` or `.drain` when the device fails meanwhile.
    public func finish() throws(ALSAError) -> End {
        defer { pcm.close() }
        return try drain()
    }

    /// Drops what is queued (`snd_pcm_drop`) and prepares the same device again
    /// (`snd_pcm_prepare`), for sound from elsewhere in the recording: a seek. Cheaper
    /// than closing and reopening (no renegotiation; the device stays ours, so another
    /// program cannot take it in between). Clears a `stop()` and the counts
    /// (`playedFrames`, `underruns`, `suspends` start again from 0); a pause stays.
    /// Call it on the playing thread, between `write`s, or after `drain()`.
    /// - Throws: `ALSAError` with `.restartPlayback` when the device cannot be prepared
    ///   (it was unplugged: `.deviceMissing`) or was already closed (`finish()`, `close()`).
    public func restart() throws(ALSAError) {
        guard let raw = pcm.raw else { throw ALSAError(device: device, operation: .restartPlayback, result: -EBADFD) }
        // Drop fails only where there is nothing to drop (a drained device): not an error.
        _ = snd_pcm_drop(raw)
        staging.withLock { $0.removeAll(keepingCapacity: true) }
        let prepared = snd_pcm_prepare(raw)
        if prepared < 0 { throw ALSAError(device: device, operation: .restartPlayback, result: prepared) }
        state.withLock { state in
            state.stopRequested = false
            state.written = 0
            state.played = 0
            state.handedOn = 0
            state.underruns = 0
            state.suspends = 0
            state.restarts += 1
        }
    }

    /// Closes the device now (what is queued is dropped); later calls do nothing. A
    /// player dropped without `finish()` or `close()` closes it too.
    public func close() { pcm.close() }

    /// Plays what is left and waits until the device has played it all, keeping the
    /// device open (for `restart()` or `close()`); after `stop()`, drops what is queued.
    /// - Throws: `ALSAError` with `.write` or `.drain` when the device fails meanwhile.
    public func drain() throws(ALSAError) -> End {
        // The last period is padded with silence to a whole one, as aplay does: a device
        // that stops on period boundaries (snd-aloop's timer) otherwise cut the end of the
        // sound short and replaced it with silence on the capture side, seen in the guest.
        let periodSamples = periodFrames * max(1, format.channels)
        staging.withLock { buffer in
            if !buffer.isEmpty, buffer.count < periodSamples {
                buffer.append(contentsOf: repeatElement(0, count: periodSamples - buffer.count))
            }
        }
        guard try flushStaging() else { return .stopped }
        guard let raw = pcm.raw else { return .stopped }
        // The drain may take the whole ring's worth, plus slack for a slow machine.
        let limit = MonotonicDeadline(milliseconds: bufferFrames * 1000 / max(1, format.sampleRate) + 3000)
        var result = snd_pcm_drain(raw)
        while result == -EAGAIN {
            if state.withLock({ $0.stopRequested }) {
                snd_pcm_drop(raw)
                return .stopped
            }
            if limit.hasPassed {
                snd_pcm_drop(raw)
                throw ALSAError(device: device, operation: .drain, result: -ETIMEDOUT)
            }
            updatePlayed(raw)
            var wake = [wakeUp.pollDescriptor]
            _ = poll(&wake, 1, 20)
            if wake[0].revents != 0 { wakeUp.drain() }
            let current = snd_pcm_state(raw)
            if current != SND_PCM_STATE_DRAINING { result = 0 }
        }
        if result < 0, result != -EBADFD {
            throw ALSAError(device: device, operation: .drain, result: result)
        }
        state.withLock { $0.played = $0.written }
        return .finished
    }

    /// Writes the staged period (gain applied) to the device, waiting for room;
    /// returns false when stopped meanwhile.
    private func flushStaging() throws(ALSAError) -> Bool {
        guard let raw = pcm.raw else { return false }
        let channels = max(1, format.channels)
        let gain = state.withLock { $0.volume }
        var period = staging.withLock { buffer in
            defer { buffer.removeAll(keepingCapacity: true) }
            return buffer
        }
        guard !period.isEmpty else { return !state.withLock { $0.stopRequested } }
        period.withUnsafeMutableBufferPointer { PlaybackGain.apply(gain, to: $0) }
        let frames = period.count / channels
        var done = 0
        var appliedPause = false
        var failures = 0
        while done < frames {
            let wanted = state.withLock { ($0.stopRequested, $0.paused) }
            if wanted.0 {
                snd_pcm_drop(raw)
                return false
            }
            if wanted.1 != appliedPause {
                setPaused(wanted.1, raw)
                appliedPause = wanted.1
            }
            if appliedPause {
                try waitForRoom(raw, timeout: -1, pcmToo: false)
                continue
            }
            let written = period.withUnsafeBufferPointer { buffer -> Int in
                guard let base = buffer.baseAddress else { return 0 }
                return snd_pcm_writei(raw, base + done * channels, snd_pcm_uframes_t(frames - done))
            }
            if written >= 0 {
                done += written
                state.withLock { $0.written += written }
                updatePlayed(raw)
                failures = 0
                continue
            }
            let code = Int32(truncatingIfNeeded: written)
            switch -code {
            case EAGAIN:
                let woke = try waitForRoom(raw, timeout: Self.stallMilliseconds, pcmToo: true)
                if !woke {
                    failures += 1
                    if failures >= 2 { throw ALSAError(device: device, operation: .write, result: -EIO) }
                }
            case EPIPE:
                // The ring ran dry (we were late): the listener heard a gap. Count it and go on.
                state.withLock { $0.underruns += 1 }
                try recover(snd_pcm_prepare(raw))
            case ESTRPIPE:
                state.withLock { $0.suspends += 1 }
                var resumed = snd_pcm_resume(raw)
                var tries = 0
                while resumed == -EAGAIN, tries < 50, !state.withLock({ $0.stopRequested }) {
                    usleep(100_000)
                    tries += 1
                    resumed = snd_pcm_resume(raw)
                }
                // Many drivers cannot resume; preparing again works for all of them.
                if resumed < 0 { try recover(snd_pcm_prepare(raw)) }
            default:
                throw ALSAError(device: device, operation: .write, result: code)
            }
        }
        return !state.withLock { $0.stopRequested }
    }

    private func recover(_ result: Int32) throws(ALSAError) {
        if result < 0 { throw ALSAError(device: device, operation: .recover, result: result) }
    }

    /// Pauses in place where the hardware can; otherwise drops the ring and prepares
    /// again on resume (the dropped sound is not heard).
    private func setPaused(_ paused: Bool, _ raw: OpaquePointer) {
        let current = snd_pcm_state(raw)
        if canPause, paused ? current == SND_PCM_STATE_RUNNING : current == SND_PCM_STATE_PAUSED,
           snd_pcm_pause(raw, paused ? 1 : 0) == 0 {
            return
        }
        if paused {
            snd_pcm_drop(raw)
            updatePlayedAfterDrop()
        } else if snd_pcm_state(raw) != SND_PCM_STATE_PREPARED {
            snd_pcm_prepare(raw)
        }
    }

    /// Waits until the ring has room for a period (`pcmToo`) or a control call wakes us.
    /// - Returns: false on time-out.
    @discardableResult
    private func waitForRoom(_ raw: OpaquePointer, timeout: Int32, pcmToo: Bool) throws(ALSAError) -> Bool {
        let count = pcmToo ? Int(snd_pcm_poll_descriptors_count(raw)) : 0
        guard count >= 0 else { throw ALSAError(device: device, operation: .write, result: Int32(count)) }
        var descriptors = [pollfd](repeating: pollfd(), count: count + 1)
        if count > 0 {
            let filled = descriptors.withUnsafeMutableBufferPointer {
                snd_pcm_poll_descriptors(raw, $0.baseAddress, UInt32(count))
            }
            guard filled == count else {
                throw ALSAError(device: device, operation: .write, result: filled < 0 ? filled : -EINVAL)
            }
        }
        descriptors[count] = wakeUp.pollDescriptor
        let ready = descriptors.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), timeout) }
        if ready < 0 {
            if errno == EINTR { return true }
            throw ALSAError(device: device, operation: .write, result: -errno)
        }
        if descriptors[count].revents != 0 { wakeUp.drain() }
        if count > 0 {
            // Some plugins translate their descriptors' events; the answer itself is
            // not needed (the next write reports errors), only the translation.
            var revents: UInt16 = 0
            _ = descriptors.withUnsafeMutableBufferPointer {
                snd_pcm_poll_descriptors_revents(raw, $0.baseAddress, UInt32(count), &revents)
            }
        }
        return ready > 0
    }

    /// Heard = handed on − what still waits in the ring.
    private func updatePlayed(_ raw: OpaquePointer) {
        var delay: snd_pcm_sframes_t = 0
        let known = snd_pcm_delay(raw, &delay) == 0
        state.withLock { state in
            let waiting = known ? min(max(0, delay), state.written) : 0
            state.played = max(state.played, state.written - waiting)
        }
    }

    /// Heard, asked from any thread: the written count first, then the device's delay,
    /// so a write in between can only make the figure low (and `played` never goes
    /// back), never high; nothing is changed when the device cannot say (not running).
    private func refreshPlayed() {
        let (written, restarts) = state.withLock { ($0.written, $0.restarts) }
        guard let delay = pcm.delay() else { return }
        state.withLock { state in
            guard state.restarts == restarts else { return }
            state.played = max(state.played, written - min(max(0, delay), written))
        }
    }

    private func updatePlayedAfterDrop() {
        // Dropped sound counts as passed: the position goes on from after it.
        state.withLock { $0.played = $0.written }
    }
}

/// A deadline on CLOCK_MONOTONIC.
private struct MonotonicDeadline {
    private let end: Int64

    init(milliseconds: Int) {
        end = Self.now() + Int64(max(0, milliseconds)) * 1_000_000
    }

    var hasPassed: Bool { Self.now() >= end }

    private static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }
}
