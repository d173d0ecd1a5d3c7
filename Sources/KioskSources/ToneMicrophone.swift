import KioskCore

/// The built-in microphone: a sine tone (or silence) as S16 PCM in 20 ms chunks,
/// paced in real time, timestamped on the same clock as the camera.
public final class ToneMicrophone: AudioSource, Sendable {
    public let format: AudioFormat
    public let name: String
    /// Where the tone stands between runs (the capture thread holds it while it runs).
    private let generator: Locked<ToneGenerator>
    private let framesPerChunk: Int
    private let pool: BufferPool
    private let clock = SystemClock()
    private let thread = SourceThread()

    public init(format: AudioFormat, frequency: Double?, chunkMilliseconds: Int = 20) {
        self.format = format
        name = frequency.map { "tone \(Int($0)) Hz" } ?? "silence"
        generator = Locked(frequency.map { ToneGenerator(format: format, frequency: $0) } ?? .silence(format: format))
        framesPerChunk = format.sampleRate * chunkMilliseconds / 1000
        pool = BufferPool(bufferCapacity: framesPerChunk * format.bytesPerFrame, count: 64)
    }

    public func start(into sink: CaptureSink) {
        let period = Int64(framesPerChunk) * 1_000_000_000 / Int64(format.sampleRate)
        let pacer = Pacer(start: clock.now(), periodNanoseconds: period)
        thread.start(name: "kioskcam.mic.tone") { [self] thread in
            var generator = self.generator.withLock { $0 }
            defer { self.generator.withLock { $0 = generator } }
            var index = 0
            while !thread.shouldStop {
                // A chunk is complete at the end of its period; stamp its first sample.
                SystemClock.sleep(until: pacer.deadline(index + 1))
                if let buffer = pool.take() {
                    let samples = buffer.mutableBytes.bindMemory(to: Int16.self)
                    generator.fill(samples, frameCount: framesPerChunk)
                    buffer.byteCount = framesPerChunk * format.bytesPerFrame
                    sink.deliver(AudioChunk(buffer: buffer, format: format, timestamp: pacer.deadline(index)))
                }
                index += 1
            }
            sink.audioSourceEnded(name, .stopped)
        }
    }

    public func stop() { thread.stop() }
}
