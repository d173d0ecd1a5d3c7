import Foundation
import KioskCore
import KioskMedia

/// One file of a recording being written: its `MP4Writer`, the instant its first
/// frame was captured, and the aligner that keeps its audio on that time line.
final class SegmentWriter {
    let writer: MP4Writer
    let kind: MediaKind
    let tempPath: String
    /// Local wall-clock time of the first frame: names the file.
    let localStart: LocalTimestamp
    /// Monotonic time of the first frame: time zero of the file.
    let start: MonotonicInstant
    /// Set when the next segment has taken over: nothing at or after it belongs here.
    var end: MonotonicInstant?
    /// Monotonic time after which a retiring segment is closed even if audio stalls.
    var retireDeadline: MonotonicInstant?
    private var aligner: AudioAligner?
    /// Zeros for gaps; grown once, reused.
    private var silence: [Int16] = []
    private(set) var videoFrames = 0
    private(set) var lastVideoTimestamp: MonotonicInstant?

    init(writer: MP4Writer, kind: MediaKind, tempPath: String, localStart: LocalTimestamp,
         start: MonotonicInstant, audioFormat: AudioFormat?) {
        self.writer = writer
        self.kind = kind
        self.tempPath = tempPath
        self.localStart = localStart
        self.start = start
        if let audioFormat {
            aligner = AudioAligner(sampleRate: audioFormat.sampleRate, start: start)
            silence = [Int16](repeating: 0, count: audioFormat.sampleRate / 10 * audioFormat.channels)
        }
    }

    var hasAudio: Bool { aligner != nil }

    /// The time just after the last audio sample written (the start if none).
    var audioCursor: MonotonicInstant { aligner?.cursor ?? start }

    /// Whether audio has been written up to the segment's end.
    var audioReachedEnd: Bool {
        guard let end, let aligner else { return true }
        return aligner.cursor >= end
    }

    func writeVideo(_ frame: VideoFrame, forceKeyframe: Bool) throws(MediaError) {
        try writer.writeVideo(frame.buffer.bytes, nanosecondsFromStart: frame.timestamp.nanoseconds(since: start),
                              forceKeyframe: forceKeyframe)
        videoFrames += 1
        lastVideoTimestamp = frame.timestamp
    }

    /// Writes the part of `chunk` that falls inside this segment, padding gaps.
    func writeAudio(_ chunk: AudioChunk) throws(MediaError) {
        guard var aligner else { return }
        let plan = aligner.plan(timestamp: chunk.timestamp, frameCount: chunk.frameCount, end: end)
        self.aligner = aligner
        let channels = chunk.format.channels
        var remaining = plan.silence
        while remaining > 0 {
            let count = min(remaining, silence.count / channels)
            try silence.withUnsafeBufferPointer { zeros throws(MediaError) in
                try writer.writeAudio(UnsafeBufferPointer(rebasing: zeros[0..<(count * channels)]))
            }
            remaining -= count
        }
        guard plan.take > 0 else { return }
        let samples = chunk.buffer.bytes.bindMemory(to: Int16.self)
        let first = plan.skip * channels
        try writer.writeAudio(UnsafeBufferPointer(rebasing: samples[first..<(first + plan.take * channels)]))
    }
}
