import KioskCore
import KioskMedia

/// Why the recorder refused or ended a recording, in words for the person at the device.
public struct RecorderError: Error, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        case illegalTransition, writerFailed, diskFull, library, noVideo, snapshotFailed
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    init(_ transition: RecordingTransitionError) {
        self.init(.illegalTransition, transition.description)
    }

    init(_ media: MediaError) {
        self.init(media.code == .diskFull ? .diskFull : .writerFailed, media.description)
    }

    public var description: String { message }
}
