import KioskCore

/// What kind of file a clip becomes.
public enum ClipTarget: String, Sendable, CaseIterable {
    case mp4, m4a, wav

    /// From a file name's extension (any case); nil for one export cannot write.
    public init?(fileName: String) {
        guard let dot = fileName.lastIndex(of: "."), !fileName[dot...].contains("/") else { return nil }
        self.init(rawValue: fileName[fileName.index(after: dot)...].lowercased())
    }
}

/// How a clip is cut.
public struct ClipExportOptions: Sendable {
    /// Seconds; nil for the beginning.
    public var from: Double?
    /// Seconds; nil for the end.
    public var to: Double?
    /// Re-encode the whole range (frame-exact), optionally smaller; nil to copy (smart cut).
    public var reencode: (size: FrameSize?, bitrate: Int?)?
    /// Copy only, from the keyframe at or before `from` (no smart cut).
    public var keyframeStart: Bool

    public init(from: Double? = nil, to: Double? = nil, reencode: (size: FrameSize?, bitrate: Int?)? = nil, keyframeStart: Bool = false) {
        self.from = from
        self.to = to
        self.reencode = reencode
        self.keyframeStart = keyframeStart
    }
}

/// Why a clip was not written: a sentence for the user, and whether the request itself
/// was wrong (a usage error, exit status 64) rather than the file or the disk.
public struct ClipExportError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var isUsage: Bool
    public var description: String { message }
}

/// What an export did: the range cut and what the user should know about how.
public struct ClipExportResult: Sendable {
    public var range: ClipRange
    public var notes: [String]
}

/// One export, as the CLI and the control socket both ask for it: picks copy, smart cut,
/// re-encode or WAV from the target and options, and says what it did.
public enum ClipExporter {
    /// - Parameters:
    ///   - input: A recording (.mp4 or .m4a), checked to exist by the caller.
    ///   - output: The clip, replaced if it exists (the caller decides whether that is allowed).
    /// - Throws: `ClipExportError`, usage errors (`isUsage`) for a target that does not
    ///   fit the recording or a range outside it.
    public static func export(input: String, output: String, target: ClipTarget,
                              options: ClipExportOptions) throws(ClipExportError) -> ClipExportResult {
        let from = options.from ?? 0
        let to = options.to ?? .greatestFiniteMagnitude
        if options.reencode != nil && target != .mp4 {
            throw ClipExportError(message: "--exact and --reencode write video (.mp4); sound is cut to the sample as .wav without them", isUsage: true)
        }
        if options.keyframeStart && options.reencode != nil {
            throw ClipExportError(message: "--keyframe-start copies without re-encoding: leave out --exact/--reencode, or --keyframe-start",
                                  isUsage: true)
        }
        let outline: RecordingOutline
        do throws(MediaError) { outline = try ClipCopy.outline(of: input) } catch {
            throw ClipExportError(message: error.description, isUsage: false)
        }
        switch target {
        case .mp4 where !outline.hasVideo:
            throw ClipExportError(message: "\(input) holds sound only: write it as .m4a or .wav (-o clip.m4a)", isUsage: true)
        case .m4a where outline.hasVideo:
            throw ClipExportError(message: "\(input) holds video: write it as .mp4 (-o clip.mp4), or its sound as .wav", isUsage: true)
        case .wav where !outline.hasAudio:
            throw ClipExportError(message: "\(input) has no sound to write as WAV: write it as .mp4 (-o clip.mp4)", isUsage: true)
        default: break
        }
        let range: ClipRange
        do throws(ClipRange.Problem) {
            range = try ClipRange(from: from, to: to, length: outline.length)
        } catch {
            throw ClipExportError(message: error.description, isUsage: error != .unknownLength)
        }
        var notes: [String] = []
        if range.endWasClamped && options.to != nil {
            notes.append("--to \(formatClipTime(to)) is beyond the end of the recording: the clip ends at its end, \(formatClipTime(range.end))")
        }
        do throws(MediaError) {
            try write(input: input, output: output, target: target, options: options, range: range, outline: outline, notes: &notes)
        } catch {
            throw ClipExportError(message: error.description, isUsage: false)
        }
        return ClipExportResult(range: range, notes: notes)
    }

    private static func write(input: String, output: String, target: ClipTarget, options: ClipExportOptions, range: ClipRange,
                              outline: RecordingOutline, notes: inout [String]) throws(MediaError) {
        let halfFrame = outline.frameDuration / 2
        switch target {
        case .wav:
            let report = try WAVExport.write(input: input, output: output, range: range)
            notes.append("\(formatClipTime(report.seconds)) of sound, \(report.sampleRate) Hz \(report.channels == 2 ? "stereo" : "mono") 16-bit PCM")
            return
        case .mp4 where options.reencode != nil:
            let report = try ClipTranscode.write(input: input, output: output, range: range,
                                                 size: options.reencode?.size, bitrate: options.reencode?.bitrate)
            notes.append("re-encoded \(formatClipTime(range.duration)) frame-exact from \(formatClipTime(range.start)): "
                         + "\(report.videoFrames) frames at \(report.size), \(report.bitrate / 1000) kbit/s")
            return
        case .mp4, .m4a:
            break
        }
        var why = "--keyframe-start"
        let keyframe = outline.keyframe(atOrBefore: range.start) ?? 0
        if outline.hasVideo && !options.keyframeStart && range.start - keyframe > halfFrame {
            if !outline.keyframes.contains(where: { $0 > range.start + halfFrame && $0 < range.end - halfFrame }) {
                // Within one GOP nothing could be copied: the whole clip is re-encoded.
                let report = try ClipTranscode.write(input: input, output: output, range: range, size: nil, bitrate: nil)
                notes.append("no keyframe between --from and --to: re-encoded all \(report.videoFrames) frames, "
                             + "frame-exact from \(formatClipTime(range.start))")
                return
            }
            switch try ClipSmartCut.write(input: input, output: output, range: range, outline: outline) {
            case .written(let report):
                notes.append("smart cut: re-encoded \(report.reencodedFrames) frames from \(formatClipTime(range.start)) to the keyframe at "
                             + "\(formatClipTime(report.copyStart)), copied \(report.copiedVideoPackets) video and \(report.audioPackets) sound packets")
                return
            case .notPossible(let reason):
                why = "a smart cut is not possible: \(reason)"
            }
        }
        let report = try ClipCopy.copy(input: input, output: output, range: range, outline: outline)
        let early = range.start - report.start
        if outline.hasVideo && early > halfFrame {
            notes.append("--from \(formatClipTime(range.start)) lies between keyframes and \(why): the clip starts \(formatClipTime(early)) "
                         + "earlier, at the keyframe at \(formatClipTime(report.start)) (copied, not re-encoded; --exact starts it at --from)")
        }
        notes.append("copied \(formatClipTime(range.end - report.start)): \(report.videoPackets) video and \(report.audioPackets) sound packets, not re-encoded")
    }
}
