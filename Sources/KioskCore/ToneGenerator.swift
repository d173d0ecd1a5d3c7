import Foundation

/// Produces the built-in microphone's signal: a sine at a fixed pitch (or silence),
/// phase-continuous across chunks, as interleaved S16 PCM.
public struct ToneGenerator: Sendable {
    public let format: AudioFormat
    public let frequency: Double
    /// Peak amplitude as a fraction of full scale (0.25 ≈ -12 dBFS).
    public let amplitude: Double
    private var phase = 0.0

    public init(format: AudioFormat, frequency: Double, amplitude: Double = 0.25) {
        self.format = format
        self.frequency = frequency
        self.amplitude = amplitude
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
            let value = Int16((sin(phase) * scale).rounded())
            for channel in 0..<channels { samples[frame * channels + channel] = value }
            phase += step
            if phase >= 2 * Double.pi { phase -= 2 * Double.pi }
        }
    }
}
