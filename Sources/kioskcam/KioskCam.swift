import ArgumentParser
import Dispatch
import KioskCLI
import KioskCore
import KioskMedia

/// `kioskcam`: the camera appliance's one binary. This folder holds only the command
/// line and the wiring, one file per command: Capture/ (run, record, snapshot,
/// screenshot, broadcast, the camera helper), Library/ (list, purge, salvage, export,
/// waveform, play), Daemon/ (status, start, stop, event, watch, camera, clip, upload:
/// requests to the running daemon), Setup/ (config, pin, web-user, probe, motion-tune,
/// input-monitor), and the old spellings (OldNames.swift). The work is done in the
/// library modules.
@main
struct KioskCam: ParsableCommand {
    static let version = KioskCamVersion.version

    static let configuration = CommandConfiguration(
        commandName: "kioskcam",
        abstract: "Camera appliance: records H.264/AAC MP4s from a camera and microphone into a dated media library.",
        discussion: """
        With no camera or microphone present, kioskcam uses its built-in test-pattern camera \
        and tone microphone, and says so.

        Settings come from /etc/kioskcam/kioskcam.toml (or --config FILE); every setting has \
        a default, so no file is needed. Command-line options override the file.
        """,
        version: "kioskcam \(version) (\(MediaCapabilities.libraryVersions))",
        subcommands: [Run.self, Record.self, Snapshot.self, List.self, Purge.self, WaveformCommand.self, PlayCommand.self, ExportCommand.self,
                      Probe.self, Salvage.self, ConfigCommand.self, PinCommand.self, StatusCommand.self, StartCommand.self, StopCommand.self,
                      EventCommand.self, MotionTune.self, CameraCommand.self, WatchCommand.self, InputMonitorCommand.self, Screenshot.self,
                      UploadCommand.self, BroadcastCommand.self, ClipCommand.self, WebUserCommand.self,
                      OldBroadcastStart.self, OldBroadcastStop.self, OldInputEvents.self]
    )

    /// Runs the command on the main thread, and the one async command (`run`, the daemon)
    /// in a task while the main thread waits for it.
    ///
    /// Why not `AsyncParsableCommand`'s async main: on Linux it parks the main thread with
    /// `dispatch_main()`, that is `pthread_exit`, whose forced unwind looks up every frame
    /// of the main thread in the unwind tables: about 1 MiB of `.eh_frame_hdr` and
    /// `.eh_frame` made resident in every kioskcam process, `record` included (pagemap;
    /// gdb on `_Unwind_ForcedUnwind`). Nothing in kioskcam runs on the main actor or the
    /// main queue, so a main thread blocked on a semaphore starves nothing.
    static func main() {
        let command: ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            exit(withError: error)
        }
        do {
            if let daemon = command as? AsyncParsableCommand {
                try waitFor(daemon)
            } else {
                var command = command
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }

    /// `command.run()` in a detached task; the calling thread blocks until it returns.
    private static func waitFor(_ command: AsyncParsableCommand) throws {
        /// Handed to the task and back, touched by one side at a time (the semaphore orders them).
        final class Handoff: @unchecked Sendable {
            var command: AsyncParsableCommand
            var result: Result<Void, Error> = .success(())
            init(_ command: AsyncParsableCommand) { self.command = command }
        }
        let handoff = Handoff(command)
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            do {
                try await handoff.command.run()
            } catch {
                handoff.result = .failure(error)
            }
            done.signal()
        }
        done.wait()
        try handoff.result.get()
    }
}
