/// What a recording holds: picture and sound (`.mp4`) or sound only (`.m4a`).
public enum RecordingKind: String, Sendable, Equatable, CaseIterable {
    case video, audio

    /// "a video recording", "a sound-only recording": for messages.
    public var phrase: String { self == .video ? "a video recording" : "a sound-only recording" }
}

/// What is recording, as the one owner of recordings sees it: at most one recording at
/// a time, of one kind.
public struct RecordingActivity: Sendable, Equatable, CustomStringConvertible {
    /// nil exactly when `state` is idle.
    public var kind: RecordingKind?
    public var state: RecordingState

    public init(kind: RecordingKind?, state: RecordingState) {
        self.kind = state == .idle ? nil : kind
        self.state = state
    }

    public static let idle = RecordingActivity(kind: nil, state: .idle)

    public var description: String { kind.map { "\($0.rawValue) \(state.rawValue)" } ?? state.rawValue }
}

/// What someone asks of the recorder: the socket, a button, the touch screen, upkeep.
public enum RecordingRequest: Sendable, Equatable, CustomStringConvertible {
    case start(RecordingKind)
    /// Stops whatever records.
    case stop
    /// A record button: starts `kind` when idle, stops whatever records when recording.
    case toggle(RecordingKind)

    public var description: String {
        switch self {
        case .start(.video): "start recording"
        case .start(.audio): "start a sound-only recording"
        case .stop: "stop recording"
        case .toggle(let kind): "toggle \(kind.phrase)"
        }
    }
}

/// What the owner must do for a request.
public enum RecordingDecision: Sendable, Equatable {
    case start(RecordingKind)
    case stop(RecordingKind)
    case refuse(RecordingRefusal)
}

/// Why a request was refused, with the message a person reads.
public struct RecordingRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Reason: String, Sendable, Equatable {
        /// Something is recording (or starting); only one recording at a time.
        case alreadyRecording
        /// Nothing records: nothing to stop.
        case notRecording
        /// A recording is starting or finishing: the request is dropped, not queued.
        case busy
    }

    public var reason: Reason
    public var message: String

    public var description: String { message }
}

/// The rule for recordings, in one place: **one recording at a time**. A sound-only
/// recording and a video recording never run together (a second start is refused and
/// names what runs); `stop` ends whatever records; a toggle (a record button) starts
/// its kind when idle and ends whatever records when recording, because the LED and the
/// screen show one state — recording — whatever its kind. While a recording starts or
/// finishes, requests are refused rather than queued, so an impatient double press never
/// stops the recording it just started.
///
/// The owner of the recorders decides and acts under one lock, so check-and-start is
/// atomic whoever asks.
public enum RecordingArbiter {
    public static func decide(_ request: RecordingRequest, activity: RecordingActivity) -> RecordingDecision {
        let running = activity.kind?.phrase ?? "a recording"
        switch (request, activity.state) {
        case (.start(let kind), .idle), (.toggle(let kind), .idle):
            return .start(kind)
        case (.start, .starting), (.start, .recording):
            return .refuse(RecordingRefusal(reason: .alreadyRecording,
                                            message: "already recording: \(running) is running; stop it first (kioskcam stop)"))
        case (.stop, .recording), (.toggle, .recording), (.stop, .starting):
            // Stopping while starting is allowed: the user changed their mind.
            return .stop(activity.kind ?? .video)
        case (.stop, .idle):
            return .refuse(RecordingRefusal(reason: .notRecording, message: "not recording: there is nothing to stop"))
        case (.start, .stopping):
            return .refuse(RecordingRefusal(reason: .busy, message: "the previous recording is still being finished; try again in a moment"))
        case (.stop, .stopping):
            return .refuse(RecordingRefusal(reason: .busy, message: "already stopping: \(running) is being finished"))
        case (.toggle, .starting):
            return .refuse(RecordingRefusal(reason: .busy, message: "ignored: \(running) is still starting; press again once it runs"))
        case (.toggle, .stopping):
            return .refuse(RecordingRefusal(reason: .busy, message: "ignored: \(running) is still being finished; press again in a moment"))
        }
    }
}
