import CAVCodec
import CAVUtil
import KioskCore

/// What the video track is made from and how it is encoded.
public struct VideoTrackSettings: Sendable, Equatable {
    public var input: VideoFormat
    /// libavcodec encoder name (`libx264`, `h264_v4l2m2m`, …), `auto` or `null`.
    public var codecName: String
    public var bitrate: Int
    public var keyframeInterval: Int
    /// libx264 preset; ignored by encoders without one.
    public var preset: String
    /// libx264 tune ("zerolatency": no lookahead, sliced threads — less memory and a
    /// packet per frame at once); empty for none.
    public var tune: String
    /// 0 lets the encoder choose.
    public var threads: Int
    /// libx264 profile ("high", "main", "baseline"); empty lets libx264 choose. A smart
    /// cut sets the recording's, so both parts of the clip share one profile.
    public var profile: String = ""
    /// Extra libx264 settings as `key=value:key=value` (a smart cut sets `sps-id`); empty for none.
    public var x264Parameters: String = ""
    /// How players should turn the picture (`camera.rotation`/`camera.mirror`): written
    /// as each file's display matrix, the pixels left as the camera gave them.
    public var orientation = PictureOrientation.upright

    public init(input: VideoFormat, codecName: String = "libx264", bitrate: Int? = nil,
                keyframeInterval: Int = EncodingPolicy.maximumKeyframeInterval,
                preset: String = "veryfast", tune: String = "", threads: Int = 0) {
        self.input = input
        self.codecName = codecName
        self.bitrate = bitrate ?? EncodingPolicy.defaultBitrate(for: input.size)
        self.keyframeInterval = keyframeInterval
        self.preset = preset
        self.tune = tune
        self.threads = threads
    }

    /// The time base of video timestamps: 1/90000 s, fine enough for any camera's
    /// real capture times (which are not exact multiples of 1/fps).
    static let timeBase = AVRational(num: 1, den: 90_000)
}

/// The H.264 encoders this FFmpeg build has, for "unknown encoder" messages.
public func availableH264Encoders() -> [String] {
    var names: [String] = []
    var state: UnsafeMutableRawPointer? = nil
    while let codec = av_codec_iterate(&state) {
        if av_codec_is_encoder(codec) != 0 && codec.pointee.id == AV_CODEC_ID_H264 {
            names.append(String(cString: codec.pointee.name))
        }
    }
    return names
}
