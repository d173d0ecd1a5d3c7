/// What a button press asks for.
public enum ButtonCommand: Sendable, Equatable, CustomStringConvertible {
    case record(RecordingRequest)
    case takeSnapshot
    /// Start or stop the screen broadcast (independent of recording).
    case toggleBroadcast

    public var description: String {
        switch self {
        case .record(let request): request.description
        case .takeSnapshot: "take a snapshot"
        case .toggleBroadcast: "start or stop the broadcast"
        }
    }
}

/// A button action, decided against what is recording.
public enum ButtonDecision: Sendable, Equatable {
    case run(ButtonCommand)
    /// Nothing happens; the reason is for the log.
    case ignored(reason: String)
}

/// Decides what a button action means now. Record buttons are toggles, decided by
/// `RecordingArbiter` (one recording at a time): a press while a recording starts or
/// finishes is dropped here, at press time, and the owner of the recorders decides the
/// toggle again when it runs it, so neither a queued press nor a press from another
/// place (the socket, the screen) can make a second recording.
public enum ButtonGate {
    /// - Parameters:
    ///   - action: The configured action of the press.
    ///   - activity: What is recording when the press was recognised.
    /// - Returns: The command to run, or why the press is ignored.
    public static func decide(_ action: ButtonAction, activity: RecordingActivity) -> ButtonDecision {
        let kind: RecordingKind
        switch action {
        case .none: return .ignored(reason: "no action is configured for this press")
        // A still is independent of the recording's life cycle.
        case .snapshot: return .run(.takeSnapshot)
        // A broadcast is a separate process, whatever records.
        case .broadcast: return .run(.toggleBroadcast)
        case .recordToggle: kind = .video
        case .audioToggle: kind = .audio
        }
        if case .refuse(let refusal) = RecordingArbiter.decide(.toggle(kind), activity: activity) {
            return .ignored(reason: refusal.message)
        }
        return .run(.record(.toggle(kind)))
    }
}
