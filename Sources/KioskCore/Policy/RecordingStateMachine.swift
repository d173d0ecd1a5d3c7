/// The recorder's life cycle: `idle → starting → recording → stopping → idle`.
public enum RecordingState: String, Sendable, Equatable, CaseIterable {
    case idle, starting, recording, stopping

    /// The record control is usable only when a press has a clear meaning.
    public var acceptsRecordControl: Bool { self == .idle || self == .recording }
}

/// What can happen to the recorder.
public enum RecordingEvent: String, Sendable, Equatable, CaseIterable {
    /// The user asked to record.
    case start
    /// The writer opened its file and wrote the header.
    case writerReady
    /// The writer could not open or write; the recording ends.
    case writerFailed
    /// The user (or the disk guard, or shutdown) asked to stop.
    case stop
    /// The file was finished and moved into the library.
    case finished
}

/// An event that makes no sense in the current state. Illegal transitions are
/// errors the caller reports ("already recording"), never crashes.
public struct RecordingTransitionError: Error, Equatable, Sendable, CustomStringConvertible {
    public var state: RecordingState
    public var event: RecordingEvent

    public var description: String {
        switch (state, event) {
        case (.starting, .start), (.recording, .start):
            return "already recording: stop the current recording first"
        case (.stopping, .start):
            return "the previous recording is still being finished; try again in a moment"
        case (.idle, .stop):
            return "not recording: there is nothing to stop"
        case (.stopping, .stop):
            return "already stopping"
        default:
            return "cannot \(event.rawValue) while \(state.rawValue)"
        }
    }
}

/// The pure transition table; the recorder holds one and asks it before acting.
public struct RecordingStateMachine: Sendable, Equatable {
    public private(set) var state: RecordingState = .idle

    public init() {}

    /// The state `event` leads to from `state`, or nil if it is illegal there.
    public static func next(from state: RecordingState, on event: RecordingEvent) -> RecordingState? {
        switch (state, event) {
        case (.idle, .start): .starting
        case (.starting, .writerReady): .recording
        case (.starting, .writerFailed), (.recording, .writerFailed), (.stopping, .writerFailed): .idle
        // Stopping before the writer is ready is allowed: the user changed their mind.
        case (.starting, .stop), (.recording, .stop): .stopping
        case (.stopping, .finished): .idle
        default: nil
        }
    }

    /// Applies `event`.
    /// - Throws: `RecordingTransitionError` when the event is illegal in the current state.
    @discardableResult
    public mutating func apply(_ event: RecordingEvent) throws(RecordingTransitionError) -> RecordingState {
        guard let next = Self.next(from: state, on: event) else {
            throw RecordingTransitionError(state: state, event: event)
        }
        state = next
        return next
    }
}
