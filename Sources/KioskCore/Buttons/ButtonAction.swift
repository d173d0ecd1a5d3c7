/// What a button does, configurable per button for a short and a long press.
public enum ButtonAction: String, Sendable, Equatable, CaseIterable, CustomStringConvertible {
    /// Start a video recording when idle, stop the recording when recording.
    case recordToggle = "record"
    /// Take a JPEG still.
    case snapshot
    /// Start a sound-only recording when idle, stop the recording when recording.
    case audioToggle = "audio"
    /// Start the screen broadcast to `[broadcast] to` when none runs, stop it when one does.
    case broadcast
    /// Nothing; a long press with no action counts as a short press instead.
    case none

    public var description: String { rawValue }
}

/// How long the button was held.
public enum ButtonPressKind: String, Sendable, Equatable, CustomStringConvertible {
    /// Released before the long-press threshold; reported on release.
    case short
    /// Held past the threshold; reported at the threshold, while still held, so the
    /// user gets feedback without letting go.
    case long

    public var description: String { rawValue }
}

/// One physical press of a configured button, after debouncing.
public struct ButtonEvent: Sendable, Equatable, CustomStringConvertible {
    /// The button's configured name ("record", "snapshot", "extra").
    public var button: String
    public var action: ButtonAction
    public var kind: ButtonPressKind
    /// When the press was recognised: the release for a short press, the threshold for a long one.
    public var time: MonotonicInstant

    public init(button: String, action: ButtonAction, kind: ButtonPressKind, time: MonotonicInstant) {
        self.button = button
        self.action = action
        self.kind = kind
        self.time = time
    }

    public var description: String { "\(button) button: \(kind) press → \(action) at \(time)" }
}
