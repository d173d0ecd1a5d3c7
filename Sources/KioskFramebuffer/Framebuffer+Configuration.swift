import Glibc
import KioskCore

extension Framebuffer {
    /// The first framebuffer device "auto" looks for.
    public static let automaticDevice = "/dev/fb0"

    /// Where a file-backed framebuffer goes, in order: the runtime folder, then the state
    /// directory (when /run/kioskcam cannot be made, e.g. not running as root).
    public static func fileLocations(config: Configuration) -> [String] {
        [Configuration.Screen.defaultFramebufferFile, config.control.stateDirectory + "/screen.fb"]
    }

    /// Opens the framebuffer `screen.framebuffer` names, for drawing.
    ///
    /// "auto" takes `/dev/fb0` when it exists; without one it makes a file-backed
    /// framebuffer of `screen.virtual_size` (XRGB8888) and says so through `log`, so the
    /// appliance runs — and `kioskcam screenshot` shows its screen — on a board without a panel.
    /// - Parameters:
    ///   - config: The whole configuration (`[screen]`, and `[control]` for the state directory).
    ///   - log: Receives one line saying which framebuffer was chosen and why.
    /// - Throws: `ScreenError` from opening the device or creating the file. A /dev/fb0
    ///   that exists but cannot be opened is an error, not a reason to fall back.
    public static func open(config: Configuration, log: (String) -> Void) throws(ScreenError) -> Framebuffer {
        let screen = config.screen
        switch screen.framebuffer {
        case .device(let path):
            return try device(path: path)
        case .file(let path):
            return try createFile(path: path, size: screen.virtualSize, format: .xrgb8888)
        case .memory:
            log("drawing into memory only (screen.framebuffer = \"memory\")")
            return memory(size: screen.virtualSize, format: .xrgb8888)
        case .automatic:
            if access(automaticDevice, F_OK) == 0 {
                return try device(path: automaticDevice)
            }
            var lastError: ScreenError?
            for path in fileLocations(config: config) {
                let folder = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
                if !folder.isEmpty, access(folder, F_OK) != 0 { mkdir(folder, 0o755) }
                do throws(ScreenError) {
                    let framebuffer = try createFile(path: path, size: screen.virtualSize, format: .xrgb8888)
                    log("no \(automaticDevice); drawing \(screen.virtualSize) into the file-backed framebuffer \(path) (`kioskcam screenshot` shows it)")
                    return framebuffer
                } catch {
                    lastError = error
                }
            }
            throw lastError ?? ScreenError(.notFound, path: automaticDevice, operation: "open")
        }
    }

    /// Opens what `screen.framebuffer` names read-only, to take a screenshot: the device,
    /// or the file the daemon draws into (or drew into last).
    /// - Throws: `ScreenError.notFound` when there is neither a device nor a file, with a
    ///   hint to start the daemon; `.invalidGeometry` for "memory", which no other
    ///   process can see.
    public static func openForReading(config: Configuration) throws(ScreenError) -> Framebuffer {
        switch config.screen.framebuffer {
        case .device(let path):
            return try device(path: path, writable: false)
        case .file(let path):
            return try openFile(path: path)
        case .memory:
            throw ScreenError(.invalidGeometry, path: "memory", operation: "screenshot",
                              detail: "screen.framebuffer is \"memory\": no other process can see the picture",
                              hint: "set screen.framebuffer to \"auto\" or a file:/ path")
        case .automatic:
            if access(automaticDevice, F_OK) == 0 { return try device(path: automaticDevice, writable: false) }
            let locations = fileLocations(config: config)
            for path in locations where access(path, F_OK) == 0 {
                return try openFile(path: path)
            }
            throw ScreenError(.notFound, path: automaticDevice, operation: "screenshot",
                              detail: "there is no framebuffer device and no file-backed framebuffer (\(locations.joined(separator: ", ")))",
                              hint: "start the daemon, or give a framebuffer with --framebuffer")
        }
    }
}
