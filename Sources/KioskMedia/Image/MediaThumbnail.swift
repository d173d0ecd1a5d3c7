import Glibc
import KioskCore

/// The small pictures of the media view's grid, made once per recording and stored as
/// PNG beside the day's index (`<kind>/<day>/.thumbs/<name>.png`), so opening a day a
/// second time reads pictures instead of decoding recordings.
///
/// A video's thumbnail is its first decoded picture (the first keyframe), a photo's the
/// JPEG scaled, a sound recording's its waveform; each fitted into `size` with its
/// aspect kept (the picture may be narrower or lower than `size`).
public enum MediaThumbnail {
    /// The folder beside the day's `.index` (hidden: listings and retention skip it, and
    /// it goes with its day).
    public static let folderName = ".thumbs"

    /// Where the thumbnail of `recording` is stored.
    public static func path(for recording: String) -> String {
        let slash = recording.lastIndex(of: "/")
        let folder = slash.map { String(recording[..<$0]) } ?? "."
        let name = slash.map { String(recording[recording.index(after: $0)...]) } ?? recording
        return folder + "/" + folderName + "/" + name + ".png"
    }

    /// The stored thumbnail of `recording`, made first if it is missing or older than the
    /// recording (a salvaged file replaced in place).
    /// - Returns: The PNG's path.
    /// - Throws: `MediaError.invalidInput` naming the recording when it cannot be read
    ///   or decoded; `.io`/`.diskFull` naming the PNG when it cannot be stored.
    @discardableResult
    public static func stored(for recording: String, kind: MediaKind, size: FrameSize) throws(MediaError) -> String {
        let png = path(for: recording)
        var source = stat(), existing = stat()
        guard stat(recording, &source) == 0 else {
            throw MediaError(.invalidInput, operation: "make thumbnail", path: recording,
                             detail: String(cString: strerror(errno)), hint: "The recording was removed; list the day again")
        }
        if stat(png, &existing) == 0, existing.st_mtim.tv_sec >= source.st_mtim.tv_sec, existing.st_size > 0 {
            return png
        }
        let (pixels, picture) = try render(recording, kind: kind, size: size)
        let folder = String(png[..<(png.lastIndex(of: "/") ?? png.startIndex)])
        if mkdir(folder, 0o755) != 0 && errno != EEXIST {
            throw MediaError(errno == ENOSPC ? .diskFull : .io, operation: "make thumbnail folder", path: folder,
                             detail: String(cString: strerror(errno)), hint: "Check that the library is writable by kioskcam")
        }
        let bytes = try PNGEncoder.encode(pixels, size: picture, layout: .rgb24)
        try WaveformRenderer.writeAtomically(bytes, to: png, operation: "write thumbnail")
        return png
    }

    /// Draws the thumbnail of `recording` without storing it.
    /// - Returns: RGB24 pixels and their size (fitted into `size`).
    /// - Throws: `MediaError.invalidInput` naming the recording when it cannot be decoded.
    public static func render(_ recording: String, kind: MediaKind, size: FrameSize) throws(MediaError) -> ([UInt8], FrameSize) {
        guard size.width >= 16, size.height >= 16, size.width <= 1024, size.height <= 1024 else {
            throw MediaError(.invalidInput, operation: "make thumbnail", path: recording,
                             detail: "\(size) is not a thumbnail size", hint: "Use 16x16 to 1024x1024")
        }
        switch kind {
        case .video, .screen, .photo:
            let decoder = try VideoFileDecoder(path: recording)
            let fitted = fittedSize(decoder.size, in: size)
            var picture: [UInt8]?
            try decoder.decode(scaledTo: fitted, layout: .rgb24) { bytes, _ in
                picture = Array(bytes)
                return false
            }
            guard let picture else {
                throw MediaError(.invalidInput, operation: "make thumbnail", path: recording,
                                 detail: "no picture could be decoded", hint: "The file may be damaged; try `kioskcam salvage`")
            }
            return (picture, fitted)
        case .audio:
            let columns = try WaveformRenderer.columns(of: recording, count: size.width)
            var pixels: [UInt8] = []
            WaveformRaster.render(columns: columns, width: size.width, height: size.height, layout: .rgb24,
                                  into: &pixels, colours: .standard)
            return (pixels, size)
        }
    }

    /// `source` fitted into `box` (even sides), as the media view lays pictures out.
    static func fittedSize(_ source: FrameSize, in box: FrameSize) -> FrameSize {
        let rect = MediaViewLayout.fitted(source, in: ScreenRect(x: 0, y: 0, width: box.width, height: box.height))
        return rect.isEmpty ? box : FrameSize(width: rect.width, height: rect.height)
    }
}
