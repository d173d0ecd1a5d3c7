/// How big each of the player's buffers is: seed 003's AudioQueue player keeps three
/// buffers of about half a second, each sized from the stream's rate and frame size and
/// clamped to 16 KiB…320 KiB (small enough for a long multichannel stream, big enough
/// that a low-rate mono stream still rides out a scheduling hiccup).
public enum PlaybackBufferSizing {
    /// Buffers in flight at once (the seed's AudioQueue count).
    public static let bufferCount = 3
    /// Seconds of sound one buffer holds before the clamp.
    public static let defaultSeconds = 0.5
    /// The clamp, in bytes.
    public static let minimumBytes = 16 * 1024
    public static let maximumBytes = 320 * 1024

    /// The size of one buffer in bytes: `seconds` of the stream, clamped to
    /// `minimumBytes…maximumBytes` and rounded to whole frames (up at the lower bound,
    /// down at the upper, so the clamp holds where it can).
    /// - Parameters:
    ///   - sampleRate: Frames per second, as read from the file.
    ///   - channels: Interleaved channels.
    ///   - bytesPerSample: Bytes of one channel's sample (2 for S16).
    ///   - seconds: Sound per buffer.
    /// - Returns: The clamped size. Values a damaged file could give (zero, negative,
    ///   absurdly large, NaN) give the minimum or the maximum, never a trap.
    public static func bytes(sampleRate: Int, channels: Int, bytesPerSample: Int, seconds: Double = defaultSeconds) -> Int {
        let (frameBytes, overflow) = max(1, channels).multipliedReportingOverflow(by: max(1, bytesPerSample))
        guard sampleRate > 0, channels > 0, bytesPerSample > 0, seconds.isFinite, seconds > 0,
              !overflow, frameBytes <= minimumBytes else {
            return minimumBytes
        }
        // Doubles: rate × channels × bytes of a hostile header must not overflow an Int.
        let wanted = Double(sampleRate) * Double(frameBytes) * seconds
        let clamped = Int(min(max(wanted.rounded(.down), Double(minimumBytes)), Double(maximumBytes)))
        var whole = clamped / frameBytes * frameBytes
        if whole < minimumBytes { whole += frameBytes }
        return whole
    }

    /// `bytes(…)` in frames.
    public static func frames(sampleRate: Int, channels: Int, bytesPerSample: Int, seconds: Double = defaultSeconds) -> Int {
        let (frameBytes, overflow) = max(1, channels).multipliedReportingOverflow(by: max(1, bytesPerSample))
        return bytes(sampleRate: sampleRate, channels: channels, bytesPerSample: bytesPerSample, seconds: seconds)
            / (overflow ? 1 : frameBytes)
    }
}

/// The player's volume: a software gain on S16 samples.
public enum PlaybackGain {
    /// `volume` limited to 0…1 (NaN is silence: no input may make the player louder).
    public static func clamp(_ volume: Double) -> Double {
        guard volume.isFinite else { return volume == .infinity ? 1 : 0 }
        return min(max(volume, 0), 1)
    }

    /// Scales `samples` in place by `volume` (clamped to 0…1). At 1 the samples are left
    /// untouched; otherwise each is rounded to the nearest integer.
    public static func apply(_ volume: Double, to samples: UnsafeMutableBufferPointer<Int16>) {
        let gain = clamp(volume)
        guard gain < 1 else { return }
        // Q15 fixed point: exact for 0 and close enough for a volume knob, and no
        // sample times a gain ≤ 1 can leave Int16's range.
        let q15 = Int32((gain * 32768).rounded())
        for index in samples.indices {
            samples[index] = Int16(truncatingIfNeeded: (Int32(samples[index]) * q15 + 16384) >> 15)
        }
    }
}
