import KioskCore
import SystemPackage

/// Replays a 16-bit PCM WAV file as microphone input (tests, benchmark), in real
/// time or as fast as the pipeline takes it, timestamped on the camera's time line.
public final class WAVFileMicrophone: AudioSource, Sendable {
    public let format: AudioFormat
    public let path: String
    public let realtime: Bool
    public var name: String { "file \(path)" }
    private let file: FileDescriptor
    private let dataBytes: Int64
    private let framesPerChunk: Int
    private let pool: BufferPool
    private let clock = SystemClock()
    private let thread = SourceThread()

    /// Opens the file and reads its header.
    /// - Throws: `CaptureSourceError` when it is missing or not 16-bit PCM WAV.
    public init(path: String, realtime: Bool) throws(CaptureSourceError) {
        self.path = path
        self.realtime = realtime
        do {
            file = try FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec])
        } catch {
            throw CaptureSourceError(source: path, operation: "open WAV file", reason: "\(error)")
        }
        do {
            (format, dataBytes) = try Self.readHeader(file, path: path)
        } catch {
            try? file.close()
            throw error
        }
        framesPerChunk = format.sampleRate / 50
        pool = BufferPool(bufferCapacity: framesPerChunk * format.bytesPerFrame, count: 64)
    }

    deinit { try? file.close() }

    /// Walks the RIFF chunks to `fmt ` and `data`; leaves the file at the first sample.
    private static func readHeader(_ file: FileDescriptor, path: String) throws(CaptureSourceError) -> (AudioFormat, Int64) {
        func fail(_ reason: String) -> CaptureSourceError {
            CaptureSourceError(source: path, operation: "read WAV header", reason: reason,
                               hint: "Use a 16-bit PCM WAV file (e.g. ffmpeg -i IN -c:a pcm_s16le OUT.wav)")
        }
        func read(_ count: Int) throws(CaptureSourceError) -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: count)
            let got = (try? bytes.withUnsafeMutableBytes { try file.read(into: $0) }) ?? 0
            guard got == count else { throw fail("the file ends inside its header") }
            return bytes
        }
        func le32(_ b: [UInt8], _ at: Int) -> Int { Int(b[at]) | Int(b[at + 1]) << 8 | Int(b[at + 2]) << 16 | Int(b[at + 3]) << 24 }
        func le16(_ b: [UInt8], _ at: Int) -> Int { Int(b[at]) | Int(b[at + 1]) << 8 }
        let riff = try read(12)
        guard riff[0..<4].elementsEqual("RIFF".utf8), riff[8..<12].elementsEqual("WAVE".utf8) else { throw fail("not a RIFF/WAVE file") }
        var format: AudioFormat?
        for _ in 0..<32 {
            let header = try read(8)
            let size = le32(header, 4)
            if header[0..<4].elementsEqual("fmt ".utf8) {
                let body = try read(size + size % 2)
                guard size >= 16, le16(body, 0) == 1 || le16(body, 0) == 0xFFFE, le16(body, 14) == 16 else {
                    throw fail("only 16-bit PCM is supported")
                }
                format = AudioFormat(sampleRate: le32(body, 4), channels: le16(body, 2))
            } else if header[0..<4].elementsEqual("data".utf8) {
                guard let format, (1...2).contains(format.channels), format.sampleRate >= 8000 else {
                    throw fail("missing or unsupported fmt chunk (1 or 2 channels, ≥ 8 kHz)")
                }
                return (format, Int64(size))
            } else {
                _ = try read(size + size % 2)
            }
        }
        throw fail("no data chunk")
    }

    public func start(into sink: CaptureSink) {
        let period = Int64(framesPerChunk) * 1_000_000_000 / Int64(format.sampleRate)
        let pacer = Pacer(start: clock.now(), periodNanoseconds: period)
        thread.start(name: "kioskcam.mic.file") { [self] thread in
            var index = 0
            var remaining = dataBytes
            var end = SourceEnd.stopped
            while !thread.shouldStop {
                if realtime { SystemClock.sleep(until: pacer.deadline(index + 1)) }
                guard remaining > 0 else { end = .endOfInput; break }
                guard let buffer = pool.take() else {
                    SystemClock.sleep(until: clock.now().advanced(byNanoseconds: 1_000_000))
                    continue
                }
                let want = Int(min(Int64(framesPerChunk * format.bytesPerFrame), remaining))
                let got = (try? file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer.mutableBytes[0..<want]))) ?? 0
                let whole = got - got % format.bytesPerFrame
                guard whole > 0 else { end = .endOfInput; break }
                remaining -= Int64(got)
                buffer.byteCount = whole
                sink.deliver(AudioChunk(buffer: buffer, format: format, timestamp: pacer.deadline(index)))
                index += 1
            }
            sink.audioSourceEnded(name, end)
        }
    }

    public func stop() { thread.stop() }
}
