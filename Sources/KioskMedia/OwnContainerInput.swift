import CAVFormat
import CAVUtil
import Glibc
import KioskCore

/// Opens a file for reading with the demuxer of the container it is — mov for MP4/M4A,
/// wav for WAV (`ContainerSniff`) — never by FFmpeg's probe, and with only the `file`
/// protocol, so nothing in a file can make libavformat open another file or a URL.
/// Used by every reader of files: playback, export, thumbnails, waveforms and salvage.
enum OwnContainerInput {
    enum Outcome {
        case opened(UnsafeMutablePointer<AVFormatContext>)
        /// libavformat's (or the system's) error: hints keyed on it stay the callers'.
        case failed(Int32)
        /// Another container, named.
        case notOurs(String)
    }

    static func open(_ path: String) -> Outcome {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failed(kc_averror(errno)) }
        var head = [UInt8](repeating: 0, count: ContainerSniff.headerLength)
        let got = head.withUnsafeMutableBytes { read(fd, $0.baseAddress, ContainerSniff.headerLength) }
        Glibc.close(fd)
        guard got >= 0 else { return .failed(kc_averror(errno)) }
        let kind = ContainerSniff(head.prefix(got))
        guard let name = kind.demuxerName, let demuxer = av_find_input_format(name) else {
            if case .other(let what) = kind { return .notOurs(what) }
            return .failed(kc_averror(ENOSYS))
        }
        var context: UnsafeMutablePointer<AVFormatContext>? = nil
        var options: OpaquePointer? = nil
        defer { av_dict_free(&options) }
        av_dict_set(&options, "protocol_whitelist", "file", 0)
        let opened = avformat_open_input(&context, path, demuxer, &options)
        guard opened >= 0, let context else { return .failed(opened < 0 ? opened : kc_averror(EINVAL)) }
        return .opened(context)
    }

    /// The error for a file of another container.
    static func refusal(_ what: String, operation: String, path: String) -> MediaError {
        MediaError(.invalidInput, operation: operation, path: path, detail: "it is \(what), not an MP4, M4A or WAV file",
                   hint: "kioskcam reads only the files it makes (MP4, M4A, JPEG) and WAV")
    }
}
