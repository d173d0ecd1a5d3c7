import CAVCodec
import CAVUtil

/// Questions about this FFmpeg build, asked before a recording starts so that a bad
/// setting is reported at once rather than at the first frame.
public enum MediaCapabilities {
    /// Whether `name` is a video encoder here.
    public static func hasVideoEncoder(_ name: String) -> Bool {
        if name == "auto" || name == "null" { return true }   // VideoEncoders.open's choices
        guard let codec = avcodec_find_encoder_by_name(name) else { return false }
        return codec.pointee.type == AVMEDIA_TYPE_VIDEO
    }

    /// "libavcodec 59.37.100, libavformat 59.27.100" — for `--version` and logs.
    public static var libraryVersions: String {
        func text(_ v: UInt32) -> String { "\(v >> 16).\((v >> 8) & 0xFF).\(v & 0xFF)" }
        return "libavcodec \(text(avcodec_version())), libavutil \(text(avutil_version()))"
    }
}
