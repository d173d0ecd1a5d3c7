import Foundation
import Glibc
import KioskCore

/// Why a child process could not be started.
public struct ChildProcessError: Error, CustomStringConvertible {
    public var description: String
}

/// A child process with one owner: started, signalled, waited for (reaped) once.
///
/// Spawned and reaped here with `posix_spawn` and `waitpid(WNOHANG)` rather than through
/// Foundation's `Process`, whose exit monitoring runs on a run-loop thread of its own: in
/// the guest that thread never saw the broadcast end (its wake-up socket pair could not be
/// made), so a stopped broadcast stayed "running" and the next start was refused.
public final class ChildProcess: Sendable {
    public let pid: Int32
    /// The wait status once reaped; nil while it runs.
    public var status: Int32? { exitStatus.withLock { $0 } }
    private let exitStatus = Locked<Int32?>(nil)

    /// Starts `program` with `arguments`, its standard input `input` (nil: /dev/null),
    /// standard output `output` (nil: the caller's), standard error the caller's, and no
    /// other descriptor of the caller's.
    public init(program: String, arguments: [String], input: Int32? = nil, output: Int32? = nil) throws(ChildProcessError) {
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attributes)
        defer {
            posix_spawn_file_actions_destroy(&actions)
            posix_spawnattr_destroy(&attributes)
        }
        // The given input (or none), the daemon's output for its log, and none of the
        // daemon's other descriptors (camera, sound card, sockets): the child opens its own.
        if let input {
            posix_spawn_file_actions_adddup2(&actions, input, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        if let output { posix_spawn_file_actions_adddup2(&actions, output, 1) }
        Self.closeFromThree(&actions)
        // Signals as a fresh process has them: the daemon's blocked or ignored ones
        // (SIGTERM is taken by its own handler) must not keep the child from stopping.
        var none = sigset_t()
        var all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([program] + arguments).map { strdup($0) }
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        let result = (argv + [nil]).withUnsafeBufferPointer { pointers -> Int32 in
            guard let base = pointers.baseAddress else { return EINVAL }
            return posix_spawn(&child, program, &actions, &attributes, base, environ)
        }
        guard result == 0 else {
            throw ChildProcessError(description: "cannot start \(program): \(String(cString: strerror(result)))")
        }
        pid = child
    }

    /// Adds "close every descriptor from 3 up": glibc ≥ 2.34's
    /// `posix_spawn_file_actions_addclosefrom_np` (declared only under _GNU_SOURCE, which
    /// Swift's Glibc module does not set, so looked up by name), else one close per
    /// descriptor open now.
    private static func closeFromThree(_ actions: inout posix_spawn_file_actions_t) {
        typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32
        if let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") {
            _ = unsafeBitCast(symbol, to: AddCloseFrom.self)(&actions, 3)
            return
        }
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for name in open {
            if let fd = Int32(name), fd >= 3 { posix_spawn_file_actions_addclose(&actions, fd) }
        }
    }

    /// The signal that ended it; nil while it runs or when it exited.
    public var terminatingSignal: Int32? {
        guard let status, status & 0x7f != 0 else { return nil }
        return status & 0x7f
    }

    /// How it ended, for a log line: "exit status N", "killed by signal N", or "still running".
    public var ending: String {
        guard let status else { return "still running" }
        if let signal = terminatingSignal { return "killed by signal \(signal)" }
        return "exit status \((status >> 8) & 0xff)"
    }

    public var isRunning: Bool {
        exitStatus.withLock { status in
            if status != nil { return false }
            var waitStatus: Int32 = 0
            let reaped = waitpid(pid, &waitStatus, WNOHANG)
            if reaped == pid {
                status = waitStatus
                return false
            }
            // ECHILD: already reaped elsewhere; either way it is gone.
            if reaped < 0 && errno != EINTR {
                status = -1
                return false
            }
            return true
        }
    }

    public func signal(_ number: Int32) { if isRunning { kill(pid, number) } }

    /// Waits until it exits or `timeout` passes; whether it exited.
    public func wait(timeout: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        return !isRunning
    }
}

/// The program that runs, and the programs shipped beside it (`kioskcam-broadcast`,
/// `kioskcam-camera`), which kioskcam starts.
public enum RunningProgram {
    /// The running program's path (`/proc/self/exe`).
    public static var path: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    /// The program called `name` in the same folder as `program`.
    public static func sibling(_ name: String, of program: String = path) -> String {
        (program as NSString).deletingLastPathComponent + "/" + name
    }
}
