import Glibc
import KioskCore

/// Every touch screen in use, with its decoder and transform: the one owner of their
/// descriptors. The daemon's poll loop polls `pollDescriptors`, calls `handleReadable(fd:)`
/// when one is readable, and wakes up at `nextDeadline` to call `expire(now:)`.
///
/// Devices come and go: with `touch.device = "auto"` every touch screen found (now or
/// later) is used; with a path, that node whenever it exists. A device that goes away
/// is closed and its contacts released — never an error.
///
/// Use it from one thread (the poll loop), which makes it: it is not `Sendable`.
public final class TouchPanel {
    /// One open touch screen.
    public struct DeviceInfo: Sendable, Equatable {
        public var path: String
        public var name: String
        public var touchProtocol: TouchProtocol
        /// Why it was chosen (protocol, slots, direct input, ranges).
        public var explanation: String
        public var transform: TouchTransform
    }

    /// What happened to the set of devices (for the log and `kioskcam input-monitor`).
    public enum Notice: Sendable, Equatable, CustomStringConvertible {
        case opened(DeviceInfo)
        case removed(path: String, reason: String)
        case rejected(path: String, reason: String)
        case failed(InputError.Code, message: String)
        case resynced(path: String)
        /// The device was found to end touches by silence (or, after all, by lift events).
        case liftReporting(path: String, LiftReporting, silenceMilliseconds: Int, reportIntervalMilliseconds: Int?)

        public var description: String {
            switch self {
            case .opened(let info): "touch: using \(info.path) \"\(info.name)\": \(info.explanation)"
            case .removed(let path, let reason): "touch: \(path) removed (\(reason))"
            case .rejected(let path, let reason): "touch: not using \(path) \(reason)"
            case .failed(_, let message): "touch: \(message)"
            case .resynced(let path): "touch: \(path) lost events (SYN_DROPPED); resynchronised"
            case .liftReporting(let path, .silence, let silence, let interval):
                "touch: \(path) never reports a lift (a contact went silent and came back elsewhere): a contact whose reports stop for \(silence) ms"
                    + (interval.map { " (it reports every \($0) ms)" } ?? "") + " has lifted"
            case .liftReporting(let path, _, _, _):
                "touch: \(path) reports lifts after all: a finger resting without reports stays down"
            }
        }
    }

    final class OpenDevice {
        let device: EvdevDevice
        var decoder: TouchDecoder
        let info: DeviceInfo

        init(device: EvdevDevice, decoder: TouchDecoder, info: DeviceInfo) {
            self.device = device
            self.decoder = decoder
            self.info = info
        }
    }

    public let settings: Configuration.Touch
    public let screen: ScreenSize
    public let screenRotation: ScreenRotation
    public let directory: String
    /// Told about devices opened, removed, rejected and resynced after `start()`
    /// (whose own notices are its return value). Descriptions begin with "touch: ".
    public var onNotice: ((Notice) -> Void)?
    /// Sees every raw event before decoding (`kioskcam input-monitor --raw`).
    public var onRawEvent: ((String, RawInputEvent) -> Void)?
    /// Times events were lost and resynchronised, over all devices.
    public private(set) var resyncCount = 0

    private var open: [CInt: OpenDevice] = [:]
    private var watcher: InputHotplugWatcher?
    /// Rejected nodes are not reopened on every hotplug event, only when inotify names them.
    private var rejectedPaths: Set<String> = []
    private var watchHotplug = true
    private var watcherFailed = false

    /// Creates the panel; call `start()` to open devices.
    /// - Parameters:
    ///   - settings: The `[touch]` section.
    ///   - screen: The logical screen size (after rotation).
    ///   - screenRotation: The screen's rotation; the touch follows it unless `touch.rotation` is set.
    ///   - directory: Where event nodes live (tests may use another).
    public init(settings: Configuration.Touch, screen: ScreenSize, screenRotation: ScreenRotation = .none,
                directory: String = "/dev/input") {
        self.settings = settings
        self.screen = screen
        self.screenRotation = screenRotation
        self.directory = directory
    }

    deinit { close() }

    /// Starts watching for devices and opens those present. With `touch.device = "none"` nothing is opened.
    /// - Returns: What was opened, rejected or failed now. These are not told to
    ///   `onNotice`, which hears about everything after `start()` (hotplug, removals, resyncs).
    @discardableResult
    public func start(watchHotplug: Bool = true) -> [Notice] {
        guard settings.device != .none else { return [] }
        self.watchHotplug = watchHotplug
        return rescan(named: nil, announce: false)
    }

    /// Whether the caller must call `rescan()` every few seconds because inotify could not
    /// watch the directory (it may not exist yet: `/dev/input` appears with the first device).
    public var needsPeriodicRescan: Bool { settings.device != .none && watcher == nil }

    /// Starts inotify on the directory if it is not running; says once when it cannot.
    private func startWatcher() -> Notice? {
        guard watchHotplug, watcher == nil else { return nil }
        do {
            watcher = try InputHotplugWatcher(directory: directory)
            watcherFailed = false
            return nil
        } catch {
            guard !watcherFailed else { return nil }
            watcherFailed = true
            return .failed(error.code, message: "cannot watch \(directory) for devices coming and going: \(error.message); looking again every few seconds")
        }
    }

    /// Closes every device and the hotplug watcher; safe to call twice.
    public func close() {
        for entry in open.values { entry.device.close() }
        open = [:]
        watcher?.close()
        watcher = nil
    }

    /// The open touch screens.
    public var devices: [DeviceInfo] { open.values.map(\.info).sorted { $0.path < $1.path } }

    /// The hotplug descriptor, when inotify works.
    public var hotplugDescriptor: CInt? { watcher?.fileDescriptor }

    /// Every descriptor to poll for POLLIN: the devices and the hotplug watcher.
    public var pollDescriptors: [CInt] { open.keys.sorted() + (hotplugDescriptor.map { [$0] } ?? []) }

    /// Reads a readable descriptor: device input becomes touch events; the hotplug
    /// descriptor opens and closes devices. A device that has gone is closed and its
    /// contacts are released (the releases are returned).
    public func handleReadable(fd: CInt) -> [TouchEvent] {
        if fd == hotplugDescriptor { return handleHotplug() }
        guard let entry = open[fd] else { return [] }
        let items: [EvdevDevice.ReadItem]
        do {
            items = try entry.device.readEvents()
        } catch {
            return remove(fd: fd, reason: error.code == .unplugged ? "unplugged" : error.description)
        }
        var events: [TouchEvent] = []
        let liftReporting = entry.decoder.liftReporting
        defer { announceLiftReporting(entry, was: liftReporting) }
        for item in items {
            switch item {
            case .event(let raw):
                onRawEvent?(entry.info.path, raw)
                events += entry.decoder.feed(raw).map { entry.info.transform.event($0, device: entry.info.path) }
            case .resynced(let state, let time):
                resyncCount += 1
                notify(.resynced(path: entry.info.path))
                events += entry.decoder.resync(state: state, time: time).map { entry.info.transform.event($0, device: entry.info.path) }
            }
        }
        return events
    }

    /// Says when a device turned out to end touches by silence, or to report lifts after all.
    private func announceLiftReporting(_ entry: OpenDevice, was before: LiftReporting) {
        let now = entry.decoder.liftReporting
        guard now != before, now == .silence || before == .silence else { return }
        notify(.liftReporting(path: entry.info.path, now, silenceMilliseconds: Int(entry.decoder.silenceNanoseconds / 1_000_000),
                              reportIntervalMilliseconds: entry.decoder.reportIntervalNanoseconds.map { Int($0 / 1_000_000) }))
    }

    /// Drains the hotplug watcher, closes devices whose node is gone and opens new ones.
    public func handleHotplug() -> [TouchEvent] {
        let names = watcher?.drain() ?? []
        // Nodes named in a notification may have changed (new device, new permissions).
        rejectedPaths.subtract(names.map { directory + "/" + $0 })
        var events: [TouchEvent] = []
        // By existence, not by listing: touch.device may be a /dev/input/by-path link.
        for (fd, entry) in open where !FileManagerLite.exists(entry.info.path) {
            events += remove(fd: fd, reason: "its node disappeared")
        }
        rescan(named: names, announce: true)
        return events
    }

    /// Looks for devices again; without inotify (`needsPeriodicRescan`), call it every few seconds.
    @discardableResult
    public func rescan() -> [Notice] { rescan(named: nil, announce: true) }

    /// When the next contact is due for a release the device did not send (nil: none is down).
    public var nextDeadline: MonotonicInstant? { open.values.compactMap(\.decoder.nextDeadline).min() }

    /// Releases contacts whose reports stopped too long ago: the stale rule, and on a panel
    /// that never reports lifts the silence rule (`TouchDecoder`).
    ///
    /// A device with a release due is read first, so a silence is judged on everything the
    /// kernel has: a loop that was busy (drawing) must not release a finger whose reports
    /// are waiting unread. What that read decodes comes first in the result.
    public func expire(now: MonotonicInstant) -> [TouchEvent] {
        var events: [TouchEvent] = []
        for (fd, entry) in open.sorted(by: { $0.value.info.path < $1.value.info.path }) {
            guard let due = entry.decoder.nextDeadline, due <= now else { continue }
            events += handleReadable(fd: fd)
            guard open[fd] === entry else { continue }   // it went away while being read
            events += entry.decoder.expire(now: now).map { entry.info.transform.event($0, device: entry.info.path) }
        }
        return events
    }

    // MARK: Opening and closing

    @discardableResult
    private func rescan(named: Set<String>?, announce: Bool) -> [Notice] {
        var notices: [Notice] = []
        if let notice = startWatcher() { notices.append(notice) }
        let inUse = Set(open.values.map(\.info.path))
        let paths: [String]
        switch settings.device {
        case .none: return []
        case .path(let path): paths = inUse.contains(path) ? [] : [path]
        case .automatic: paths = TouchscreenDiscovery.eventNodes(in: directory).filter { !inUse.contains($0) && !rejectedPaths.contains($0) }
        }
        for path in paths {
            if case .path = settings.device, named != nil, !FileManagerLite.exists(path) { continue }
            if let notice = openDevice(path: path) {
                notices.append(notice)
            }
        }
        if announce { notices.forEach(notify) }
        return notices
    }

    private func openDevice(path: String) -> Notice? {
        let device: EvdevDevice
        do {
            device = try EvdevDevice(path: path)
        } catch {
            // A node that vanished between listing and opening is no news.
            if error.code == .noSuchDevice || error.code == .unplugged, settings.device == .automatic { return nil }
            if settings.device == .automatic { rejectedPaths.insert(path) }
            return .failed(error.code, message: error.description)
        }
        let caps = device.capabilities
        let verdict = TouchscreenVerdict(caps)
        guard verdict.score != nil, let ranges = caps.positionRanges,
              let decoder = TouchDecoder(capabilities: caps, staleAfterSeconds: settings.releaseAfterSeconds) else {
            device.close()
            rejectedPaths.insert(path)
            return .rejected(path: path, reason: "\"\(caps.name)\": \(verdict.explanation(caps))")
        }
        let transform = TouchTransform(settings: settings, xRange: ranges.x, yRange: ranges.y, screen: screen,
                                       screenRotation: screenRotation)
        let info = DeviceInfo(path: path, name: caps.name, touchProtocol: decoder.touchProtocol,
                              explanation: verdict.explanation(caps) + (device.monotonicTimes ? "" : "; event times are not monotonic"),
                              transform: transform)
        let entry = OpenDevice(device: device, decoder: decoder, info: info)
        open[device.fileDescriptor] = entry
        // Contacts already down when we opened it (libevdev read the state at open).
        entry.decoder.adopt(state: device.snapshot(), time: now())
        return .opened(info)
    }

    private func remove(fd: CInt, reason: String) -> [TouchEvent] {
        guard let entry = open.removeValue(forKey: fd) else { return [] }
        let releases = entry.decoder.releaseAll(at: now()).map { entry.info.transform.event($0, device: entry.info.path) }
        entry.device.close()
        notify(.removed(path: entry.info.path, reason: reason))
        return releases
    }

    private func notify(_ notice: Notice) { onNotice?(notice) }

    private func now() -> MonotonicInstant {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return MonotonicInstant(nanoseconds: Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec))
    }
}

enum FileManagerLite {
    static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }
}
