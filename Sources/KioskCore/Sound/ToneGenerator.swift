import Foundation

/// Produces the built-in microphone's signal: a sine at a fixed pitch (or silence),
/// phase-continuous across chunks, as interleaved S16 PCM.
///
/// The sine is advanced by a rotation (four multiplications a sample) rather than a
/// `sin` call a sample: at 48 kHz the calls cost about 1 % of a screen broadcast's CPU
/// (`scripts/bench-broadcast`). The rotation restarts from the exact phase every
/// `exactEvery` samples, so rounding never builds up; samples stay within one step of
/// `sin` (the tests check).
public struct ToneGenerator: Sendable {
    public let format: AudioFormat
    public let frequency: Double
    /// Peak amplitude as a fraction of full scale (0.25 ≈ -12 dBFS).
    public let amplitude: Double
    private var phase = 0.0
    /// Samples made so far: the rotation restarts at every multiple of `exactEvery`,
    /// wherever the chunks begin, so the signal does not depend on the chunk size.
    private var made = 0
    /// sin and cos of `phase`, advanced together by the rotation.
    private var sine = 0.0
    private var cosine = 1.0
    /// sin and cos of the phase step of one sample.
    private let stepSine: Double
    private let stepCosine: Double
    static let exactEvery = 1024

    public init(format: AudioFormat, frequency: Double, amplitude: Double = 0.25) {
        self.format = format
        self.frequency = frequency
        self.amplitude = amplitude
        let step = 2 * Double.pi * frequency / Double(max(1, format.sampleRate))
        stepSine = sin(step)
        stepCosine = cos(step)
    }

    /// A generator that writes digital silence.
    public static func silence(format: AudioFormat) -> ToneGenerator {
        ToneGenerator(format: format, frequency: 0, amplitude: 0)
    }

    /// Fills `frameCount` sample frames (every channel gets the same signal).
    public mutating func fill(_ samples: UnsafeMutableBufferPointer<Int16>, frameCount: Int) {
        let channels = format.channels
        let count = min(frameCount, samples.count / channels)
        guard amplitude > 0 else {
            UnsafeMutableBufferPointer(rebasing: samples[0..<(count * channels)]).update(repeating: 0)
            return
        }
        let step = 2 * Double.pi * frequency / Double(format.sampleRate)
        let scale = amplitude * Double(Int16.max)
        for frame in 0..<count {
            if made % Self.exactEvery == 0 {
                sine = sin(phase)
                cosine = cos(phase)
            }
            // Clamped: a rounding step past full scale must not trap.
            let value = Int16(min(max((sine * scale).rounded(), -32_767), 32_767))
            for channel in 0..<channels { samples[frame * channels + channel] = value }
            (sine, cosine) = (sine * stepCosine + cosine * stepSine, cosine * stepCosine - sine * stepSine)
            phase += step
            if phase >= 2 * Double.pi { phase -= 2 * Double.pi }
            made &+= 1
        }
    }
}
