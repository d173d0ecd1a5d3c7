import ArgumentParser
import Foundation
import Glibc
import KioskCLI
import KioskCore
import KioskPIN

/// `kioskcam web-user set|list|remove`: who may log in to the web app. Run on the board
/// (as root, over SSH): the web app itself cannot create the first user, so a camera on
/// the network never has a default password.
struct WebUserCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "web-user",
        abstract: "Add, change, list or remove the users of the web app.",
        discussion: "Passwords are stored only as salted PBKDF2-SHA256 hashes in [control] state_directory. Nobody can log in to the web app until a user exists.",
        subcommands: [Set.self, List.self, Remove.self]
    )

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a user, or change one's role and password (read from standard input, or asked twice on a terminal).",
            discussion: "The password needs at least \(WebPasswordPolicy.minimumLength) characters and may not be a common one. The user's sessions end when the password changes."
        )

        @OptionGroup var common: CommonOptions

        @Argument(help: "The user's name (\(WebUserName.rule)).")
        var name: String

        @Option(help: "admin (records, takes stills, exports, deletes, changes settings) or viewer (watches, browses, downloads).")
        var role: WebRole = .viewer

        @Flag(help: "Also keep the password itself on the board, for ONVIF clients that sign with PasswordDigest (Home Assistant's ONVIF integration). Use a dedicated viewer account for the NVR.")
        var onvifDigest = false

        func run() throws {
            try runReportingErrors {
                let configuration = try common.loadConfiguration()
                guard WebUserName.isValid(name) else {
                    throw CLIError("'\(name.prefix(40))' is not a user name: use \(WebUserName.rule)", exitCode: 64)
                }
                let password = try readPassword()
                let store = WebUserStore(directory: configuration.control.stateDirectory)
                let existed = ((try? store.list()) ?? []).contains { $0.name == name }
                do {
                    try store.set(name: name, role: role, password: password, keepForONVIF: onvifDigest)
                } catch let error as PinStoreError {
                    throw CLIError(error.description, exitCode: error.exitCode)
                }
                print("web user \(name) \(existed ? "changed" : "added") (\(role.rawValue)); it can log in at once"
                      + (onvifDigest ? "; its password is kept for ONVIF PasswordDigest in \(ONVIFPasswords(directory: configuration.control.stateDirectory).path)" : ""))
            }
        }

        private func readPassword() throws -> String {
            if isatty(STDIN_FILENO) == 1 {
                let first = try Terminal.readHidden(prompt: "Password for \(name): ")
                if let problem = WebPasswordPolicy.problem(with: first, user: name) {
                    throw CLIError("password refused: \(problem); nothing was changed", exitCode: 65)
                }
                guard try Terminal.readHidden(prompt: "Again: ") == first else {
                    throw CLIError("the two passwords differ; nothing was changed", exitCode: 65)
                }
                return first
            }
            guard let line = readLine(strippingNewline: true) else {
                throw CLIError("no password on standard input: pipe one line, or run this on a terminal", exitCode: 65)
            }
            return line.hasSuffix("\r") ? String(line.dropLast()) : line
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the users and their roles.")

        @OptionGroup var common: CommonOptions

        @Flag(help: "Print JSON.")
        var json = false

        func run() throws {
            try runReportingErrors {
                let configuration = try common.loadConfiguration()
                let users: [WebUser]
                do {
                    users = try WebUserStore(directory: configuration.control.stateDirectory).list()
                } catch let error as PinStoreError {
                    throw CLIError(error.description, exitCode: error.exitCode)
                }
                if json {
                    let data = try JSONEncoder().encode(users)
                    print(String(decoding: data, as: UTF8.self))
                } else if users.isEmpty {
                    print("no web users: nobody can log in; add one with `kioskcam web-user set NAME --role admin`")
                } else {
                    for user in users { print("\(user.name)\t\(user.role.rawValue)") }
                }
            }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a user (their sessions end).")

        @OptionGroup var common: CommonOptions

        @Argument(help: "The user's name.")
        var name: String

        func run() throws {
            try runReportingErrors {
                let configuration = try common.loadConfiguration()
                let removed: Bool
                do {
                    removed = try WebUserStore(directory: configuration.control.stateDirectory).remove(name: name)
                } catch let error as PinStoreError {
                    throw CLIError(error.description, exitCode: error.exitCode)
                }
                guard removed else { throw CLIError("there is no web user '\(name.prefix(40))' (see `kioskcam web-user list`)", exitCode: 65) }
                print("web user \(name) removed")
            }
        }
    }
}

extension WebRole: ExpressibleByArgument {}
