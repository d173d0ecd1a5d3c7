import Foundation

/// What a running `kioskcam broadcast` reports back to the daemon (the seed's extension
/// talking to its app through shared messages): a small JSON file it rewrites about once
/// a second, `<state directory>/broadcast.json`, which `kioskcam status`, `watch` and the
/// screen read. A file rather than a socket, so that the broadcast needs no daemon and the
/// daemon never waits on the broadcast.
public struct BroadcastStatus: Codable, Sendable, Equatable {
    public enum State: String, Codable, Sendable, CaseIterable {
        case starting, live, reconnecting, stopped, error
    }

    /// One destination: the library file or a live URL (password hidden).
    public struct Destination: Codable, Sendable, Equatable {
        public var name: String
        public var state: State
        public var bytes: Int64
        public var droppedGOPs: Int
        public var lastError: String?

        public init(name: String, state: State, bytes: Int64 = 0, droppedGOPs: Int = 0, lastError: String? = nil) {
            self.name = name
            self.state = state
            self.bytes = bytes
            self.droppedGOPs = droppedGOPs
            self.lastError = lastError
        }
    }

    public var state: State
    /// "screen" or "camera".
    public var source: String
    public var pid: Int32
    /// Seconds since 1970 when the broadcast started, and when this was written.
    public var startedAt: Double
    public var updatedAt: Double
    public var width: Int
    public var height: Int
    public var framesPerSecond: Int
    public var videoBitrate: Int
    /// Frames the encoder could not keep up with, and screen frames skipped.
    public var droppedFrames: Int
    public var destinations: [Destination]
    public var error: String?
    /// The cgroup the broadcast runs in and the memory limit that holds there (the smallest
    /// `memory.max` up to the root); nil bytes: it runs uncapped.
    public var cgroup: String?
    public var memoryMaxBytes: Int64?

    public init(state: State, source: String, pid: Int32, startedAt: Double, updatedAt: Double, width: Int, height: Int,
                framesPerSecond: Int, videoBitrate: Int, droppedFrames: Int = 0, destinations: [Destination] = [],
                error: String? = nil, cgroup: String? = nil, memoryMaxBytes: Int64? = nil) {
        self.state = state
        self.source = source
        self.pid = pid
        self.startedAt = startedAt
        self.updatedAt = updatedAt
        self.width = width
        self.height = height
        self.framesPerSecond = framesPerSecond
        self.videoBitrate = videoBitrate
        self.droppedFrames = droppedFrames
        self.destinations = destinations
        self.error = error
        self.cgroup = cgroup
        self.memoryMaxBytes = memoryMaxBytes
    }

    /// Bytes sent or written to every destination.
    public var bytes: Int64 { destinations.reduce(0) { $0 + $1.bytes } }
    /// Whole GOPs dropped for slow or absent networks.
    public var droppedGOPs: Int { destinations.reduce(0) { $0 + $1.droppedGOPs } }

    /// The broadcast's one state from its destinations': `error` for a fatal error,
    /// `reconnecting` while any destination is, `live` once every one has been live,
    /// `starting` before.
    public static func overall(_ destinations: [State], failed: Bool, finished: Bool) -> State {
        if failed { return .error }
        if finished { return .stopped }
        if destinations.contains(.reconnecting) || destinations.contains(.error) { return .reconnecting }
        if !destinations.isEmpty, destinations.allSatisfy({ $0 == .live }) { return .live }
        return .starting
    }

    /// A status file not rewritten for this long belongs to a broadcast that died (killed
    /// over its memory limit, say) and reads as stopped.
    public static let staleAfterSeconds = 5.0

    /// The state as the daemon should show it at `now`: a stale file of a broadcast that
    /// did not say it stopped reads as `error`.
    public func effectiveState(now: Double) -> State {
        guard state != .stopped, state != .error else { return state }
        return now - updatedAt > Self.staleAfterSeconds ? .error : state
    }

    /// "● LIVE screen 800x480 10 fps → 2: 1.4 MB, 0 GOPs dropped" — the screen's and
    /// `status`'s line.
    public func line(now: Double) -> String {
        let state = effectiveState(now: now)
        let label: String
        switch state {
        case .live: label = "● LIVE"
        case .starting: label = "broadcast starting"
        case .reconnecting: label = "broadcast reconnecting"
        case .stopped: label = "broadcast stopped"
        case .error: label = "broadcast error"
        }
        var text = "\(label) \(source) \(width)x\(height) \(framesPerSecond) fps → \(destinations.count): "
            + String(format: "%.1f MB", Double(bytes) / 1_000_000) + ", \(droppedGOPs) GOPs dropped"
        if state == .error {
            text += ": " + (error ?? (now - updatedAt > Self.staleAfterSeconds ? "the broadcast process stopped reporting" : "failed"))
        }
        return text
    }

    /// The screen's status-line part: "● LIVE 1.4 MB", "Broadcast reconnecting", …; nil
    /// once stopped.
    public func shortLabel(now: Double) -> String? {
        switch effectiveState(now: now) {
        case .live: "● LIVE " + String(format: "%.1f MB", Double(bytes) / 1_000_000)
        case .starting: "Broadcast starting"
        case .reconnecting: "Broadcast reconnecting"
        case .error: "Broadcast failed"
        case .stopped: nil
        }
    }

    public static let fileName = "broadcast.json"

    /// Decodes a status file; nil when it is not one (half-written files never happen:
    /// the writer renames into place).
    public static func decode(_ data: Data) -> BroadcastStatus? {
        try? JSONDecoder().decode(BroadcastStatus.self, from: data)
    }

    public func encoded() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(self)) ?? Data()
    }
}
