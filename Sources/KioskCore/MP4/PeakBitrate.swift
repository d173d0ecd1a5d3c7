/// The most bits one stream carried in any one second: what `btrt` and the MPEG-4
/// `esds` call the maximum bitrate ("over any window of one second"). Samples are added
/// in decoding order; a sample older than the window's newest leaves it.
public struct PeakBitrate: Sendable {
    public static let window: Int64 = 1_000_000_000
    /// Samples inside the window: (time in nanoseconds, bytes).
    private var samples: [(time: Int64, bytes: Int64)] = []
    private var first = 0
    private var bytesInWindow: Int64 = 0
    /// The largest count of bits seen in one window so far.
    public private(set) var bitsPerSecond: Int64 = 0
    /// The largest single sample, in bytes (the decoder buffer a player needs at least).
    public private(set) var largestSample: Int64 = 0
    /// Bytes added in all.
    public private(set) var totalBytes: Int64 = 0

    public init() {}

    /// Adds one sample starting at `time`. A size an MP4 sample cannot have (negative, or
    /// 4 GiB and more) is ignored: the numbers may come from a damaged file. Sums saturate.
    public mutating func add(time: Int64, bytes: Int64) {
        guard bytes >= 0, bytes <= Int64(UInt32.max) else { return }
        totalBytes = Self.saturatingSum(totalBytes, bytes)
        largestSample = max(largestSample, bytes)
        samples.append((time, bytes))
        bytesInWindow = Self.saturatingSum(bytesInWindow, bytes)
        // A sample leaves once the newest starts a whole window after it (times that go
        // backwards, in a damaged file, just keep the window longer).
        while first < samples.count, time.subtractingReportingOverflow(samples[first].time).partialValue >= Self.window {
            bytesInWindow -= samples[first].bytes
            first += 1
        }
        bitsPerSecond = max(bitsPerSecond, bytesInWindow > Int64.max / 8 ? Int64.max : bytesInWindow * 8)
        if first > 256, first * 2 > samples.count {
            samples.removeFirst(first)
            first = 0
        }
    }

    private static func saturatingSum(_ a: Int64, _ b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? Int64.max : sum
    }
}
