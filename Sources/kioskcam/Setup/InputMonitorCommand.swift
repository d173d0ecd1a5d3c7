import ArgumentParser
import Foundation
import KioskCLI
import KioskCore
import KioskGPIO
import KioskInput
import KioskSources

/// `kioskcam input-monitor`: prints decoded input events as they arrive, for a person
/// wiring a board to see what the touch screen and the GPIO buttons send. (It was
/// `kioskcam events`, which read like the daemon's event clips; that name still works.)
struct InputMonitorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "input-monitor",
        abstract: "Print touch and GPIO button events as they arrive (Ctrl-C to stop).",
        discussion: """
        Each line is the time in seconds since the command started, the device and the event \
        in logical screen pixels, e.g. `12.345 /dev/input/event3 touch press 400 240 slot 0`. \
        Without --device the touch screens are found by what they can do; the devices passed \
        over are listed with the reason. Devices plugged in later are picked up. Button presses \
        from [buttons] print as e.g. `3.210 gpio record button: short press → record`; stop the \
        daemon first (it holds the lines).
        """
    )

    @OptionGroup var common: CommonOptions

    @Option(help: ArgumentHelp("Use this input device instead of discovery (overrides touch.device).", valueName: "path"))
    var device: String?

    @Option(help: ArgumentHelp("The logical screen size the coordinates are scaled to (default: an 800x480 panel, turned by the rotation).", valueName: "WxH"))
    var screen: String?

    @Option(help: ArgumentHelp("How the panel is turned relative to the picture: 0, 90, 180 or 270 (overrides touch.rotation).", valueName: "degrees"))
    var rotation: Int?

    @Flag(help: "Also print every raw evdev event.")
    var raw = false

    func run() throws {
        try runReportingErrors {
            var configuration = try common.loadConfiguration()
            guard let size = FrameSize(parsing: screen ?? "800x480"), size.width > 0, size.height > 0 else {
                throw CLIError("--screen \(screen ?? ""): give the logical screen size as WIDTHxHEIGHT, such as 800x480", exitCode: 64)
            }
            if let device {
                try configuration.override("touch.device", .string(device), origin: "--device")
                try Self.requireTouchscreen(device)
            }
            if let rotation { try configuration.override("touch.rotation", .integer(Int64(rotation)), origin: "--rotation") }
            if configuration.touch.device == .none, case .disabled = configuration.buttons.chip {
                throw CLIError("touch.device and buttons.chip are \"none\" in the configuration; give --device PATH to read a touch device anyway", exitCode: 64)
            }
            var logical = ScreenSize(width: size.width, height: size.height)
            if screen == nil, configuration.touch.rotation?.swapsAxes == true { logical = logical.swapped }
            try watch(configuration.touch, buttons: configuration.buttons, screen: logical)
        }
    }

    /// With --device: a clear error now rather than silence when it is not a touch screen.
    static func requireTouchscreen(_ path: String) throws {
        switch TouchscreenDiscovery.judge(path: path) {
        case .failure(let error):
            throw CLIError(error.description)
        case .success(let candidate) where candidate.verdict.score == nil:
            throw CLIError("\(path) (\"\(candidate.capabilities.name)\") is not a touch screen kioskcam can use: \(candidate.explanation)")
        case .success:
            break
        }
    }

    func watch(_ settings: Configuration.Touch, buttons buttonSettings: Configuration.Buttons, screen: ScreenSize) throws {
        let start = SystemClock().now()
        // The GPIO buttons print beside the touches: one place to see everything arrive.
        var buttons: ButtonPanel?
        do {
            buttons = try ButtonPanel.open(buttonSettings, now: start)
            Self.printLine(buttons.map { "buttons: \($0.summary)" } ?? "buttons: none configured (buttons.chip)")
        } catch {
            Self.printLine("buttons: \(error)")
        }
        let seconds = { (time: MonotonicInstant) in String(format: "%.3f", time.seconds(since: start)) }
        let panel = TouchPanel(settings: settings, screen: screen)
        defer { panel.close() }
        panel.onNotice = { Self.printLine($0.description) }
        if raw { panel.onRawEvent = { path, event in Self.printLine("\(seconds(event.time)) \(path) raw \(event)") } }
        for notice in panel.start() { Self.printLine(notice.description) }
        if panel.devices.isEmpty {
            Self.printLine(settings.device == .automatic
                ? "touch: no touch screen found in /dev/input; waiting for one to be plugged in"
                : "touch: waiting for \(settings.device)")
        }
        let stop = StopSignal()
        var nextRescan = SystemClock().now()
        while stop.signalName == nil {
            if panel.needsPeriodicRescan, SystemClock().now() >= nextRescan {
                panel.rescan()
                nextRescan = SystemClock().now().advanced(byNanoseconds: 2_000_000_000)
            }
            var fds = panel.pollDescriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let buttonFDs = buttons?.fileDescriptors ?? []
            fds += buttonFDs.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            var timeout: Int32 = 200   // also how quickly Ctrl-C is noticed
            let now = SystemClock().now()
            if let deadline = [panel.nextDeadline, buttons?.nextDeadline(after: now)].compactMap({ $0 }).min() {
                let remaining = deadline.nanoseconds(since: SystemClock().now()) / 1_000_000
                timeout = Int32(max(0, min(Int64(timeout), remaining + 1)))
            }
            let ready = poll(&fds, nfds_t(fds.count), timeout)
            if ready < 0, errno != EINTR { throw CLIError("poll failed: \(String(cString: strerror(errno)))") }
            for entry in fds where entry.revents != 0 {
                if let buttons, buttonFDs.contains(entry.fd) {
                    for event in try buttonEvents({ try buttons.handleReadable(fd: entry.fd) }) {
                        Self.printLine("\(seconds(event.time)) gpio \(event)")
                    }
                    continue
                }
                for event in panel.handleReadable(fd: entry.fd) { Self.printLine("\(seconds(event.time)) \(event.device) \(event)") }
            }
            if let buttons {
                for event in try buttonEvents({ try buttons.tick(now: SystemClock().now()) }) {
                    Self.printLine("\(seconds(event.time)) gpio \(event)")
                }
            }
            // Besides made-up releases, expire hands over what it read from a device first.
            for event in panel.expire(now: SystemClock().now()) {
                let note = event.phase == .release ? " (no release from the device)" : ""
                Self.printLine("\(seconds(event.time)) \(event.device) \(event)\(note)")
            }
        }
    }

    private func buttonEvents(_ read: () throws -> [ButtonEvent]) throws -> [ButtonEvent] {
        do {
            return try read()
        } catch {
            throw CLIError("buttons: \(error)")
        }
    }

    /// Every line this command prints goes through here.
    static func printLine(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}
