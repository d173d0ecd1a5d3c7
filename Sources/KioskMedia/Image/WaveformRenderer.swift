import Glibc
import KioskCore

/// What a waveform picture shows.
public struct WaveformSummary: Sendable, Equatable {
    /// Sample frames drawn (silence standing in for damaged packets included).
    public var frames: Int
    /// Frames per second.
    public var sampleRate: Int
    /// Packets the decoder rejected, drawn as silence of their length.
    public var damagedPackets: Int

    public init(frames: Int, sampleRate: Int, damagedPackets: Int) {
        self.frames = frames
        self.sampleRate = sampleRate
        self.damagedPackets = damagedPackets
    }

    /// The sound's length.
    public var seconds: Double { sampleRate > 0 ? Double(frames) / Double(sampleRate) : 0 }
}

/// Draws a sound recording's waveform as a PNG: decode (`AudioFileDecoder`) → one
/// min/max pair per pixel column (`WaveformReducer`) → picture (`WaveformRaster`) →
/// PNG (`PNGEncoder`) → file, written atomically.
public enum WaveformRenderer {
    /// The picture's size unless told otherwise.
    public static let defaultSize = FrameSize(width: 800, height: 200)

    /// Draws `audioFile`'s waveform into the PNG `png`, replacing any file there. The
    /// picture is written to `png + ".tmp"`, synced, and renamed into place, so `png` is
    /// either the old file or the whole new one, never half of one.
    /// - Parameters:
    ///   - audioFile: Any file with sound libavformat reads (kioskcam's `.m4a`, WAV …).
    ///   - png: Where the picture goes.
    ///   - size: Pixels; within `WaveformRaster.minimumSize`…`maximumSize`.
    ///   - colours: Background, waveform and centre line.
    /// - Throws: `MediaError.invalidInput` naming `audioFile` when it is missing,
    ///   unreadable, damaged or has no sound; `.invalidInput` naming `png` when `size` is
    ///   out of bounds or `png` is `audioFile` itself; `.io`/`.diskFull` naming `png` (or
    ///   its `.tmp`) when it cannot be written.
    /// - Returns: What was drawn: how much sound, and how many damaged packets stand as silence.
    @discardableResult
    public static func render(audioFile: String, to png: String, size: FrameSize = defaultSize,
                              colours: WaveformColours = .standard) throws(MediaError) -> WaveformSummary {
        guard WaveformRaster.allows(size) else {
            throw MediaError(.invalidInput, operation: "draw waveform", path: png,
                             detail: "\(size) is not a size for a waveform picture",
                             hint: "Use \(WaveformRaster.minimumSize) to \(WaveformRaster.maximumSize)")
        }
        if isSameFile(audioFile, png) {
            throw MediaError(.invalidInput, operation: "draw waveform", path: png,
                             detail: "the picture would replace the recording itself", hint: "Give another output path")
        }
        let (columns, summary) = try reduce(audioFile, count: size.width)
        var pixels: [UInt8] = []
        WaveformRaster.render(columns: columns, width: size.width, height: size.height, layout: .rgb24,
                              into: &pixels, colours: colours)
        let bytes = try PNGEncoder.encode(pixels, size: size, layout: .rgb24)
        try writeAtomically(bytes, to: png)
        return summary
    }

    /// Reduces `audioFile`'s sound to `count` columns.
    ///
    /// Frames are placed by the count the container states. When the decoder gives more
    /// than one column's worth of frames more or fewer than that (a container that
    /// misstates its length, or AAC padding in a very short file), the file is decoded a
    /// second time with the real count, so the picture's time axis is right. Without a
    /// stated count, one pass accumulates and rebins (see `WaveformReducer`).
    /// - Throws: `MediaError.invalidInput` naming the file (see `AudioFileDecoder`).
    public static func columns(of audioFile: String, count: Int) throws(MediaError) -> WaveformColumns {
        try reduce(audioFile, count: count).columns
    }

    private static func reduce(_ audioFile: String, count: Int) throws(MediaError) -> (columns: WaveformColumns, summary: WaveformSummary) {
        let decoder = try AudioFileDecoder(path: audioFile)
        var reducer = WaveformReducer(totalFrames: decoder.expectedFrames ?? 0, columns: count)
        let frames = try decoder.decode { reducer.add($0) }
        let summary = WaveformSummary(frames: frames, sampleRate: decoder.sampleRate, damagedPackets: decoder.damagedPackets)
        guard let expected = reducer.totalFrames, abs(frames - expected) > expected / max(1, count) else {
            return (reducer.columns, summary)
        }
        var exact = WaveformReducer(totalFrames: frames, columns: count)
        try AudioFileDecoder(path: audioFile).decode { exact.add($0) }
        return (exact.columns, summary)
    }

    /// Writes `bytes` to `path + ".tmp"`, syncs it, renames it to `path` and syncs the
    /// folder, removing the temporary file on any failure.
    static func writeAtomically(_ bytes: [UInt8], to path: String,
                                operation: String = "write waveform picture") throws(MediaError) {
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw fileError(errno, operation, path: temporary) }
        var isOpen = true
        var renamed = false
        defer {
            if isOpen { close(fd) }
            if !renamed { unlink(temporary) }
        }
        try bytes.withUnsafeBufferPointer { (buffer) throws(MediaError) in
            var offset = 0
            while offset < buffer.count, let base = buffer.baseAddress {
                let written = write(fd, base + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw fileError(errno, operation, path: temporary)
                }
                offset += written
            }
        }
        guard fsync(fd) == 0 else { throw fileError(errno, operation, path: temporary) }
        isOpen = false
        guard close(fd) == 0 else { throw fileError(errno, operation, path: temporary) }
        guard rename(temporary, path) == 0 else { throw fileError(errno, operation, path: path) }
        renamed = true
        // The rename itself survives a power cut only once the folder is synced; the
        // picture is complete either way, so a failure here is not one.
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let folderFD = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folderFD >= 0 {
            _ = fsync(folderFD)
            close(folderFD)
        }
    }

    private static func isSameFile(_ first: String, _ second: String) -> Bool {
        var a = stat(), b = stat()
        guard stat(first, &a) == 0, stat(second, &b) == 0 else { return false }
        return a.st_dev == b.st_dev && a.st_ino == b.st_ino
    }

    private static func fileError(_ code: Int32, _ operation: String, path: String) -> MediaError {
        MediaError(code == ENOSPC ? .diskFull : .io, operation: operation, path: path,
                   detail: String(cString: strerror(code)),
                   hint: code == EACCES ? "Check that the folder is writable by kioskcam"
                       : code == ENOENT ? "Check that the folder exists" : nil)
    }
}
