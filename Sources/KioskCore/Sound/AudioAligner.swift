/// Keeps an audio track on the video's time line.
///
/// A file's audio starts exactly at its first video frame: samples captured earlier
/// are skipped, a late start is padded with silence. After that the track advances
/// by sample count; only a deviation larger than `toleranceFrames` — a lost chunk, an
/// overrun, a stalled device — is corrected with silence or by skipping, so normal
/// timestamp jitter never causes clicks. `end` cuts the track at a segment boundary.
public struct AudioAligner: Sendable, Equatable {
    /// What to do with one chunk.
    public struct Plan: Sendable, Equatable {
        /// Silent sample frames to write before the chunk.
        public var silence: Int
        /// Sample frames to skip at the chunk's start.
        public var skip: Int
        /// Sample frames to write after the skipped ones.
        public var take: Int

        public init(silence: Int, skip: Int, take: Int) {
            self.silence = silence
            self.skip = skip
            self.take = take
        }
    }

    public let sampleRate: Int
    public private(set) var start: MonotonicInstant
    public let toleranceFrames: Int
    /// Sample frames written so far (silence included).
    public private(set) var writtenFrames: Int64 = 0

    public init(sampleRate: Int, start: MonotonicInstant, toleranceSeconds: Double = 0.06) {
        self.sampleRate = sampleRate
        self.start = start
        self.toleranceFrames = Int(Double(sampleRate) * toleranceSeconds)
    }

    /// How far `timestamp` is from where the track stands (positive: a gap).
    public func offset(of timestamp: MonotonicInstant) -> Int64 { timestamp.nanoseconds(since: cursor) }

    /// Moves the track's time line so that it continues at `timestamp`: for a jump of the
    /// source's clock (a driver that changes clocks, a long stall), which no amount of
    /// silence or skipping should bridge.
    public mutating func rebase(continuingAt timestamp: MonotonicInstant) {
        start = timestamp.advanced(byNanoseconds: -framesToNanoseconds(writtenFrames))
    }

    /// The time just after the last written sample.
    public var cursor: MonotonicInstant { start.advanced(byNanoseconds: framesToNanoseconds(writtenFrames)) }

    /// Plans how to place a chunk, and advances the cursor as if the plan were carried out.
    /// - Parameters:
    ///   - timestamp: Capture time of the chunk's first sample.
    ///   - frameCount: Sample frames in the chunk.
    ///   - end: Nothing at or after this time is written (segment end), if given.
    public mutating func plan(timestamp: MonotonicInstant, frameCount: Int, end: MonotonicInstant? = nil) -> Plan {
        let chunkStartFrame = nanosecondsToFrames(timestamp.nanoseconds(since: start))
        let delta = chunkStartFrame - writtenFrames
        let tolerance = writtenFrames == 0 ? 0 : Int64(toleranceFrames)
        var silence = 0, skip = 0
        if delta > tolerance {
            silence = Int(delta)
        } else if delta < -tolerance {
            skip = Int(min(-delta, Int64(frameCount)))
        }
        var take = frameCount - skip
        if let end {
            let endFrame = nanosecondsToFrames(end.nanoseconds(since: start))
            let room = max(0, endFrame - writtenFrames)
            silence = Int(min(Int64(silence), room))
            take = Int(max(0, min(Int64(take), room - Int64(silence))))
        }
        writtenFrames += Int64(silence + take)
        return Plan(silence: silence, skip: skip, take: take)
    }

    private func nanosecondsToFrames(_ nanoseconds: Int64) -> Int64 {
        // Round to the nearest sample; Double keeps hours of 96 kHz exact enough.
        Int64((Double(nanoseconds) * Double(sampleRate) / 1e9).rounded())
    }

    private func framesToNanoseconds(_ frames: Int64) -> Int64 {
        Int64((Double(frames) * 1e9 / Double(sampleRate)).rounded())
    }
}
