extension Configuration {
    /// `[onvif]`: ONVIF Profile S on the web app's server, so that NVRs find and add the
    /// camera (docs/nvr.md). Needs `[web]` and `[rtsp]`.
    public struct ONVIF: Sendable, Equatable {
        /// Off until the owner turns it on, like RTSP.
        public var enabled = false
        /// Answer WS-Discovery probes on UDP 3702 (multicast 239.255.255.250) and say
        /// Hello and Bye: NVRs list the camera by itself.
        public var discovery = true

        public init() {}
    }

    /// The keys of the `[onvif]` section.
    static var onvifSchema: [ConfigKey] {
        [
            .bool("onvif.enabled") { c, v in c.onvif.enabled = v },
            .bool("onvif.discovery") { c, v in c.onvif.discovery = v },
        ]
    }
}
