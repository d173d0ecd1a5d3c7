/// Which screen is showing.
public enum ScreenPage: String, Sendable, Equatable, CaseIterable {
    /// Unlocked: preview, REC indicator, level meter, record and snapshot buttons.
    case live
    /// The PIN screensaver: keys 0–9 and "del".
    case pin
    /// The panel is dark; a touch wakes it to the PIN screen.
    case blank
    /// The library: days, a day's thumbnails, the player, a photo (`ScreenModel.media`).
    /// The screensaver stays away while it shows.
    case media
}

/// A key on the PIN pad.
public enum PinKey: Sendable, Equatable, Hashable, CustomStringConvertible {
    case digit(Int)
    case delete

    public var label: String {
        switch self {
        case .digit(let d): String(d)
        case .delete: "del"
        }
    }

    public var description: String { label }
}

/// Something on the screen a tap can hit.
public enum ScreenTarget: Sendable, Equatable, Hashable {
    case recordButton
    case snapshotButton
    /// Opens the media view (live screen, unlocked only).
    case libraryButton
    /// Starts a sound-only recording, or stops the one running (live screen).
    case soundButton
    /// Starts or stops the broadcast to `[broadcast] to` (live screen, when it is set).
    case broadcastButton
    /// Switches the camera's torch on or off (live screen, when the camera has one).
    case torchButton
    case pinKey(PinKey)
}

/// Everything the renderer needs to draw one screen, as plain values: the UI logic
/// produces it, the renderer only draws it, so golden-image tests need no devices.
/// The camera picture itself is passed to the renderer separately.
public struct ScreenModel: Sendable, Equatable {
    public var page: ScreenPage = .live

    // Live screen.
    /// The recorder's state; drives the REC indicator and the record button.
    public var recordingState: RecordingState = .idle
    /// What records: a sound-only recording shows the sound recorder over the preview.
    public var recordingKind: RecordingKind?
    /// The sound-only recording's waveform so far (empty otherwise).
    public var soundWaveform = LiveWaveform()
    /// The sound recorder is showing: a sound-only recording starts, runs or stops.
    public var soundRecorderShown: Bool { recordingKind == .audio && recordingState != .idle }
    /// The sound button shows while a microphone gives levels, or while sound records.
    public var soundButtonShown: Bool { audioLevels != nil || soundRecorderShown }
    /// The sound button works when nothing records, or to stop the sound recording.
    public var soundButtonEnabled: Bool {
        recordingState == .idle || (recordingKind == .audio && recordingState == .recording)
    }
    /// `[broadcast] to` is set: the broadcast button shows (`broadcast` says whether it runs).
    public var broadcastAvailable = false
    /// The torch: nil when the camera has none (no button), else whether it is on.
    public var torch: Bool?
    /// Seconds and bytes of the recording in progress (live).
    public var recordingSeconds: Double = 0
    public var recordingBytes: Int64 = 0
    /// The record button is disabled while starting and stopping.
    public var recordButtonEnabled: Bool { recordingState == .idle || recordingState == .recording }
    /// Per-channel levels in dBFS, nil when there is no microphone.
    public var audioLevels: AudioLevels?
    /// Status line parts.
    public var freeBytes: Int64?
    public var cameraState: String = ""
    public var deviceName: String = ""
    public var fleetProblem: String?
    /// "● LIVE 1.2 MB" while a broadcast runs.
    public var broadcast: String?
    /// A short notice on the live screen ("Snapshot saved", "Camera lost since 12:03:04").
    public var notice: String?
    /// Shown until the factory-default PIN is changed.
    public var defaultPinWarning = false
    /// The web app's address and fingerprint, drawn beside the PIN pad where it fits.
    public var web: ScreenWebInfo?
    /// The motion indicator: motion seen now, an event clip being written.
    public var motion = false
    public var eventClip = false

    // PIN screen.
    /// How many digits have been typed (the digits themselves are never drawn).
    public var pinDigitsEntered = 0
    /// "Check your PIN", or the wait after repeated failures.
    public var pinMessage: String?

    /// Where a tap on the preview asked the camera to focus: a small square drawn there
    /// for `ScreenController.focusMarkNanoseconds`; nil otherwise.
    public var focusMark: ScreenPoint?

    /// The target under a finger right now, drawn pressed.
    public var pressedTarget: ScreenTarget?

    // Media view.
    /// What the media view shows while `page` is `.media`; nil otherwise.
    public var media: MediaBrowser?

    public init() {}

    /// The live screen's optional buttons drawn now (so only they can be tapped).
    public var liveTargets: Set<ScreenTarget> {
        var shown: Set<ScreenTarget> = []
        if soundButtonShown { shown.insert(.soundButton) }
        if broadcastAvailable { shown.insert(.broadcastButton) }
        if torch != nil { shown.insert(.torchButton) }
        return shown
    }
}
