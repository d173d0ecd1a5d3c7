import KioskCore
import KioskMedia

extension RecorderSettings {
    /// The settings `configuration` asks for, for a source of `video` and `audio` (nil: none).
    public init(_ configuration: Configuration, video: VideoFormat?, audio: AudioFormat?, version: String) {
        let encoder = configuration.encoder
        self.init(
            layout: LibraryLayout(root: configuration.storage.mediaRoot),
            video: video.map {
                var settings = VideoTrackSettings(input: $0, codecName: encoder.videoCodec, bitrate: encoder.videoBitrate,
                                                  keyframeInterval: encoder.keyframeInterval, preset: encoder.preset,
                                                  tune: encoder.tune == "none" ? "" : encoder.tune, threads: encoder.threads)
                settings.orientation = configuration.camera.orientation
                return settings
            },
            audio: audio.map { AudioTrackSettings(input: $0, bitrate: encoder.audioBitrate) },
            segmentPolicy: configuration.segmentPolicy,
            syncInterval: configuration.storage.syncIntervalSeconds,
            jpegQuality: configuration.snapshot.jpegQuality,
            metadata: ["encoder": "kioskcam \(version)"]
        )
    }
}
