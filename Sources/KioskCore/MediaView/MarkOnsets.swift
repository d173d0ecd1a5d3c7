/// Finds where each of a series of marks starts — a flash in a panel's brightness, a
/// click in the sound — in a stream of timed levels: the first level at or above
/// `threshold` after at least `quietSeconds` below it.
///
/// It measures the player from outside (the HIL media test feeds it what the panel
/// showed and what the sound card played), so it trusts nothing but the levels and their
/// times: a level or a time that is not finite, or a time earlier than the last one, is
/// skipped and counted, never turned into an onset. A stream that starts in the middle of
/// a mark gives no onset for it: quiet is counted from the first level seen.
public struct MarkOnsetDetector: Sendable, Equatable {
    /// A level at or above this is "marked" (brightness 0…255, or a sample's magnitude).
    public let threshold: Double
    /// Time below the threshold before a mark counts as a new one (shorter than the
    /// marks' spacing, longer than a mark, so a flickering mark is one onset).
    public let quietSeconds: Double
    /// Onsets kept at most; later ones are counted in `droppedOnsets`.
    public let capacity: Int
    /// The onsets found, seconds on the stream's time line, in order.
    public private(set) var onsets: [Double] = []
    public private(set) var droppedOnsets = 0
    /// Levels skipped: not finite, or stamped earlier than the level before.
    public private(set) var rejectedLevels = 0
    /// The last time the level was marked, or the first time seen before any mark.
    private var quietSince: Double?
    private var lastTime: Double?
    private var marked = false

    /// - Parameters:
    ///   - threshold: The level a mark reaches; not finite is treated as never reached.
    ///   - quietSeconds: At least 0; a negative or non-finite value counts as 0.
    ///   - capacity: Onsets kept (at least 1).
    public init(threshold: Double, quietSeconds: Double, capacity: Int = 1024) {
        self.threshold = threshold.isFinite ? threshold : .infinity
        self.quietSeconds = quietSeconds.isFinite ? max(0, quietSeconds) : 0
        self.capacity = max(1, capacity)
    }

    /// Takes one level.
    /// - Returns: True when it starts a mark (its time was appended to `onsets` or counted as dropped).
    @discardableResult
    public mutating func feed(level: Double, at time: Double) -> Bool {
        guard level.isFinite, time.isFinite, lastTime.map({ time >= $0 }) ?? true else {
            rejectedLevels += 1
            return false
        }
        lastTime = time
        let since = quietSince ?? time
        if quietSince == nil { quietSince = time }
        guard level >= threshold else {
            marked = false
            return false
        }
        defer {
            quietSince = time
            marked = true
        }
        guard !marked, time - since >= quietSeconds else { return false }
        if onsets.count < capacity { onsets.append(time) } else { droppedOnsets += 1 }
        return true
    }

    /// Takes interleaved 16-bit samples, one level per frame: the largest magnitude of its channels.
    /// - Parameters:
    ///   - channels: Samples per frame; 0 or less takes nothing.
    ///   - sampleRate: Frames per second; 0 or less takes nothing.
    ///   - firstFrameTime: When the first frame was captured, seconds on the stream's time line.
    /// - Returns: How many onsets the samples started.
    @discardableResult
    public mutating func feed(samples: UnsafeBufferPointer<Int16>, channels: Int, sampleRate: Int,
                              firstFrameTime: Double) -> Int {
        guard channels > 0, sampleRate > 0 else { return 0 }
        var found = 0
        let frames = samples.count / channels
        for frame in 0..<frames {
            var loudest = 0
            for channel in 0..<channels { loudest = max(loudest, abs(Int(samples[frame * channels + channel]))) }
            if feed(level: Double(loudest), at: firstFrameTime + Double(frame) / Double(sampleRate)) { found += 1 }
        }
        return found
    }

    /// The first onset at or after `time`, or nil.
    public func firstOnset(notBefore time: Double) -> Double? {
        onsets.first { $0 >= time }
    }
}

/// Picture marks paired with sound marks: how far each picture was from its sound.
public struct MarkPairing: Sendable, Equatable {
    /// Picture onset minus sound onset for each pair, seconds, in the sound's order:
    /// positive when the picture came after the sound.
    public let offsets: [Double]
    /// Marks with no partner within the window (a dropped flash, a lost click).
    public let unpairedPictures: Int
    public let unpairedSounds: Int

    /// Pairs each sound onset with the nearest picture onset not already taken, if it is
    /// within `window` seconds (less than half the marks' spacing, so a pair is never a
    /// picture with the sound of the mark before or after it).
    /// - Parameters:
    ///   - pictures: Picture onsets, seconds, on the same clock as `sounds`.
    ///   - sounds: Sound onsets, seconds.
    ///   - window: The largest offset that still pairs; not finite or negative pairs nothing.
    public init(pictures: [Double], sounds: [Double], window: Double) {
        let limit = window.isFinite ? max(0, window) : -1
        var free = pictures.filter(\.isFinite).sorted()
        var offsets: [Double] = []
        var unpairedSounds = 0
        for sound in sounds.sorted() where sound.isFinite {
            let nearest = free.indices.min { abs(free[$0] - sound) < abs(free[$1] - sound) }
            if let nearest, abs(free[nearest] - sound) <= limit {
                offsets.append(free[nearest] - sound)
                free.remove(at: nearest)
            } else {
                unpairedSounds += 1
            }
        }
        self.offsets = offsets
        self.unpairedSounds = unpairedSounds
        unpairedPictures = free.count
    }

    /// The mean offset (signed: a constant lag shows here), or nil without pairs.
    public var mean: Double? { offsets.isEmpty ? nil : offsets.reduce(0, +) / Double(offsets.count) }
    /// The largest offset either way, or nil without pairs.
    public var largest: Double? { offsets.map(abs).max() }

    /// "4 pairs, picture − sound: mean +12.3 ms, largest 18.0 ms (+12 +18 +9 +10), unpaired: 0 pictures, 0 sounds".
    public var summary: String {
        func ms(_ value: Double) -> String { (value >= 0 ? "+" : "") + String(Int((value * 1000).rounded())) }
        let each = offsets.map(ms).joined(separator: " ")
        let figures = mean.map { "mean \(ms($0)) ms, largest \(Int(((largest ?? 0) * 1000).rounded())) ms (\(each))" } ?? "no pairs"
        return "\(offsets.count) pairs, picture − sound: \(figures), unpaired: \(unpairedPictures) pictures, \(unpairedSounds) sounds"
    }
}
