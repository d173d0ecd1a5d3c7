import CAVUtil
import Glibc
import KioskCore

/// What a sound export wrote.
public struct WAVExportReport: Sendable, Equatable {
    public var frames: Int
    public var sampleRate: Int
    /// 1 or 2: the recording's own, a wider layout folded to stereo.
    public var channels: Int = 1
    public var seconds: Double { sampleRate > 0 ? Double(frames) / Double(sampleRate) : 0 }
}

/// Decodes a recording's sound and writes a stretch of it as 16-bit PCM WAV, mono or
/// stereo as recorded (wider layouts folded to stereo).
public enum WAVExport {
    /// - Parameters:
    ///   - input: Any file `AudioFileDecoder` reads (kioskcam's `.m4a`).
    ///   - output: The WAV to write, replaced if it exists; written under a temporary
    ///     name first so a failure leaves nothing under the asked name.
    ///   - range: Seconds in the recording, counted in decoded samples.
    /// - Throws: `MediaError.invalidInput` for sound that cannot be decoded or a stream
    ///   too long for WAV, `.io`/`.diskFull` when writing fails.
    public static func write(input: String, output: String, range: ClipRange) throws(MediaError) -> WAVExportReport {
        let decoder = try AudioFileDecoder(path: input)
        let rate = decoder.sampleRate
        guard rate > 0 else {
            throw MediaError(.invalidInput, operation: "export sound", path: input, detail: "the sound has no sample rate")
        }
        let first = Int((range.start * Double(rate)).rounded())
        let last = Int((range.end * Double(rate)).rounded())
        let temporary = output + ".partial"
        let file = try WAVFile(path: temporary)
        // Room for the header, written once the length is known.
        try file.write(Array(repeating: 0, count: WAVHeader.size))
        let channels = decoder.keptChannels
        var position = 0, written = 0   // in frames (a sample per channel)
        var failure: MediaError? = nil
        var pcm: [UInt8] = []
        try decoder.decode(keepingChannels: true) { samples in
            let frames = samples.count / channels
            defer { position += frames }
            guard failure == nil, position + frames > first, position < last else { return }
            let from = max(0, first - position), to = min(frames, last - position)
            pcm.removeAll(keepingCapacity: true)
            for index in (from * channels)..<(to * channels) {
                let value = UInt16(bitPattern: WAVHeader.pcm16Sample(samples[index]))
                pcm.append(UInt8(value & 0xff)); pcm.append(UInt8(value >> 8))
            }
            do throws(MediaError) { try file.write(pcm) } catch { failure = error }
            written += to - from
        }
        if let failure { throw failure }
        guard let header = WAVHeader.pcm16(sampleRate: rate, channels: channels, frames: written) else {
            throw MediaError(.invalidInput, operation: "export sound", path: input,
                             detail: "\(written) samples at \(rate) Hz do not fit a WAV file", hint: "Export a shorter stretch")
        }
        try file.write(header, at: 0)
        try file.close()
        guard rename(temporary, output) == 0 else {
            throw MediaError(.io, operation: "rename to \(output)", path: temporary, averror: kc_averror(errno))
        }
        file.keep()
        return WAVExportReport(frames: written, sampleRate: rate, channels: channels)
    }
}

/// A file descriptor written to in full, closed once; its file removed unless kept.
private final class WAVFile {
    let path: String
    private var descriptor: Int32
    private var kept = false

    init(path: String) throws(MediaError) {
        self.path = path
        descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw MediaError(.io, operation: "create file", path: path, averror: kc_averror(errno),
                             hint: "Check that the folder exists and kioskcam may write there")
        }
    }

    deinit {
        if descriptor >= 0 { Glibc.close(descriptor) }
        if !kept { unlink(path) }
    }

    func keep() { kept = true }

    /// Writes all of `bytes` at `offset` (or at the end when nil).
    func write(_ bytes: [UInt8], at offset: Int? = nil) throws(MediaError) {
        var done = 0
        while done < bytes.count {
            let result = bytes.withUnsafeBytes { buffer -> Int in
                guard let start = buffer.baseAddress else { return 0 }
                let base = start + done
                return offset.map { pwrite(descriptor, base, bytes.count - done, off_t($0 + done)) }
                    ?? Glibc.write(descriptor, base, bytes.count - done)
            }
            if result < 0 && errno == EINTR { continue }
            guard result > 0 else { try fail("write", errno: result < 0 ? errno : EIO) }
            done += result
        }
    }

    func close() throws(MediaError) {
        let result = Glibc.close(descriptor)
        descriptor = -1
        if result != 0 { try fail("close", errno: errno) }
    }

    private func fail(_ operation: String, errno code: Int32) throws(MediaError) -> Never {
        let averror = kc_averror(code)
        try check(averror, .io, operation, path: path)  // ENOSPC becomes diskFull there
        throw MediaError(.io, operation: operation, path: path, averror: averror)
    }
}
