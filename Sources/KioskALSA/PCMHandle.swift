import CALSA
import Glibc
import KioskCore

/// The one owner of an open PCM, capture or playback (`snd_pcm_t *`): closed exactly once, by
/// `close()` or when the owner drops it. The corresponding C function is `snd_pcm_open`.
struct PCMHandle: ~Copyable {
    let device: String
    let raw: OpaquePointer
    /// The private configuration tree the PCM was opened from, freed after the PCM
    /// because plugins may still refer to it while open.
    private let localConfiguration: OpaquePointer?

    /// Opens `device` for capture in non-blocking mode.
    /// - Parameters:
    ///   - device: An ALSA PCM name ("hw:1,0", "plughw:1,0", "default", "null").
    ///   - configuration: asoundrc-syntax text merged over the system configuration for
    ///     this open only (it can define the device named by `device`).
    /// - Throws: `ALSAError` with `.loadConfiguration` for bad configuration text; with
    ///   `.open` and code `.deviceMissing`, `.busy` or `.permissionDenied`.
    init(openingCaptureOf device: String, configuration: String? = nil) throws(ALSAError) {
        try self.init(device: device, stream: SND_PCM_STREAM_CAPTURE, operation: .open, configuration: configuration)
    }

    /// Opens `device` for playback in non-blocking mode, so a device another program
    /// holds is an immediate `.busy`, never a wait.
    /// - Throws: `ALSAError` with `.openPlayback` and code `.deviceMissing`, `.busy` or
    ///   `.permissionDenied`; `.loadConfiguration` for bad configuration text.
    init(openingPlaybackOf device: String, configuration: String? = nil) throws(ALSAError) {
        try self.init(device: device, stream: SND_PCM_STREAM_PLAYBACK, operation: .openPlayback, configuration: configuration)
    }

    private init(device: String, stream: snd_pcm_stream_t, operation: ALSAOperation,
                 configuration: String?) throws(ALSAError) {
        let local = try configuration.map { text throws(ALSAError) in
            try Self.loadConfiguration(text, device: device)
        }
        var pcm: OpaquePointer?
        let result: Int32
        if let local {
            result = snd_pcm_open_lconf(&pcm, device, stream, kc_snd_pcm_nonblock(), local)
        } else {
            result = snd_pcm_open(&pcm, device, stream, kc_snd_pcm_nonblock())
        }
        guard result >= 0, let pcm else {
            if let local { snd_config_delete(local) }
            throw ALSAError(device: device, operation: operation, result: result < 0 ? result : -EINVAL)
        }
        self.device = device
        raw = pcm
        localConfiguration = local
    }

    deinit {
        snd_pcm_close(raw)
        if let localConfiguration { snd_config_delete(localConfiguration) }
    }

    /// Closes the PCM now (the same as dropping the handle, but visible at the call site).
    consuming func close() {}

    /// The system configuration with `text` loaded on top of it.
    private static func loadConfiguration(_ text: String, device: String) throws(ALSAError) -> OpaquePointer {
        var top: OpaquePointer?
        var result = snd_config_update_ref(&top)
        guard result >= 0, let top else {
            throw ALSAError(device: device, operation: .loadConfiguration, result: result < 0 ? result : -EINVAL)
        }
        defer { snd_config_unref(top) }
        var local: OpaquePointer?
        result = snd_config_copy(&local, top)
        guard result >= 0, let local else {
            throw ALSAError(device: device, operation: .loadConfiguration, result: result < 0 ? result : -ENOMEM)
        }
        var input: OpaquePointer?
        result = text.withCString { snd_input_buffer_open(&input, $0, strlen($0)) }
        if result >= 0, let input {
            result = snd_config_load(local, input)
            snd_input_close(input)
        }
        guard result >= 0 else {
            snd_config_delete(local)
            throw ALSAError(device: device, operation: .loadConfiguration, result: result)
        }
        return local
    }

    /// What the device can do, from fresh hardware parameters.
    /// - Throws: `ALSAError` with `.readCapabilities`.
    func capabilities() throws(ALSAError) -> ALSAPCMCapabilities {
        let params = try HardwareParameters(device: device)
        try check(snd_pcm_hw_params_any(raw, params.raw), .readCapabilities)
        return ALSAPCMCapabilities(pcm: raw, params: params)
    }

    /// The steps capture and playback share: every configuration space, interleaved
    /// S16_LE, `format`'s channels, and its rate — a `plughw:` device resamples to
    /// anything; a `hw:` device picks its nearest rate, acceptable only within 1 %
    /// (beyond it the sound is at the wrong pitch, or drifts).
    /// - Returns: What the device offers (for errors) and the rate it took.
    private func setInterleavedS16(_ format: AudioFormat, _ params: borrowing HardwareParameters) throws(ALSAError)
        -> (offered: ALSAPCMCapabilities, rate: UInt32) {
        try check(snd_pcm_hw_params_any(raw, params.raw), .readCapabilities)
        let offered = ALSAPCMCapabilities(pcm: raw, params: params)
        try check(snd_pcm_hw_params_set_access(raw, params.raw, SND_PCM_ACCESS_RW_INTERLEAVED), .setAccess, offered)
        try check(snd_pcm_hw_params_set_format(raw, params.raw, SND_PCM_FORMAT_S16_LE), .setSampleFormat, offered)
        guard let channels = UInt32(exactly: format.channels), channels > 0 else {
            throw ALSAError(device: device, operation: .setChannels(format.channels), result: -EINVAL, offered: offered)
        }
        try check(snd_pcm_hw_params_set_channels(raw, params.raw, channels), .setChannels(format.channels), offered)
        guard let requestedRate = UInt32(exactly: format.sampleRate), requestedRate > 0 else {
            throw ALSAError(device: device, operation: .setSampleRate(format.sampleRate), result: -EINVAL, offered: offered)
        }
        var rate = requestedRate
        var direction: Int32 = 0
        try check(snd_pcm_hw_params_set_rate_near(raw, params.raw, &rate, &direction), .setSampleRate(format.sampleRate), offered)
        guard abs(Int(rate) - format.sampleRate) * 100 <= format.sampleRate else {
            throw ALSAError(device: device, operation: .setSampleRate(format.sampleRate), result: -EINVAL, offered: offered)
        }
        return (offered, rate)
    }

    /// Negotiates interleaved S16_LE capture at `format`, with ~`periodMilliseconds` periods
    /// and a buffer of about four of them, and monotonic timestamps.
    /// - Throws: `ALSAError` with code `.unsupported` naming what the device offers when
    ///   it refuses access, S16_LE, the channel count, a rate within 1 % of the requested
    ///   one, or a period between `periodMilliseconds` and 50 ms; other codes for
    ///   failures applying the parameters.
    func configureCapture(format: AudioFormat, periodMilliseconds: Int) throws(ALSAError) -> CaptureSetup {
        let params = try HardwareParameters(device: device)
        let (offered, rate) = try setInterleavedS16(format, params)

        // Restrict periods to [requested, 50 ms] first, so "near" cannot wander outside.
        guard periodMilliseconds > 0 else {
            throw ALSAError(device: device, operation: .setPeriod(milliseconds: periodMilliseconds), result: -EINVAL,
                            offered: offered)
        }
        let wantedFrames = UInt(max(1, Int(rate) * periodMilliseconds / 1000))
        var minFrames = wantedFrames
        var maxFrames = UInt(max(Int(wantedFrames), Int(rate) * max(periodMilliseconds, 50) / 1000))
        var minDirection: Int32 = 0, maxDirection: Int32 = 0
        try check(snd_pcm_hw_params_set_period_size_minmax(raw, params.raw, &minFrames, &minDirection,
                                                           &maxFrames, &maxDirection),
                  .setPeriod(milliseconds: periodMilliseconds), offered)
        var periodFrames = wantedFrames
        var direction: Int32 = 0
        try check(snd_pcm_hw_params_set_period_size_near(raw, params.raw, &periodFrames, &direction),
                  .setPeriod(milliseconds: periodMilliseconds), offered)
        // Four periods: room for ~60 ms of scheduling delay before an overrun.
        var bufferFrames = periodFrames * 4
        try check(snd_pcm_hw_params_set_buffer_size_near(raw, params.raw, &bufferFrames), .setBufferSize, offered)
        try check(snd_pcm_hw_params(raw, params.raw), .applyHardwareParameters)

        // Read back what was installed (the "near" calls may have moved).
        snd_pcm_hw_params_get_period_size(params.raw, &periodFrames, &direction)
        snd_pcm_hw_params_get_buffer_size(params.raw, &bufferFrames)

        let software = try SoftwareParameters(device: device)
        try check(snd_pcm_sw_params_current(raw, software.raw), .applySoftwareParameters)
        // ENABLE + MONOTONIC: `snd_pcm_htimestamp` then reports CLOCK_MONOTONIC, the
        // clock the camera and the rest of the pipeline use.
        try check(snd_pcm_sw_params_set_tstamp_mode(raw, software.raw, SND_PCM_TSTAMP_ENABLE), .applySoftwareParameters)
        try check(snd_pcm_sw_params_set_tstamp_type(raw, software.raw, SND_PCM_TSTAMP_TYPE_MONOTONIC),
                  .applySoftwareParameters)
        // Wake the poll once per whole period, never for less.
        try check(snd_pcm_sw_params_set_avail_min(raw, software.raw, periodFrames), .applySoftwareParameters)
        try check(snd_pcm_sw_params(raw, software.raw), .applySoftwareParameters)

        return CaptureSetup(format: AudioFormat(sampleRate: Int(rate), channels: format.channels),
                            periodFrames: Int(periodFrames), bufferFrames: Int(bufferFrames))
    }

    /// Negotiates interleaved S16_LE playback at `format`: `periods` periods of
    /// `periodFrames` each (the seed's three half-second buffers), playback starting once
    /// one period is queued, and the poll waking whenever a period has room.
    /// - Throws: `ALSAError` with code `.unsupported` naming what the device offers when
    ///   it refuses access, S16_LE, the channel count or a rate within 1 % of the file's
    ///   (the sound would play at the wrong pitch); other codes for failures applying them.
    func configurePlayback(format: AudioFormat, periodFrames wanted: Int, periods: Int) throws(ALSAError) -> PlaybackSetup {
        let params = try HardwareParameters(device: device)
        let (offered, rate) = try setInterleavedS16(format, params)
        guard wanted > 0, periods > 0 else {
            throw ALSAError(device: device, operation: .setBufferSize, result: -EINVAL, offered: offered)
        }
        // Periods first, then the buffer: "near" lets a device with smaller limits pick
        // its closest sizes, which only changes how far ahead we write.
        var periodFrames = snd_pcm_uframes_t(wanted)
        var direction: Int32 = 0
        try check(snd_pcm_hw_params_set_period_size_near(raw, params.raw, &periodFrames, &direction), .setBufferSize, offered)
        var bufferFrames = periodFrames * snd_pcm_uframes_t(periods)
        try check(snd_pcm_hw_params_set_buffer_size_near(raw, params.raw, &bufferFrames), .setBufferSize, offered)
        try check(snd_pcm_hw_params(raw, params.raw), .applyHardwareParameters)
        snd_pcm_hw_params_get_period_size(params.raw, &periodFrames, &direction)
        snd_pcm_hw_params_get_buffer_size(params.raw, &bufferFrames)
        let canPause = snd_pcm_hw_params_can_pause(params.raw) != 0

        let software = try SoftwareParameters(device: device)
        try check(snd_pcm_sw_params_current(raw, software.raw), .applySoftwareParameters)
        try check(snd_pcm_sw_params_set_start_threshold(raw, software.raw, min(periodFrames, bufferFrames)),
                  .applySoftwareParameters)
        try check(snd_pcm_sw_params_set_avail_min(raw, software.raw, periodFrames), .applySoftwareParameters)
        // Fill what has been played with silence: a device that reads a little past the
        // end of the sound (snd-aloop ticks past the drain point; any device after an
        // underrun) then plays silence, not old sound left in its ring.
        var boundary: snd_pcm_uframes_t = 0
        try check(snd_pcm_sw_params_get_boundary(software.raw, &boundary), .applySoftwareParameters)
        try check(snd_pcm_sw_params_set_silence_threshold(raw, software.raw, 0), .applySoftwareParameters)
        try check(snd_pcm_sw_params_set_silence_size(raw, software.raw, boundary), .applySoftwareParameters)
        try check(snd_pcm_sw_params(raw, software.raw), .applySoftwareParameters)
        return PlaybackSetup(format: AudioFormat(sampleRate: Int(rate), channels: format.channels),
                             periodFrames: Int(periodFrames), bufferFrames: Int(bufferFrames), canPause: canPause)
    }

    private func check(_ result: Int32, _ operation: ALSAOperation,
                       _ offered: ALSAPCMCapabilities? = nil) throws(ALSAError) {
        if result < 0 { throw ALSAError(device: device, operation: operation, result: result, offered: offered) }
    }
}

/// What `configureCapture` negotiated.
struct CaptureSetup: Sendable, Equatable {
    var format: AudioFormat
    var periodFrames: Int
    var bufferFrames: Int
}

/// What `configurePlayback` negotiated.
struct PlaybackSetup: Sendable, Equatable {
    var format: AudioFormat
    var periodFrames: Int
    var bufferFrames: Int
    /// Whether the hardware pauses in place (`snd_pcm_pause`); otherwise pause drops
    /// what is queued and resume starts afresh.
    var canPause: Bool
}

/// An owned `snd_pcm_hw_params_t` (malloc'd because the `alloca` macro is unusable from Swift).
struct HardwareParameters: ~Copyable {
    let raw: OpaquePointer

    init(device: String) throws(ALSAError) {
        var params: OpaquePointer?
        let result = kc_snd_pcm_hw_params_malloc(&params)
        guard result >= 0, let params else {
            throw ALSAError(device: device, operation: .readCapabilities, result: result < 0 ? result : -ENOMEM)
        }
        raw = params
    }

    deinit { snd_pcm_hw_params_free(raw) }
}

/// An owned `snd_pcm_sw_params_t`.
struct SoftwareParameters: ~Copyable {
    let raw: OpaquePointer

    init(device: String) throws(ALSAError) {
        var params: OpaquePointer?
        let result = kc_snd_pcm_sw_params_malloc(&params)
        guard result >= 0, let params else {
            throw ALSAError(device: device, operation: .applySoftwareParameters, result: result < 0 ? result : -ENOMEM)
        }
        raw = params
    }

    deinit { snd_pcm_sw_params_free(raw) }
}

/// The microphone's `PCMHandle`, also held by its capture loop: `close()` closes it at
/// once (the microphone calls it after the loop has ended), and should the microphone
/// be released on its own capture thread, the loop's reference keeps the PCM open
/// until the loop has finished with it.
final class SharedPCM: Sendable {
    private let handle: Locked<PCMHandle?>

    init(_ handle: consuming sending PCMHandle) { self.handle = Locked(Optional(handle)) }

    /// The open PCM, or nil once closed.
    var raw: OpaquePointer? { handle.withLock { $0?.raw } }

    /// Frames queued but not yet heard (`snd_pcm_delay`), asked while the PCM is held
    /// open (a `close()` meanwhile waits), from a thread other than the one that plays;
    /// nil once closed or when the device cannot say (not running).
    func delay() -> Int? {
        handle.withLock { handle -> Int? in
            guard let raw = handle?.raw else { return nil }
            var frames: snd_pcm_sframes_t = 0
            return snd_pcm_delay(raw, &frames) == 0 ? Int(frames) : nil
        }
    }

    func close() { handle.withLock { $0 = nil } }
}
