import Foundation

/// The answer to `status`: what `kioskcam status` prints, and `--json` passes through.
/// Everything but `state` is optional so the daemon fills what it knows.
public struct StatusReport: Sendable, Equatable, Codable {
    /// The recorder: idle, starting, recording or stopping.
    public var state: RecordingState
    /// "video" or "audio" while recording.
    public var kind: String?
    /// The file being written (library path once finished; the temp path while recording).
    public var currentFile: String?
    public var bytesWritten: Int64?
    public var secondsRecorded: Double?
    /// 1 for the first segment of a recording.
    public var segment: Int?
    public var droppedFrames: Int?
    /// Sound chunks the encoder's queue dropped (it fell behind).
    public var droppedAudioChunks: Int?
    /// Free space on the media library's file system.
    public var freeBytes: Int64?
    /// "ok /dev/video0", "test pattern", "lost since 12:03:04", …
    public var camera: String?
    /// The open camera's frame counters (V4L2 or libcamera).
    public var cameraFrames: CameraFrameCounters?
    /// "ok hw:1,0", "tone", "none", …
    public var microphone: String?
    public var deviceID: String?
    public var uptimeSeconds: Double?
    /// True while the factory default PIN is still set (flagged clearly until changed).
    public var defaultPIN: Bool?
    public var pinFailures: Int?
    /// RMS and peak-hold level per channel, dBFS.
    public var levelsRMSDBFS: [Double]?
    public var levelsPeakDBFS: [Double]?
    /// The last error the recorder reported, if any.
    public var lastError: String?
    /// Damaged recordings salvage could not repair, kept in `<media root>/.quarantine`.
    public var quarantinedFiles: Int?
    public var version: String?
    /// Event clips (absent while `events.mode` is continuous): the mode, events started
    /// today, the last event's id, the newest motion score, whether a clip is being written.
    public var eventsMode: String?
    public var eventsToday: Int?
    public var lastEvent: String?
    public var motionScore: Double?
    public var eventRecording: Bool?
    /// The pre-event ring: bytes held, the seconds they cover, and its byte budget.
    public var preEventBytes: Int?
    public var preEventSeconds: Double?
    public var preEventLimitBytes: Int?
    /// The MQTT connection in one line (nil while `[mqtt]` is off).
    public var mqtt: String?
    /// Offsite copies (absent while `[upload] url` is empty): files and bytes waiting,
    /// files copied since the daemon started, the last failure and the last success.
    public var uploadQueuedFiles: Int?
    public var uploadQueuedBytes: Int64?
    public var uploadedFiles: Int?
    public var uploadLastError: String?
    public var uploadLastSuccess: String?
    /// A `kioskcam broadcast` that reported in (its `broadcast.json`): its state
    /// (starting, live, reconnecting, stopped, error), bytes sent, GOPs dropped, and one line.
    public var broadcastState: String?
    public var broadcastBytes: Int64?
    public var broadcastDroppedGOPs: Int?
    public var broadcast: String?
    /// Whether the 50 MB cap holds for a broadcast the daemon starts ("50 MiB, enforced by
    /// the cgroup …" or "NOT enforced (…); fix: …"), and the `memory.max` the running
    /// broadcast found over itself (nil: none, or none reported).
    public var broadcastCap: String?
    public var broadcastMemoryMax: Int64?
    /// Broadcasts the kernel killed for going over the cap (the capped cgroup's oom_kill).
    public var broadcastOOMKills: Int?
    /// The web app (absent while `[web]` is off): its address, the SHA-256 fingerprint of
    /// its certificate (to compare with a browser's warning), users, and login failures.
    public var webURL: String?
    public var webFingerprint: String?
    public var webUsers: Int?
    public var webLoginFailures: Int?
    public var webLoginsThrottled: Int?
    /// Why the web app is off although enabled (the port taken, an unreadable key …).
    public var webError: String?
    /// The live stream (`[stream] url`; absent while none): its state (stopped,
    /// connecting, live, reconnecting, failed), destination (no password), bytes sent,
    /// reconnects, GOPs dropped, and the last error.
    public var streamState: String?
    public var streamDestination: String?
    public var streamBytes: Int64?
    public var streamReconnects: Int?
    public var streamDroppedGOPs: Int?
    public var streamLastError: String?
    /// The RTSP server (absent while `[rtsp]` is off): its address, the clients set up now,
    /// and why it is off although enabled.
    public var rtspURL: String?
    public var rtspClients: [RTSPClientStatus]?
    public var rtspError: String?
    /// `[overlay]`'s template, when one is drawn.
    public var overlay: String?
    /// The part of the picture `[privacy]` blacks out, in percent, and frames dropped for want of a buffer.
    public var privacyMaskedPercent: Double?
    public var privacyDroppedFrames: Int?
    /// The timelapse (absent while `[timelapse]` is off): the movie being written, its
    /// frames, and why it is not being written.
    public var timelapseFile: String?
    public var timelapseFrames: Int?
    public var timelapseError: String?

    public init(state: RecordingState) { self.state = state }

    enum CodingKeys: String, CodingKey {
        case state, kind, camera, microphone, segment, version
        case currentFile = "current_file"
        case bytesWritten = "bytes_written"
        case secondsRecorded = "seconds_recorded"
        case droppedFrames = "dropped_frames"
        case cameraFrames = "camera_frames"
        case droppedAudioChunks = "dropped_audio_chunks"
        case freeBytes = "free_bytes"
        case deviceID = "device_id"
        case uptimeSeconds = "uptime_seconds"
        case defaultPIN = "default_pin"
        case pinFailures = "pin_failures"
        case levelsRMSDBFS = "levels_rms_dbfs"
        case levelsPeakDBFS = "levels_peak_dbfs"
        case lastError = "last_error"
        case quarantinedFiles = "quarantined_files"
        case eventsMode = "events_mode"
        case eventsToday = "events_today"
        case lastEvent = "last_event"
        case motionScore = "motion_score"
        case eventRecording = "event_recording"
        case preEventBytes = "pre_event_bytes"
        case preEventSeconds = "pre_event_seconds"
        case preEventLimitBytes = "pre_event_limit_bytes"
        case mqtt
        case uploadQueuedFiles = "upload_queued_files"
        case uploadQueuedBytes = "upload_queued_bytes"
        case uploadedFiles = "uploaded_files"
        case uploadLastError = "upload_last_error"
        case uploadLastSuccess = "upload_last_success"
        case broadcastState = "broadcast_state"
        case broadcastBytes = "broadcast_bytes"
        case broadcastDroppedGOPs = "broadcast_dropped_gops"
        case broadcast
        case broadcastCap = "broadcast_cap"
        case broadcastMemoryMax = "broadcast_memory_max"
        case broadcastOOMKills = "broadcast_oom_kills"
        case webURL = "web_url"
        case webFingerprint = "web_fingerprint_sha256"
        case webUsers = "web_users"
        case webLoginFailures = "web_login_failures"
        case webLoginsThrottled = "web_logins_throttled"
        case webError = "web_error"
        case streamState = "stream_state"
        case streamDestination = "stream_destination"
        case streamBytes = "stream_bytes"
        case streamReconnects = "stream_reconnects"
        case streamDroppedGOPs = "stream_dropped_gops"
        case streamLastError = "stream_last_error"
        case rtspURL = "rtsp_url"
        case rtspClients = "rtsp_clients"
        case rtspError = "rtsp_error"
        case overlay
        case privacyMaskedPercent = "privacy_masked_percent"
        case privacyDroppedFrames = "privacy_dropped_frames"
        case timelapseFile = "timelapse_file"
        case timelapseFrames = "timelapse_frames"
        case timelapseError = "timelapse_error"
    }

    /// Human-readable lines for `kioskcam status`.
    public var lines: [String] {
        var lines: [String] = []
        var recording = "state:        \(state.rawValue)"
        if let kind, state != .idle { recording += " (\(kind))" }
        lines.append(recording)
        if let currentFile { lines.append("file:         \(currentFile)") }
        if state == .recording || state == .stopping {
            var progress: [String] = []
            if let secondsRecorded { progress.append(String(format: "%.1f s", secondsRecorded)) }
            if let bytesWritten { progress.append(ByteCountText.text(bytesWritten)) }
            if let segment { progress.append("segment \(segment)") }
            if !progress.isEmpty { lines.append("progress:     " + progress.joined(separator: ", ")) }
        }
        if droppedFrames != nil || (droppedAudioChunks ?? 0) > 0 {
            let sound = (droppedAudioChunks ?? 0) > 0 ? ", \(droppedAudioChunks ?? 0) sound chunks" : ""
            lines.append("dropped:      \(droppedFrames ?? 0) frames" + sound)
        }
        if let freeBytes { lines.append("free space:   \(ByteCountText.text(freeBytes))") }
        if let camera { lines.append("camera:       \(camera)") }
        if let cameraFrames { lines.append("frames:       \(cameraFrames.line)") }
        if let microphone { lines.append("microphone:   \(microphone)") }
        if let levelsRMSDBFS, !levelsRMSDBFS.isEmpty {
            let peaks = levelsPeakDBFS ?? []
            let channels = levelsRMSDBFS.enumerated().map { index, rms in
                index < peaks.count ? String(format: "%.1f (peak %.1f)", rms, peaks[index]) : String(format: "%.1f", rms)
            }
            lines.append("level dBFS:   " + channels.joined(separator: ", "))
        }
        if defaultPIN == true { lines.append("PIN:          WARNING: the factory default PIN is set; change it with `kioskcam pin set`") }
        if let pinFailures { lines.append("PIN failures: \(pinFailures)") }
        if let lastError { lines.append("last error:   \(lastError)") }
        if let quarantinedFiles, quarantinedFiles > 0 {
            lines.append("quarantine:   \(quarantinedFiles) damaged recording(s) salvage could not repair, in .quarantine under the media root: look at them, then delete them")
        }
        if let eventsMode {
            var events = "events:       \(eventsMode) mode, \(eventsToday ?? 0) today"
            if eventRecording == true { events += ", a clip is being written" }
            if let lastEvent { events += "; last \(lastEvent)" }
            if let motionScore { events += String(format: "; motion %.1f %%", motionScore) }
            lines.append(events)
            if let preEventBytes, let preEventSeconds, let preEventLimitBytes {
                lines.append("pre-event:    \(String(format: "%.1f", preEventSeconds)) s in \(ByteCountText.text(Int64(preEventBytes))) of \(ByteCountText.text(Int64(preEventLimitBytes)))")
            }
        }
        if let mqtt { lines.append("mqtt:         \(mqtt)") }
        if let uploadQueuedFiles {
            var upload = "upload:       \(uploadQueuedFiles) waiting (\(ByteCountText.text(uploadQueuedBytes ?? 0))), \(uploadedFiles ?? 0) copied since start"
            if let uploadLastSuccess { upload += "; last \(uploadLastSuccess)" }
            lines.append(upload)
            if let uploadLastError { lines.append("upload error: \(uploadLastError)") }
        }
        if let broadcast { lines.append("broadcast:    \(broadcast)") }
        if let broadcastCap { lines.append("broadcast cap: \(broadcastCap)") }
        if let webURL {
            var web = "web:          \(webURL)"
            if webUsers == 0 { web += " (no user yet: `kioskcam web-user set NAME --role admin`)" }
            if let failures = webLoginFailures, failures > 0 {
                web += "; \(failures) wrong password(s), \(webLoginsThrottled ?? 0) throttled"
            }
            lines.append(web)
            if let webFingerprint { lines.append("web cert:     SHA-256 \(webFingerprint)") }
        }
        if let webError { lines.append("web error:    \(webError)") }
        if let streamState, let streamDestination {
            var line = "stream:       \(streamState) to \(streamDestination), \(ByteCountText.text(streamBytes ?? 0)) sent"
            if let reconnects = streamReconnects, reconnects > 0 { line += ", \(reconnects) reconnect\(reconnects == 1 ? "" : "s")" }
            if let dropped = streamDroppedGOPs, dropped > 0 { line += ", \(dropped) GOP(s) dropped" }
            lines.append(line)
            if let streamLastError { lines.append("stream error: \(streamLastError)") }
        }
        if let rtspURL {
            let clients = rtspClients ?? []
            lines.append("rtsp:         \(rtspURL) (\(clients.count) client\(clients.count == 1 ? "" : "s"))")
            for client in clients {
                lines.append("  rtsp client: \(client.address) \(client.user.isEmpty ? "anonymous" : client.user) \(client.path) over \(client.transport) since \(client.since), \(ByteCountText.text(client.bytes)) sent, \(client.droppedGOPs) GOP(s) dropped")
            }
        }
        if let rtspError { lines.append("rtsp error:   \(rtspError)") }
        if let overlay { lines.append("overlay:      \"\(overlay)\"") }
        if let privacyMaskedPercent {
            lines.append("privacy:      \(String(format: "%.1f", privacyMaskedPercent)) % of the picture masked"
                         + ((privacyDroppedFrames ?? 0) > 0 ? ", \(privacyDroppedFrames ?? 0) frame(s) dropped" : ""))
        }
        if let timelapseFile {
            lines.append("timelapse:    \(timelapseFile), \(timelapseFrames ?? 0) frame\(timelapseFrames == 1 ? "" : "s")")
        }
        if let timelapseError { lines.append("timelapse:    \(timelapseError)") }
        if let deviceID { lines.append("device id:    \(deviceID)") }
        if let uptimeSeconds { lines.append("uptime:       \(Self.uptimeText(uptimeSeconds))") }
        if let version { lines.append("version:      \(version)") }
        return lines
    }

    /// The socket's number, so clamped before it becomes an `Int` (1e300 would trap).
    static func uptimeText(_ seconds: Double) -> String {
        let total = seconds.isFinite ? Int(min(max(0, seconds), 1e15)) : 0
        let (days, hours, minutes, secs) = (total / 86_400, total / 3600 % 24, total / 60 % 60, total % 60)
        let clock = String(format: "%02d:%02d:%02d", hours, minutes, secs)
        return days > 0 ? "\(days)d " + clock : clock
    }
}

/// Sent by name on the control socket (`"state":"recording"`).
extension RecordingState: Codable {}

/// One RTSP client as status shows it.
public struct RTSPClientStatus: Codable, Sendable, Equatable {
    public var address: String
    public var user: String
    /// "TCP" (interleaved) or "UDP".
    public var transport: String
    public var path: String
    /// When it connected, ISO 8601.
    public var since: String
    public var bytes: Int64
    public var droppedGOPs: Int

    public init(address: String, user: String, transport: String, path: String, since: String, bytes: Int64, droppedGOPs: Int) {
        self.address = address
        self.user = user
        self.transport = transport
        self.path = path
        self.since = since
        self.bytes = bytes
        self.droppedGOPs = droppedGOPs
    }

    enum CodingKeys: String, CodingKey {
        case address, user, transport, path, since, bytes
        case droppedGOPs = "dropped_gops"
    }
}
