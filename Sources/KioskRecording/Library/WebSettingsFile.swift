import Foundation
import Glibc
import KioskCore

/// Where the web app's saved settings live (`<state_directory>/web-settings.toml`), read
/// by every command that reads the configuration and written only by the daemon's web app.
public enum WebSettingsFile {
    public static func path(stateDirectory: String) -> String { stateDirectory + "/" + WebSettingsOverlay.fileName }

    /// The saved settings; nil when there is no file (or its folder cannot be entered by
    /// this user, which then sees the main file alone).
    /// - Throws: `ConfigurationError` naming the file for a file that cannot be read or is wrong.
    public static func load(_ path: String) throws(ConfigurationError) -> WebSettingsOverlay? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw ConfigurationError(file: path, message: "cannot read the web app's saved settings: check its permissions "
                                     + "(the daemon's user kioskcam writes it), or remove it to use /etc/kioskcam/kioskcam.toml alone")
        }
        return try WebSettingsOverlay(toml: text, file: path)
    }

    /// Replaces the file with `overlay`, the previous one kept as `web-settings.toml.bak`.
    public static func save(_ overlay: WebSettingsOverlay, to path: String) throws(AtomicFile.Failure) {
        try AtomicFile.replace(path, with: Array(overlay.toml.utf8), mode: 0o644, keepingOld: ".bak")
    }
}

extension Configuration {
    /// The web app's saved settings in `control.state_directory`, applied on top.
    /// - Returns: The file's path when there was one.
    @discardableResult
    public mutating func applyWebSettings() throws(ConfigurationError) -> String? {
        let path = WebSettingsFile.path(stateDirectory: control.stateDirectory)
        guard let overlay = try WebSettingsFile.load(path) else { return nil }
        try overlay.apply(to: &self, file: path)
        return path
    }
}
