import Foundation

/// The session description a DESCRIBE answers with (RFC 4566): the picture as H.264
/// (RFC 6184: `profile-level-id`, `sprop-parameter-sets`) on track 0 and, with a
/// microphone, the sound as AAC (RFC 3640 `mpeg4-generic`, the AudioSpecificConfig as
/// `config`) on track 1.
public struct SDPDescription: Sendable, Equatable {
    public struct Video: Sendable, Equatable {
        /// SPS and PPS, NAL units without start codes.
        public var parameterSets: [[UInt8]]
        public var width: Int
        public var height: Int
        public var framesPerSecond: Int

        public init(parameterSets: [[UInt8]], width: Int, height: Int, framesPerSecond: Int) {
            self.parameterSets = parameterSets
            self.width = width
            self.height = height
            self.framesPerSecond = framesPerSecond
        }
    }

    public struct Audio: Sendable, Equatable {
        public var sampleRate: Int
        public var channels: Int
        /// The AudioSpecificConfig (the AAC encoder's extradata).
        public var config: [UInt8]

        public init(sampleRate: Int, channels: Int, config: [UInt8]) {
            self.sampleRate = sampleRate
            self.channels = channels
            self.config = config
        }
    }

    public static let videoPayloadType: UInt8 = 96
    public static let audioPayloadType: UInt8 = 97

    public var video: Video
    public var audio: Audio?
    /// The session's name (`s=`): the device's.
    public var name: String
    /// Our address as the client reached it, for `o=` and `c=`.
    public var serverAddress: String
    public var sessionID: UInt64

    public init(video: Video, audio: Audio?, name: String, serverAddress: String, sessionID: UInt64) {
        self.video = video
        self.audio = audio
        self.name = name
        self.serverAddress = serverAddress
        self.sessionID = sessionID
    }

    public var text: String {
        let family = serverAddress.contains(":") ? "IP6" : "IP4"
        let cleanName = String(RTSPResponse.withoutLineBreaks(name).prefix(64))
        var lines = [
            "v=0",
            "o=- \(sessionID) 1 IN \(family) \(serverAddress)",
            "s=\(cleanName.isEmpty ? "KioskCam" : cleanName)",
            "c=IN \(family) \(family == "IP6" ? "::" : "0.0.0.0")",
            "t=0 0",
            "a=tool:KioskCam",
            "a=range:npt=now-",
            "a=control:*",
            "m=video 0 RTP/AVP \(Self.videoPayloadType)",
            "a=rtpmap:\(Self.videoPayloadType) H264/90000",
        ]
        var format = "a=fmtp:\(Self.videoPayloadType) packetization-mode=1"
        if let sps = video.parameterSets.first(where: { ($0.first ?? 0) & 0x1F == 7 }), sps.count >= 4 {
            format += ";profile-level-id=" + Self.hex(Array(sps[1...3]))
        }
        if !video.parameterSets.isEmpty {
            format += ";sprop-parameter-sets=" + video.parameterSets.map { Data($0).base64EncodedString() }.joined(separator: ",")
        }
        lines.append(format)
        if video.width > 0, video.height > 0 { lines.append("a=cliprect:0,0,\(video.height),\(video.width)") }
        if video.framesPerSecond > 0 { lines.append("a=framerate:\(video.framesPerSecond)") }
        lines.append("a=control:trackID=0")
        if let audio {
            lines.append("m=audio 0 RTP/AVP \(Self.audioPayloadType)")
            lines.append("a=rtpmap:\(Self.audioPayloadType) mpeg4-generic/\(audio.sampleRate)/\(max(1, audio.channels))")
            lines.append("a=fmtp:\(Self.audioPayloadType) streamtype=5;profile-level-id=15;mode=AAC-hbr;config=\(Self.hex(audio.config))"
                         + ";sizelength=13;indexlength=3;indexdeltalength=3")
            lines.append("a=control:trackID=1")
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789ABCDEF")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] })
    }
}
