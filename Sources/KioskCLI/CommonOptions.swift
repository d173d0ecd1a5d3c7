import ArgumentParser
import Foundation
import KioskCore
import KioskRecording
import Logging

/// Options every subcommand shares.
public struct CommonOptions: ParsableArguments, Sendable {
    public init() {}

    @Option(name: .long, help: ArgumentHelp("Configuration file.", valueName: "file"))
    public var config: String?

    @Option(name: .long, help: ArgumentHelp("Media library root (overrides storage.media_root).", valueName: "dir"))
    public var root: String?

    @Flag(name: .shortAndLong, help: "Log debug detail, including FFmpeg's own messages.")
    public var verbose = false

    /// Loads the configuration: the file (if any), then `--root`.
    /// - Throws: `CLIError` naming the file, line, key and what is allowed.
    public func loadConfiguration() throws -> Configuration {
        var configuration: Configuration
        let path = config ?? Configuration.defaultPath
        if FileManager.default.fileExists(atPath: path) {
            guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
                throw CLIError("cannot read the configuration file \(path): check its permissions and that it is UTF-8 text")
            }
            do {
                configuration = try Configuration(toml: text, file: path)
            } catch {
                throw CLIError(error.description, exitCode: 78)
            }
        } else if config != nil {
            throw CLIError("the configuration file \(path) does not exist; give an existing file with --config, or leave it out to use the defaults", exitCode: 78)
        } else {
            configuration = Configuration()
        }
        // What an admin saved from the web app's Settings page overrides the file's keys.
        do {
            try configuration.applyWebSettings()
        } catch {
            throw CLIError(error.description + " (fix or remove that file, then systemctl reload kioskcam)", exitCode: 78)
        }
        if let root {
            let absolute = root.hasPrefix("/") ? root : FileManager.default.currentDirectoryPath + "/" + root
            try configuration.override("storage.media_root", .string(absolute), origin: "--root")
        }
        return configuration
    }

    public func makeLogger(_ configuration: Configuration, label: String = "kioskcam") -> Logger {
        let level: Logger.Level = verbose ? .debug : Logger.Level(rawValue: configuration.logging.level.rawValue) ?? .info
        LoggingSystem.bootstrapOnce(level: level)
        var logger = Logger(label: label)
        logger.logLevel = level
        return logger
    }
}

extension Configuration {
    /// `set` with errors turned into the CLI's usage error.
    public mutating func override(_ key: String, _ value: TOMLValue, origin: String) throws {
        do {
            try set(key, value, origin: origin)
        } catch {
            throw CLIError("\(origin): \(error.message)", exitCode: 64)
        }
    }
}

/// A failure to show the user as one clear line, with an exit status.
public struct CLIError: Error, CustomStringConvertible {
    public var message: String
    public var exitCode: Int32

    public init(_ message: String, exitCode: Int32 = 1) {
        self.message = message
        self.exitCode = exitCode
    }

    public var description: String { message }
}

extension LoggingSystem {
    private static let bootstrapped = Locked(false)

    /// Sends logs to stderr, once per process.
    public static func bootstrapOnce(level: Logger.Level) {
        guard bootstrapped.withLock({ claimed in defer { claimed = true }; return !claimed }) else { return }
        bootstrap { label in
            var handler = LogLineHandler(label: label)
            handler.logLevel = level
            return handler
        }
    }
}

/// Runs `body`, printing a `CLIError` (or any error) as one line and exiting with its status.
public func runReportingErrors(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch {
        throw reported(error)
    }
}

/// The name errors begin with: this program's (`kioskcam` or `kioskcam-broadcast`).
private let programName = CommandLine.arguments.first.map { ($0 as NSString).lastPathComponent } ?? "kioskcam"

/// Prints an error as one line and turns it into the exit status to leave with.
private func reported(_ error: Error) -> ExitCode {
    switch error {
    case let error as CLIError:
        FileHandle.standardError.write(Data("\(programName): error: \(error.message)\n".utf8))
        return ExitCode(error.exitCode)
    case let error as ExitCode:
        return error
    default:
        FileHandle.standardError.write(Data("\(programName): error: \(error)\n".utf8))
        return ExitCode(1)
    }
}

/// `runReportingErrors` for async commands (the daemon).
public func runReportingErrorsAsync(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch {
        throw reported(error)
    }
}
