/// What the screen logic asks the integrator to do. Run them in the order given:
/// `.redraw` comes first so the screen answers a touch within one frame, and
/// `.verifyPIN` (a slow hash, ~100 ms or more) must run off the UI thread, its answer
/// fed back through `ScreenController.pinChecked(_:now:)`.
public enum ScreenEffect: Sendable, Equatable, CustomStringConvertible {
    case startRecording
    case stopRecording
    /// Start a sound-only recording (the sound button; its stop is `.stopRecording`).
    case startSoundRecording
    /// Start the broadcast to `[broadcast] to`, or stop the one running.
    case toggleBroadcast
    /// Switch the camera's torch on (true) or off (false).
    case setTorch(Bool)
    case takeSnapshot
    /// Check these four digits against the PIN store.
    case verifyPIN(String)
    /// Switch the panel's backlight off (true) or on (false).
    case setPanelBlank(Bool)
    /// Draw `ScreenController.model`.
    case redraw
    /// Something for the media view's owner to do (list, play, seek, stop).
    case media(MediaViewEffect)

    /// Never shows the digits, so effects can be logged.
    public var description: String {
        switch self {
        case .startRecording: "startRecording"
        case .stopRecording: "stopRecording"
        case .startSoundRecording: "startSoundRecording"
        case .toggleBroadcast: "toggleBroadcast"
        case .setTorch(let on): "setTorch(\(on))"
        case .takeSnapshot: "takeSnapshot"
        case .verifyPIN: "verifyPIN(****)"
        case .setPanelBlank(let blank): "setPanelBlank(\(blank))"
        case .redraw: "redraw"
        case .media(let effect): "media(\(effect))"
        }
    }
}

/// Everything the live screen shows that comes from elsewhere (recorder, microphone,
/// disk, camera), plus the busy flags that keep the screensaver away.
public struct ScreenStatus: Sendable, Equatable {
    /// Seconds and bytes of the recording in progress.
    public var recordingSeconds: Double = 0
    public var recordingBytes: Int64 = 0
    public var audioLevels: AudioLevels?
    public var freeBytes: Int64?
    public var cameraState = ""
    public var deviceName = ""
    public var notice: String?
    /// The factory-default PIN is still in use (`PinStore.status().isDefault`).
    public var defaultPinWarning = false
    /// A still is being taken: no screensaver, and the snapshot button waits.
    public var stillInProgress = false
    /// Media is playing: no screensaver.
    public var playbackActive = false
    /// Motion detection sees motion now; an event clip is being written.
    public var motion = false
    public var eventClip = false
    /// "MQTT offline" while the broker in `[mqtt]` is unreachable; nil when connected or off.
    public var fleetProblem: String?
    /// The broadcast's state for the status line ("● LIVE 1.2 MB"); nil when none runs.
    public var broadcast: String?
    /// `[broadcast] to` is set, so the broadcast button shows.
    public var broadcastAvailable = false
    /// What records (`RecordingActivity.kind`): sound only shows the sound recorder.
    public var recordingKind: RecordingKind?
    /// The camera's torch: nil without one, else whether it is on.
    public var torch: Bool?
    /// Where a phone finds the web app, for the lock screen; nil while it is off.
    public var web: ScreenWebInfo?

    public init() {}
}

/// The web app's address and certificate, as the lock screen shows them: the URL (with a
/// QR code of it) and the SHA-256 fingerprint a user compares with the browser's warning.
public struct ScreenWebInfo: Sendable, Equatable {
    public var url: String
    /// "AB:CD:…" (32 bytes); nil without TLS.
    public var fingerprint: String?

    public init(url: String, fingerprint: String?) {
        self.url = url
        self.fingerprint = fingerprint
    }
}
