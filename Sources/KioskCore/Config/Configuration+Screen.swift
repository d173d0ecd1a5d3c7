extension Configuration {
    /// The framebuffer screen: which panel, how it is turned, and how often the preview redraws.
    public struct Screen: Sendable, Equatable {
        /// Where the picture goes.
        public enum FramebufferSource: Sendable, Equatable, CustomStringConvertible {
            /// `/dev/fb0` when it exists, else a file-backed framebuffer `kioskcam screenshot` can read.
            case automatic
            /// A framebuffer device such as `/dev/fb1`.
            case device(String)
            /// A file-backed framebuffer at this path (a header, then the pixels).
            case file(String)
            /// Memory only: nothing outside the process sees the picture.
            case memory

            /// Parses "auto", "/dev/fbN", "file:/path" or "memory".
            public init?(parsing text: String) {
                if text == "auto" {
                    self = .automatic
                } else if text == "memory" {
                    self = .memory
                } else if text.hasPrefix("file:/"), text.count > 6 {
                    self = .file(String(text.dropFirst(5)))
                } else if text.hasPrefix("/dev/"), text.count > 5 {
                    self = .device(text)
                } else {
                    return nil
                }
            }

            public var description: String {
                switch self {
                case .automatic: "auto"
                case .device(let path): path
                case .file(let path): "file:" + path
                case .memory: "memory"
                }
            }
        }

        public var framebuffer = FramebufferSource.automatic
        /// How the panel is turned relative to the picture; 90 and 270 swap width and height.
        public var rotation = ScreenRotation.none
        /// The panel size of a file-backed or memory framebuffer (a real device says its own).
        public var virtualSize = ScreenSize(width: 800, height: 480)
        /// How often the camera picture on the live screen is redrawn.
        public var previewFramesPerSecond = 10
        /// The ALSA device the media view plays sound through.
        public var playbackDevice = "default"

        public init() {}

        /// Where `auto` puts the file-backed framebuffer when there is no `/dev/fb0`:
        /// in the daemon's runtime folder, so it vanishes at reboot.
        public static let defaultFramebufferFile = "/run/kioskcam/screen.fb"
    }

    /// The keys of the `[screen]` section.
    static var screenSchema: [ConfigKey] {
        [
            .string("screen.framebuffer", allowed: "\"auto\", a device such as \"/dev/fb0\", \"file:/path/to/screen.fb\" or \"memory\"") { c, text in
                guard let source = Screen.FramebufferSource(parsing: text) else { return false }
                c.screen.framebuffer = source
                return true
            },
            ConfigKey(path: "screen.rotation", allowed: "0, 90, 180 or 270 (degrees clockwise)") { c, value in
                guard case .integer(let raw) = value, let degrees = Int(exactly: raw), degrees % 90 == 0,
                      let rotation = ScreenRotation(rawValue: degrees) else { return false }
                c.screen.rotation = rotation
                return true
            },
            .string("screen.virtual_size", allowed: "WIDTHxHEIGHT from 64x64 to 4096x4096, such as \"800x480\"") { c, text in
                guard let size = FrameSize(parsing: text), (64...4096).contains(size.width), (64...4096).contains(size.height) else {
                    return false
                }
                c.screen.virtualSize = ScreenSize(width: size.width, height: size.height)
                return true
            },
            .integer("screen.preview_fps", 1...30) { c, v in c.screen.previewFramesPerSecond = v },
            .string("screen.playback_device", allowed: "an ALSA device name such as \"default\", \"plughw:0,0\" or \"null\" (`aplay -L` lists them)") { c, text in
                guard !text.isEmpty, text.utf8.count <= 128, !text.contains(where: { $0.isWhitespace || $0.isNewline }) else { return false }
                c.screen.playbackDevice = text
                return true
            },
        ]
    }
}
