extension Configuration {
    /// `[rtsp]`: the camera for NVRs and Home Assistant, pulled over RTSP (docs/nvr.md).
    public struct RTSP: Sendable, Equatable {
        /// Off until the owner turns it on: a port open to the network is a choice.
        public var enabled = false
        public var listen = WebListenAddress(host: "0.0.0.0", port: 8554)
        /// The UDP port RTP goes out from (RTCP from the next one); 0: TCP only.
        public var udpPort = 8000
        /// Clients at once, over every path.
        public var maxClients = 10
        /// Whether clients may play without a user (off: every request needs one).
        public var allowAnonymous = false
        /// Whether Basic is offered beside Digest. RTSP is not encrypted, so Basic would
        /// put the password on the network in the clear; off unless a client needs it.
        public var basicAuth = false
        /// The sub-stream's picture size (`/sub`); nil: no sub-stream.
        public var substreamSize: FrameSize?
        /// Its frames a second (0: the camera's) and bits a second (nil: the default for its size).
        public var substreamFramesPerSecond = 0
        public var substreamBitrate: Int?

        public init() {}
    }

    /// The keys of the `[rtsp]` section.
    static var rtspSchema: [ConfigKey] {
        [
            .bool("rtsp.enabled") { c, v in c.rtsp.enabled = v },
            .string("rtsp.listen", allowed: "\"ADDRESS:PORT\" such as \"0.0.0.0:8554\" or \"127.0.0.1:8554\"") { c, text in
                guard let address = WebListenAddress(parsing: text) else { return false }
                c.rtsp.listen = address
                return true
            },
            .integer("rtsp.udp_port", 0...65_534, unit: " (RTCP on the next port; 0: TCP only)") { c, v in c.rtsp.udpPort = v },
            .integer("rtsp.max_clients", 1...64, unit: " clients") { c, v in c.rtsp.maxClients = v },
            .bool("rtsp.allow_anonymous") { c, v in c.rtsp.allowAnonymous = v },
            .bool("rtsp.basic_auth") { c, v in c.rtsp.basicAuth = v },
            .string("rtsp.substream", allowed: "\"\" (no sub-stream) or \"WIDTHxHEIGHT\", even numbers from 64x64 to 1920x1080, such as \"640x360\"") { c, text in
                guard !text.isEmpty else {
                    c.rtsp.substreamSize = nil
                    return true
                }
                let parts = text.split(separator: "x")
                guard parts.count == 2, let width = Int(parts[0]), let height = Int(parts[1]), (64...1920).contains(width),
                      (64...1080).contains(height), width % 2 == 0, height % 2 == 0 else { return false }
                c.rtsp.substreamSize = FrameSize(width: width, height: height)
                return true
            },
            .integer("rtsp.substream_fps", 0...60, unit: " (0: the camera's)") { c, v in c.rtsp.substreamFramesPerSecond = v },
            .integer("rtsp.substream_bitrate_kbps", 0...20_000, unit: " (0: the default for the size)") { c, v in
                c.rtsp.substreamBitrate = v == 0 ? nil : v * 1000
            },
        ]
    }
}
