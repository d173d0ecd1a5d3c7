import Glibc
import KioskALSA
import KioskCLI
import KioskCore
import KioskWakeUp

/// `kioskcam play`'s keys on a terminal (`PlaybackKeys` says what each does): stdin is
/// switched to single keys without echo — Ctrl-C still signals — and read on its own
/// thread; `stop()` (or the end of its owner) puts the terminal back as it was.
final class PlaybackKeyboard: @unchecked Sendable { // @unchecked: `original` is written once in init; the rest is Sendable
    private var original = termios()
    private let wakeUp: WakeUpEvent
    private let thread = ThreadGroup()
    private let restored = Locked(false)

    /// Starts reading keys for `player`; `changed` is called (on the key thread) after
    /// each key that paused, resumed or changed the volume.
    /// - Returns: nil when stdin is not a terminal or cannot be switched (playback then
    ///   goes on without keys, as when piped).
    init?(player: ALSAPlayer, changed: @escaping @Sendable () -> Void) {
        guard isatty(STDIN_FILENO) == 1, tcgetattr(STDIN_FILENO, &original) == 0,
              let wakeUp = try? WakeUpEvent() else { return nil }
        self.wakeUp = wakeUp
        var keys = original
        keys.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &keys.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        guard tcsetattr(STDIN_FILENO, TCSANOW, &keys) == 0 else { return nil }
        thread.start(name: "kioskcam.keys") { [wakeUp] in
            Self.readKeys(player: player, wakeUp: wakeUp, changed: changed)
        }
    }

    deinit { stop() }

    /// Stops reading and puts the terminal's settings back; later calls do nothing.
    func stop() {
        guard restored.withLock({ done in defer { done = true }; return !done }) else { return }
        wakeUp.signal()
        _ = thread.wait()
        var original = original
        _ = tcsetattr(STDIN_FILENO, TCSANOW, &original)
    }

    /// Until woken, or stdin ends: each byte read becomes an action on the player.
    private static func readKeys(player: ALSAPlayer, wakeUp: WakeUpEvent, changed: @Sendable () -> Void) {
        var buffer = [UInt8](repeating: 0, count: 16)
        while true {
            var fds = [pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0), wakeUp.pollDescriptor]
            let ready = poll(&fds, nfds_t(fds.count), -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return
            }
            if fds[1].revents != 0 { return }
            guard fds[0].revents != 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR || errno == EAGAIN { continue }
            guard count > 0 else { return }  // end of input or the terminal went away
            for byte in buffer.prefix(count) {
                switch PlaybackKeys.action(for: byte, volume: player.volume) {
                case .togglePause?:
                    if player.isPaused { player.resume() } else { player.pause() }
                    changed()
                case .volume(let volume)?:
                    player.volume = volume
                    changed()
                case .stop?:
                    player.stop()
                    return
                case nil:
                    break
                }
            }
        }
    }
}
