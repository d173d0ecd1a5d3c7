import Glibc
import KioskCore

/// What a re-encoded cut wrote.
public struct ClipTranscodeReport: Sendable, Equatable {
    public var videoFrames: Int
    public var audioFrames: Int
    public var size: FrameSize
    public var bitrate: Int
}

/// Cuts a recording frame-exactly by decoding it and encoding the range again with the
/// project's own encoders (`MP4Writer`: libx264 and AAC), optionally smaller.
public enum ClipTranscode {
    /// - Parameters:
    ///   - input: The recording (with video).
    ///   - output: The MP4 to write, replaced if it exists; written under a temporary
    ///     name first so a failure leaves nothing under the asked name.
    ///   - range: Seconds in the recording; the first picture is the one at `range.start`.
    ///   - size: The clip's picture size (even), nil for the recording's.
    ///   - bitrate: Bits per second, nil for the project's default for the size.
    /// - Throws: `MediaError` — `.invalidInput` for video that cannot be decoded,
    ///   `.encoderNotFound`/`.encoderRejectedSettings`, `.io`/`.diskFull`.
    public static func write(input: String, output: String, range: ClipRange, size: FrameSize?,
                             bitrate: Int?) throws(MediaError) -> ClipTranscodeReport {
        let video = try VideoFileDecoder(path: input)
        video.seek(toKeyframeBefore: range.start)
        let target = size ?? FrameSize(width: video.size.width & ~1, height: video.size.height & ~1)
        // The sound of the range, decoded first: a clip's worth is small (a minute of
        // 48 kHz stereo is 11 MiB), and it lets video and sound be written interleaved.
        // Mono or stereo as recorded; a wider layout is folded to stereo.
        var sound: [Int16] = []
        var soundRate = 0, soundChannels = 1
        if let decoder = try? AudioFileDecoder(path: input), decoder.sampleRate > 0 {
            soundRate = decoder.sampleRate
            soundChannels = decoder.keptChannels
            let channels = soundChannels
            let first = Int((range.start * Double(soundRate)).rounded()), last = Int((range.end * Double(soundRate)).rounded())
            var position = 0   // in frames
            try decoder.decode(keepingChannels: true) { samples in
                let frames = samples.count / channels
                defer { position += frames }
                guard position + frames > first, position < last else { return }
                for index in (max(0, first - position) * channels)..<(min(frames, last - position) * channels) {
                    sound.append(WAVHeader.pcm16Sample(samples[index]))
                }
            }
        }
        let temporary = output + ".partial"
        unlink(temporary)
        var videoSettings = VideoTrackSettings(input: VideoFormat(size: target, pixelFormat: .yuv420, framesPerSecond: video.framesPerSecond),
                                               bitrate: bitrate, keyframeInterval: video.framesPerSecond)
        // A turned camera's clip is turned the same way: the pixels are re-encoded as they are.
        videoSettings.orientation = video.orientation
        let settings = MP4WriterSettings(
            path: temporary,
            video: videoSettings,
            audio: soundRate > 0 ? AudioTrackSettings(input: AudioFormat(sampleRate: soundRate, channels: soundChannels)) : nil)
        let writer = try MP4Writer(settings: settings)
        var finished = false
        defer { if !finished { writer.abandon(); unlink(temporary) } }
        let halfFrame = 0.5 / Double(video.framesPerSecond)
        var frames = 0, soundWritten = 0   // soundWritten counts samples (frames × channels)
        func writeSound(upTo seconds: Double) throws(MediaError) {
            let limit = seconds * Double(soundRate) * Double(soundChannels)
            let until = limit >= Double(sound.count) ? sound.count : max(0, Int(limit) / soundChannels * soundChannels)
            guard until > soundWritten else { return }
            try sound.withUnsafeBufferPointer { (all) throws(MediaError) in
                try writer.writeAudio(UnsafeBufferPointer(rebasing: all[soundWritten..<until]))
            }
            soundWritten = until
        }
        try video.decode(scaledTo: target) { (picture, seconds) throws(MediaError) in
            guard seconds < range.end - halfFrame else { return false }
            guard seconds >= range.start - halfFrame else { return true }
            let offset = max(0, seconds - range.start)
            try writer.writeVideo(picture, nanosecondsFromStart: Int64(offset * 1e9))
            frames += 1
            try writeSound(upTo: offset)
            return true
        }
        guard frames > 0 else {
            throw MediaError(.invalidInput, operation: "export", path: input,
                             detail: "no picture between \(formatClipTime(range.start)) and \(formatClipTime(range.end)) could be decoded")
        }
        try writeSound(upTo: .greatestFiniteMagnitude)
        try writer.finish()
        guard rename(temporary, output) == 0 else {
            throw MediaError(.io, operation: "rename to \(output)", path: temporary, detail: String(cString: strerror(errno)))
        }
        finished = true
        return ClipTranscodeReport(videoFrames: frames, audioFrames: soundWritten / soundChannels, size: target,
                                   bitrate: settings.video?.bitrate ?? 0)
    }
}
