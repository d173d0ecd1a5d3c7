/// Per-channel sound levels in dBFS, as the screen and status show them.
public struct AudioLevels: Sendable, Equatable {
    /// RMS of the last block (~100 ms), per channel; -120 for silence.
    public var rmsDBFS: [Double]
    /// Peak with hold and decay (see `AudioLevelMeter`), per channel.
    public var peakHoldDBFS: [Double]
    /// Capture time just after the block's last sample.
    public var updatedAt: MonotonicInstant

    public init(rmsDBFS: [Double], peakHoldDBFS: [Double], updatedAt: MonotonicInstant) {
        self.rmsDBFS = rmsDBFS
        self.peakHoldDBFS = peakHoldDBFS
        self.updatedAt = updatedAt
    }
}

/// Average (RMS) and peak-hold level per channel of interleaved S16 audio.
///
/// Samples are measured in blocks of `blockMilliseconds` of audio (100 ms: ten updates
/// a second); each finished block publishes new `levels`. Full scale is 32768, so a
/// full-scale square wave reads 0 dBFS RMS and a full-scale sine -3.01 dBFS RMS with a
/// 0 dBFS peak. Silence reads `floorDBFS` (-120), never -infinity.
///
/// Peak hold: the highest block peak is held for `holdSeconds` (1.5 s) after the block
/// it occurred in, then falls at `decayDBPerSecond` (20 dB/s) until a louder peak
/// replaces it or it meets the current block's peak (it never shows less than that).
/// Time is the audio's own capture time, so the meter behaves the same live and in tests.
public struct AudioLevelMeter: Sendable {
    public static let fullScale = 32768.0
    public static let floorDBFS = -120.0
    public static let holdSeconds = 1.5
    public static let decayDBPerSecond = 20.0

    /// Length of one measuring block.
    public let blockMilliseconds: Int
    /// The latest levels; nil until the first block is complete.
    public private(set) var levels: AudioLevels?

    private var channels = 0
    private var sampleRate = 0
    private var blockFrames = 0
    private var framesInBlock = 0
    private var sumOfSquares: [Int64] = []
    private var blockPeak: [Int32] = []
    private var heldPeakDBFS: [Double] = []
    private var heldSince: [MonotonicInstant] = []

    /// - Parameter blockMilliseconds: Audio per update; 100 gives ten updates a second.
    public init(blockMilliseconds: Int = 100) {
        self.blockMilliseconds = max(1, blockMilliseconds)
    }

    /// Level in dBFS of an amplitude given as a fraction of full scale (sample / 32768):
    /// `dBFS(1) == 0`, `dBFS(0.5) ≈ -6.02`; zero and below give `floorDBFS`.
    public static func dBFS(_ amplitude: Double) -> Double {
        guard amplitude > 0 else { return floorDBFS }
        return max(floorDBFS, 20 * naturalLogarithm(amplitude) / 2.302585092994045684)
    }

    /// Measures one run of interleaved samples.
    /// - Parameters:
    ///   - samples: Interleaved S16 samples; a trailing partial frame is ignored.
    ///   - channels: Samples per frame; a change (or of `sampleRate`) starts the meter afresh.
    ///   - sampleRate: Frames per second.
    ///   - time: Capture time of the first sample (an `AudioChunk`'s timestamp).
    public mutating func process(_ samples: UnsafeBufferPointer<Int16>, channels: Int, sampleRate: Int,
                                 at time: MonotonicInstant) {
        guard channels > 0, sampleRate > 0 else { return }
        if channels != self.channels || sampleRate != self.sampleRate { reset(channels: channels, sampleRate: sampleRate) }
        let frames = samples.count / channels
        var index = 0
        for frame in 0..<frames {
            for channel in 0..<channels {
                let value = Int32(samples[index])
                index += 1
                sumOfSquares[channel] += Int64(value * value)
                blockPeak[channel] = max(blockPeak[channel], abs(value))
            }
            framesInBlock += 1
            if framesInBlock == blockFrames {
                let end = time.advanced(byNanoseconds: Int64(frame + 1) * 1_000_000_000 / Int64(sampleRate))
                publish(at: end)
            }
        }
    }

    private mutating func reset(channels: Int, sampleRate: Int) {
        self.channels = channels
        self.sampleRate = sampleRate
        blockFrames = max(1, sampleRate * blockMilliseconds / 1000)
        framesInBlock = 0
        sumOfSquares = Array(repeating: 0, count: channels)
        blockPeak = Array(repeating: 0, count: channels)
        heldPeakDBFS = Array(repeating: Self.floorDBFS, count: channels)
        heldSince = Array(repeating: MonotonicInstant(nanoseconds: .min / 2), count: channels)
        levels = nil
    }

    private mutating func publish(at time: MonotonicInstant) {
        var rms = [Double](repeating: Self.floorDBFS, count: channels)
        var peaks = [Double](repeating: Self.floorDBFS, count: channels)
        for channel in 0..<channels {
            let meanSquare = Double(sumOfSquares[channel]) / Double(framesInBlock)
            rms[channel] = Self.dBFS(meanSquare.squareRoot() / Self.fullScale)
            let peak = Self.dBFS(Double(blockPeak[channel]) / Self.fullScale)
            let overdue = max(0, time.seconds(since: heldSince[channel]) - Self.holdSeconds)
            let decayed = heldPeakDBFS[channel] - overdue * Self.decayDBPerSecond
            if peak >= decayed {
                heldPeakDBFS[channel] = peak
                heldSince[channel] = time
                peaks[channel] = peak
            } else {
                peaks[channel] = max(Self.floorDBFS, decayed)
            }
            sumOfSquares[channel] = 0
            blockPeak[channel] = 0
        }
        framesInBlock = 0
        levels = AudioLevels(rmsDBFS: rms, peakHoldDBFS: peaks, updatedAt: time)
    }
}

extension AudioLevelMeter {
    /// ln x without Foundation or libm: x = m · 2^e with m in [1, 2), so
    /// ln x = e · ln 2 + ln m, and ln m = 2 · atanh((m − 1)/(m + 1)) as a fast series
    /// (|t| ≤ 1/3, so 30 terms are far below Double's precision).
    static func naturalLogarithm(_ x: Double) -> Double {
        let mantissa = x.significand
        let t = (mantissa - 1) / (mantissa + 1)
        let t2 = t * t
        var term = t, sum = 0.0, n = 1.0
        while n < 60 {
            sum += term / n
            term *= t2
            n += 2
        }
        return Double(x.exponent) * 0.693147180559945309 + 2 * sum
    }
}
