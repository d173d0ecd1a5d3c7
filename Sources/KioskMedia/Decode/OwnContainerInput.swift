import CAVFormat
import CAVUtil
import Glibc
import KioskCore

/// Opens a file for reading with the demuxer of the container it is — mov for MP4/M4A,
/// wav for WAV, jpeg_pipe for our stills (`ContainerSniff`) — never by FFmpeg's probe,
/// and with only the `file` protocol, so nothing in a file can make libavformat open
/// another file or a URL. Used by every reader of files: playback, export, thumbnails,
/// waveforms and salvage.
enum OwnContainerInput {
    /// The opened input (closed with `avformat_close_input` by its owner).
    /// - Parameters:
    ///   - detail: Said when libavformat (or the system) refuses the file.
    ///   - hint: What to do about libavformat's (or the system's) error code, if anything.
    /// - Throws: `MediaError.invalidInput` naming the path, and, for another container, what it is.
    static func open(_ path: String, operation: String, detail: String = "",
                     hint: (Int32) -> String? = { _ in nil }) throws(MediaError) -> UnsafeMutablePointer<AVFormatContext> {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw failure(kc_averror(errno), path, operation, detail, hint) }
        let sniffed = ContainerSniff.of(descriptor: fd)
        let readError = errno
        Glibc.close(fd)
        guard let kind = sniffed else { throw failure(kc_averror(readError), path, operation, detail, hint) }
        guard let name = kind.demuxerName else {
            guard case .other(let what) = kind else { throw failure(kc_averror(ENOSYS), path, operation, detail, hint) }
            throw MediaError(.invalidInput, operation: operation, path: path, detail: "it is \(what), not an MP4, M4A or WAV file",
                             hint: "kioskcam reads only the files it makes (MP4, M4A, JPEG) and WAV")
        }
        guard let demuxer = av_find_input_format(name) else { throw failure(kc_averror(ENOSYS), path, operation, detail, hint) }
        var context: UnsafeMutablePointer<AVFormatContext>? = nil
        var options: OpaquePointer? = nil
        defer { av_dict_free(&options) }
        av_dict_set(&options, "protocol_whitelist", "file", 0)
        let opened = avformat_open_input(&context, path, demuxer, &options)
        guard opened >= 0, let context else { throw failure(opened < 0 ? opened : kc_averror(EINVAL), path, operation, detail, hint) }
        return context
    }

    private static func failure(_ code: Int32, _ path: String, _ operation: String, _ detail: String,
                                _ hint: (Int32) -> String?) -> MediaError {
        MediaError(.invalidInput, operation: operation, path: path, averror: code, detail: detail, hint: hint(code))
    }
}

extension ContainerSniff {
    /// What the file open at `fd` is, from its first bytes (read at offset 0, the
    /// descriptor's own offset left alone); nil, with errno set, when they cannot be read.
    public static func of(descriptor fd: Int32) -> ContainerSniff? {
        var head = [UInt8](repeating: 0, count: headerLength)
        let got = head.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        return got < 0 ? nil : ContainerSniff(head.prefix(got))
    }
}
