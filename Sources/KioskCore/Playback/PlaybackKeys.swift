/// What a key pressed during `kioskcam play` asks for.
public enum PlaybackKeyAction: Sendable, Equatable {
    /// Pause when playing, resume when paused.
    case togglePause
    /// Set the volume (0…1) to this.
    case volume(Double)
    /// Stop playing (as Ctrl-C does).
    case stop
}

/// The keys of `kioskcam play` on a terminal: space pauses and resumes, + and - change
/// the volume a tenth at a time (= and _ too, the same keys unshifted or shifted), q
/// stops. Pure: the player and the terminal stay with the command.
public enum PlaybackKeys {
    public static let volumeStep = 0.1
    /// The line shown before playback starts.
    public static let help = "keys: space pause/resume, + / - volume, q stop"

    /// The action for one byte read from the terminal at `volume`; nil for any other key
    /// (the bytes of an arrow key's escape sequence included).
    public static func action(for byte: UInt8, volume: Double) -> PlaybackKeyAction? {
        switch byte {
        case UInt8(ascii: " "): return .togglePause
        case UInt8(ascii: "+"), UInt8(ascii: "="): return .volume(stepped(volume, by: 1))
        case UInt8(ascii: "-"), UInt8(ascii: "_"): return .volume(stepped(volume, by: -1))
        case UInt8(ascii: "q"), UInt8(ascii: "Q"): return .stop
        default: return nil
        }
    }

    /// `volume` one tenth up or down, onto the tenths (0.55 goes to 0.6 or 0.5), within 0…1.
    static func stepped(_ volume: Double, by direction: Int) -> Double {
        let tenths = PlaybackGain.clamp(volume) * 10
        let next = direction > 0 ? (tenths + 1e-9).rounded(.down) + 1 : (tenths - 1e-9).rounded(.up) - 1
        return PlaybackGain.clamp(next / 10)
    }
}
