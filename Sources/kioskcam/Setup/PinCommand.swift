import ArgumentParser
import Foundation
import Glibc
import KioskCLI
import KioskCore
import KioskPIN

/// `kioskcam pin set` / `kioskcam pin status`: the screen lock's PIN, for the maintainer
/// over SSH. Needs root: the PIN hash lives in the root-only state directory.
struct PinCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pin",
        abstract: "Set the screen lock's PIN, or show whether the factory default is still in force.",
        discussion: "The PIN is stored only as a salted PBKDF2-SHA256 hash in [control] state_directory (root-only). It is never printed or logged.",
        subcommands: [Set.self, Status.self]
    )

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set a new 4-digit PIN (asked twice on the terminal, or one line from standard input with --stdin).",
            discussion: "Refuses PINs anyone would guess first — one digit four times (0000, 1111, …) or four digits counting up or down (0123 … 6789, 9876 … 3210, including the factory default 1234) — unless --force is given. Setting a PIN clears the count of wrong PINs."
        )

        @OptionGroup var common: CommonOptions

        @Flag(help: "Read the PIN as one line from standard input instead of asking on the terminal.")
        var stdin = false

        @Flag(help: "Accept a PIN that is easy to guess.")
        var force = false

        func run() throws {
            try runReportingErrors {
                let configuration = try common.loadConfiguration()
                let pin = try stdin ? readPINFromStandardInput() : readPINFromTerminal()
                let store = PinStore(directory: configuration.control.stateDirectory, throttle: configuration.lock.throttle)
                do {
                    try store.setPIN(pin, allowTrivial: force)
                } catch let error as PinStoreError {
                    throw CLIError(error.description, exitCode: error.exitCode)
                }
                print("PIN set; the screen lock uses it from the next check")
            }
        }

        private func readPINFromStandardInput() throws -> String {
            guard let line = readLine(strippingNewline: true) else {
                throw CLIError("no PIN on standard input: pipe one line with the 4 digits", exitCode: 65)
            }
            return line.hasSuffix("\r") ? String(line.dropLast()) : line
        }

        private func readPINFromTerminal() throws -> String {
            guard isatty(STDIN_FILENO) == 1 else {
                throw CLIError("standard input is not a terminal: run this interactively, or pipe the PIN with --stdin", exitCode: 64)
            }
            let first = try Terminal.readHidden(prompt: "New PIN: ")
            // Check the first entry at once rather than after asking twice.
            do throws(PinStoreError) {
                try PinStore.validate(first, allowTrivial: force)
            } catch {
                throw CLIError(error.description, exitCode: error.exitCode)
            }
            let second = try Terminal.readHidden(prompt: "Repeat the new PIN: ")
            guard first == second else {
                throw CLIError("the two PINs differ; nothing was changed", exitCode: 65)
            }
            return first
        }
    }

    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show whether the factory-default PIN is in force and the state of the wrong-PIN throttle."
        )

        @OptionGroup var common: CommonOptions

        func run() throws {
            try runReportingErrors {
                let configuration = try common.loadConfiguration()
                let store = PinStore(directory: configuration.control.stateDirectory, throttle: configuration.lock.throttle)
                let status: PinStatus
                do {
                    status = try store.status()
                } catch let error as PinStoreError {
                    throw CLIError(error.description, exitCode: error.exitCode)
                }
                if status.isDefault {
                    print("pin: FACTORY DEFAULT in force; change it with `kioskcam pin set`")
                } else {
                    print("pin: set (\(PinHash.scheme), \(status.iterations ?? 0) iterations)")
                }
                print("wrong PINs in a row: \(status.failures)")
                let free = max(0, configuration.lock.failuresBeforeLockout - status.failures)
                if status.waitSeconds > 0 {
                    print("next attempt: in \(ScreenController.waitText(status.waitSeconds))")
                } else if free > 0 {
                    print("next attempt: now (\(free) more before a wait)")
                } else {
                    print("next attempt: now (a wrong one starts a wait of \(ScreenController.waitText(configuration.lock.throttle.lockoutSeconds(afterFailures: status.failures + 1))))")
                }
                print("state directory: \(store.directory)")
            }
        }
    }
}

extension PinStoreError {
    /// sysexits.h: bad data, no permission, I/O error.
    var exitCode: Int32 {
        switch code {
        case .invalidPIN, .trivialPIN, .invalidWebUser: 65
        case .permissionDenied: 77
        case .io, .corrupt, .crypto: 74
        }
    }
}

/// Hidden input on the controlling terminal.
enum Terminal {
    /// The settings to put back if Ctrl-C arrives while echo is off.
    nonisolated(unsafe) private static var saved = termios()

    /// Prints `prompt` on stderr and reads one line from stdin with echo off.
    /// - Throws: `CLIError` when the terminal cannot be set up or input ends.
    static func readHidden(prompt: String) throws -> String {
        FileHandle.standardError.write(Data(prompt.utf8))
        var original = termios()
        guard tcgetattr(STDIN_FILENO, &original) == 0 else {
            throw CLIError("cannot read the terminal's settings: \(String(cString: strerror(errno)))")
        }
        saved = original
        var hidden = original
        hidden.c_lflag &= ~tcflag_t(ECHO)
        hidden.c_lflag |= tcflag_t(ECHONL)
        // Restore echo before dying of Ctrl-C, or the shell stays blind.
        let previous = signal(SIGINT) { _ in
            _ = tcsetattr(STDIN_FILENO, TCSAFLUSH, &Terminal.saved)
            _exit(130)
        }
        defer {
            _ = tcsetattr(STDIN_FILENO, TCSAFLUSH, &original)
            signal(SIGINT, previous)
        }
        guard tcsetattr(STDIN_FILENO, TCSAFLUSH, &hidden) == 0 else {
            throw CLIError("cannot switch off the terminal's echo: \(String(cString: strerror(errno)))")
        }
        guard let line = readLine(strippingNewline: true) else {
            throw CLIError("input ended before a PIN was entered; nothing was changed", exitCode: 65)
        }
        return line
    }
}
