/// The 44-byte header of a canonical 16-bit PCM WAV file (RIFF, `fmt `, `data`).
public enum WAVHeader {
    public static let size = 44

    /// The largest data size the 32-bit RIFF sizes can describe.
    public static let maximumDataBytes = Int(UInt32.max) - (size - 8)

    /// - Parameters:
    ///   - sampleRate: Frames per second, 1…384000.
    ///   - channels: 1…8.
    ///   - frames: Sample frames in the data chunk.
    /// - Returns: The header, or nil when a value is out of range or the data would not
    ///   fit the format's 4 GiB limit.
    public static func pcm16(sampleRate: Int, channels: Int, frames: Int) -> [UInt8]? {
        guard (1...384_000).contains(sampleRate), (1...8).contains(channels), frames >= 0 else { return nil }
        let blockAlign = channels * 2
        let (dataBytes, overflow) = frames.multipliedReportingOverflow(by: blockAlign)
        guard !overflow, dataBytes <= maximumDataBytes else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(size)
        func append(_ text: String) { bytes += Array(text.utf8) }
        func append32(_ value: Int) { withUnsafeBytes(of: UInt32(value).littleEndian) { bytes += $0 } }
        func append16(_ value: Int) { withUnsafeBytes(of: UInt16(value).littleEndian) { bytes += $0 } }
        append("RIFF"); append32(36 + dataBytes); append("WAVE")
        append("fmt "); append32(16); append16(1); append16(channels); append32(sampleRate)
        append32(sampleRate * blockAlign); append16(blockAlign); append16(16)
        append("data"); append32(dataBytes)
        return bytes
    }

    /// A float sample, -1…1 full scale, as 16-bit PCM (clipped, rounded).
    public static func pcm16Sample(_ value: Float) -> Int16 {
        guard value.isFinite else { return 0 }
        return Int16((min(1, max(-1, value)) * 32767).rounded())
    }
}
