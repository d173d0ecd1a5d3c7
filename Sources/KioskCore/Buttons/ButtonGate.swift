/// What the recorder should do for a button press.
public enum ButtonCommand: Sendable, Equatable, CustomStringConvertible {
    case startRecording(audioOnly: Bool)
    case stopRecording
    case takeSnapshot

    public var description: String {
        switch self {
        case .startRecording(let audioOnly): audioOnly ? "start a sound-only recording" : "start recording"
        case .stopRecording: "stop recording"
        case .takeSnapshot: "take a snapshot"
        }
    }
}

/// A button action, decided against the recorder's state.
public enum ButtonDecision: Sendable, Equatable {
    case run(ButtonCommand)
    /// Nothing happens; the reason is for the log.
    case ignored(reason: String)
}

/// Decides what a button action means in the recorder's current state.
///
/// A press while the recorder is `starting` or `stopping` is dropped, not queued: a
/// queued press would turn the user's one impatient press into a second toggle that
/// stops the recording they just started.
public enum ButtonGate {
    /// - Parameters:
    ///   - action: The configured action of the press.
    ///   - state: The recorder's state when the press was recognised.
    /// - Returns: The command to run, or why the press is ignored.
    public static func decide(_ action: ButtonAction, state: RecordingState) -> ButtonDecision {
        switch action {
        case .none:
            return .ignored(reason: "no action is configured for this press")
        case .snapshot:
            // A still is independent of the recording's life cycle.
            return .run(.takeSnapshot)
        case .recordToggle, .audioToggle:
            switch state {
            case .idle: return .run(.startRecording(audioOnly: action == .audioToggle))
            case .recording: return .run(.stopRecording)
            case .starting: return .ignored(reason: "the recording is still starting; press again once it runs")
            case .stopping: return .ignored(reason: "the previous recording is still being finished; press again in a moment")
            }
        }
    }
}
