import CALSA
import Glibc
import KioskCore

/// A microphone read through alsa-lib: interleaved S16 in whole periods (~20 ms),
/// stamped on CLOCK_MONOTONIC with the capture time of each chunk's first sample.
///
/// The real sibling of `ToneMicrophone`. Overruns and suspends are recovered without
/// stopping and counted; the lost time is not filled here — the chunk timestamps stay
/// truthful and the pipeline's `AudioAligner` pads the gap. An unplugged device ends
/// capture with `audioSourceEnded(name, .failed(…))`.
///
/// On the HIL guest (snd-aloop), whatever plays into `hw:Loopback,0,0` is captured from
/// its capture side, device 1:
///
///     let mic = try ALSAMicrophone(device: "hw:Loopback,1,0",
///                                  format: AudioFormat(sampleRate: 48_000, channels: 2))
///     try mic.start(into: recorder)
///     …
///     mic.stop()   // waits for the thread, closes the PCM
///
/// One PCM per microphone, opened by `init` and closed by `stop()` (or `deinit`); a
/// stopped microphone cannot be started again — open a new one.
public final class ALSAMicrophone: AudioSource, Sendable {
    /// For logs: "ALSA hw:1,0".
    public let name: String
    /// The ALSA device name as configured.
    public let device: String
    /// The negotiated format (the rate may differ from the requested one by up to 1 %).
    public let format: AudioFormat
    /// Sample frames per chunk (one ALSA period).
    public let periodFrames: Int
    /// Sample frames the device buffers before it overruns.
    public let bufferFrames: Int

    private let pcm: SharedPCM
    /// Also held while starting, so two `start`s cannot both start the PCM.
    private let started = Locked(false)
    private let thread: CaptureThread
    private let pool: BufferPool
    private let status = CaptureStatus()

    /// Opens and configures `device` for capture.
    /// - Parameters:
    ///   - device: An ALSA PCM name: "default", "hw:1,0", "plughw:1,0", "hw:Loopback,1,0", a dsnoop name.
    ///   - format: The wanted rate and channel count (S16 always).
    ///   - periodMilliseconds: Chunk length; the device may pick up to 50 ms.
    ///   - configuration: asoundrc-syntax text merged over the system ALSA configuration
    ///     for this device only, e.g. to define a dsnoop without editing /etc/asound.conf.
    /// - Throws: `ALSAError` — code `.deviceMissing` (no such device), `.busy` (another
    ///   program holds it), `.permissionDenied` (user not in `audio`), `.unsupported` (no
    ///   S16_LE, channel count, rate within 1 % or 20–50 ms period; the message lists what
    ///   the device offers), or `.other` for bad `configuration` text.
    public init(device: String, format: AudioFormat, periodMilliseconds: Int = 20,
                configuration: String? = nil) throws(ALSAError) {
        let handle = try PCMHandle(openingCaptureOf: device, configuration: configuration)
        let setup = try handle.configureCapture(format: format, periodMilliseconds: periodMilliseconds)
        let thread: CaptureThread
        do {
            thread = try CaptureThread()
        } catch {
            throw ALSAError(device: device, operation: .createThread, result: -error.rawValue)
        }
        self.device = device
        name = "ALSA \(device)"
        self.format = setup.format
        periodFrames = setup.periodFrames
        bufferFrames = setup.bufferFrames
        self.thread = thread
        // ~1.3 s of audio at 20 ms: enough for the encoder's hiccups, bounded memory.
        pool = BufferPool(bufferCapacity: setup.periodFrames * setup.format.bytesPerFrame, count: 64)
        pcm = SharedPCM(handle)
    }

    deinit {
        // Released on its own capture thread (from a sink callback), the loop cannot be
        // waited for; its reference then closes the PCM when it ends.
        if thread.stop() { pcm.close() }
    }

    /// Overruns (xruns) recovered so far: each lost some audio, shown as a gap in the timestamps.
    public var overruns: Int { status.overruns }
    /// System suspends recovered so far.
    public var suspends: Int { status.suspends }
    /// Periods read but not delivered because every pooled buffer was still queued downstream.
    public var droppedChunks: Int { status.droppedChunks }

    /// Called on the capture thread with one line per recovered problem (overrun,
    /// suspend, stall, restart failure), for the log. Set it before `start`.
    public var onDiagnostic: (@Sendable (String) -> Void)? {
        get { status.diagnosticHandler }
        set { status.diagnosticHandler = newValue }
    }

    /// Starts the stream and delivers chunks to `sink` on a capture thread.
    /// - Throws: `ALSAError` with call `.start`: code `.invalidState` when already
    ///   started (-EBUSY) or already stopped (-EBADFD); `.deviceMissing` if it was unplugged
    ///   since `init`; `.other` when the device refused to start.
    public func start(into sink: CaptureSink) throws(ALSAError) {
        try started.withLock { (started: inout Bool) throws(ALSAError) in
            guard let raw = pcm.raw else {
                throw ALSAError(device: device, operation: .start, result: -EBADFD)
            }
            guard !started else { throw ALSAError(device: device, operation: .start, result: -EBUSY) }
            if snd_pcm_state(raw) != SND_PCM_STATE_PREPARED {
                let result = snd_pcm_prepare(raw)
                if result < 0 { throw ALSAError(device: device, operation: .start, result: result) }
            }
            let result = snd_pcm_start(raw)
            if result < 0 { throw ALSAError(device: device, operation: .start, result: result) }
            started = true
        }
        let setup = CaptureSetup(format: format, periodFrames: periodFrames, bufferFrames: bufferFrames)
        _ = thread.start(name: "kioskcam.mic.alsa") { [name, device, pcm, pool, status] thread in
            // The loop is the capture thread's own; the PCM stays open while it runs
            // (the microphone closes it only once this thread has ended).
            let end: SourceEnd
            if let raw = pcm.raw {
                end = ALSACaptureLoop(pcm: pcm, raw: raw, device: device, setup: setup, pool: pool, status: status, sink: sink)
                    .run(thread)
            } else {
                end = .failed(ALSAError(device: device, operation: .start, result: -EBADFD).description)
            }
            sink.audioSourceEnded(name, end)
        }
    }

    /// Stops capture, waits for the capture thread (its sink gets `.stopped`) and closes the PCM.
    public func stop() {
        if thread.stop() { pcm.close() }
    }
}
