import Foundation

/// The numbers the daemon exports for Prometheus (node_exporter's textfile collector),
/// taken at one instant. Counters are totals since the daemon started.
public struct MetricsSnapshot: Sendable, Equatable {
    public var state: RecordingState = .idle
    public var bytesWrittenTotal: Int64 = 0
    public var segmentsTotal: Int = 0
    public var recordingsTotal: Int = 0
    public var droppedFramesTotal: Int = 0
    public var droppedAudioChunksTotal: Int = 0
    public var freeBytes: Int64?
    public var totalBytes: Int64?
    public var cameraUp = false
    /// The open camera's frame counters; nil for the test pattern or no camera.
    public var cameraFrames: CameraFrameCounters?
    public var microphoneUp = false
    public var audioXrunsTotal: Int = 0
    public var pinFailuresTotal: Int = 0
    public var defaultPIN = false
    public var controlClients: Int = 0
    public var controlEventsDroppedTotal: Int = 0
    /// Damaged recordings salvage could not repair, kept in `<root>/.quarantine`.
    public var quarantinedFiles: Int = 0
    /// Event clips (nil while events are off): started today, the newest motion score.
    public var eventsToday: Int?
    public var motionScorePercent: Double?
    public var eventRecording: Bool?
    /// Nil while `[mqtt]` is off.
    public var mqttConnected: Bool?
    public var mqttQueuedMessages = 0
    public var mqttDroppedMessagesTotal = 0
    public var mqttReconnectsTotal = 0
    public var mqttCommandsIgnoredTotal = 0
    /// Offsite copies (nil while uploads are off).
    public var upload: UploadFigures?
    /// The RTSP server (nil while it is off): clients playing, GOPs they lost, clients refused.
    public var rtsp: RTSPFigures?
    /// The live stream (`[stream] url`; nil while none): live or not, bytes, reconnects, drops.
    public var stream: StreamFigures?
    public var uptimeSeconds: Double = 0
    public var deviceID: String = ""
    public var version: String = ""

    public init() {}
}

/// The live stream's figures, for metrics.
public struct StreamFigures: Sendable, Equatable {
    public var live: Bool
    public var bytesSent: Int64
    public var reconnects: Int
    public var droppedGOPs: Int

    public init(live: Bool, bytesSent: Int64, reconnects: Int, droppedGOPs: Int) {
        self.live = live
        self.bytesSent = bytesSent
        self.reconnects = reconnects
        self.droppedGOPs = droppedGOPs
    }
}

/// The RTSP server's figures, for metrics.
public struct RTSPFigures: Sendable, Equatable {
    public var clients: Int
    public var droppedGOPs: Int
    public var refused: Int

    public init(clients: Int, droppedGOPs: Int, refused: Int) {
        self.clients = clients
        self.droppedGOPs = droppedGOPs
        self.refused = refused
    }
}

/// The uploader's figures, for status and metrics.
public struct UploadFigures: Sendable, Equatable {
    public var queuedFiles = 0
    public var queuedBytes: Int64 = 0
    public var uploadedFiles = 0
    public var uploadedBytes: Int64 = 0
    public var failures = 0
    /// Queued files that were gone when their turn came (the disk guard, or a person).
    public var vanishedFiles = 0
    /// The last failure, for a person; nil after a success.
    public var lastError: String?
    /// The last file copied and when ("video/20261122/101455.mp4 at 2026-11-22 10:15:02").
    public var lastSuccess: String?
    /// The file being sent now and the bytes sent of it.
    public var current: String?
    public var currentBytesSent: Int64 = 0

    public init() {}
}

/// Formats a `MetricsSnapshot` in the Prometheus text exposition format (version 0.0.4),
/// as node_exporter's textfile collector reads it: `# HELP` and `# TYPE` before each
/// metric, no timestamps (the collector rejects them; it exports the file's mtime itself).
public enum MetricsFormatter {
    public static func text(_ snapshot: MetricsSnapshot) -> String {
        var out = ""
        func metric(_ name: String, _ type: String, _ help: String, _ samples: [(labels: String, value: String)]) {
            out += "# HELP kioskcam_\(name) \(escapeHelp(help))\n# TYPE kioskcam_\(name) \(type)\n"
            for sample in samples { out += "kioskcam_\(name)\(sample.labels) \(sample.value)\n" }
        }
        func one(_ name: String, _ type: String, _ help: String, _ value: String) { metric(name, type, help, [("", value)]) }

        metric("info", "gauge", "Device identity and version; the value is always 1.",
               [("{device_id=\"\(escapeLabel(snapshot.deviceID))\",version=\"\(escapeLabel(snapshot.version))\"}", "1")])
        one("recording", "gauge", "1 while a recording is being written, else 0.", snapshot.state == .recording ? "1" : "0")
        metric("recorder_state", "gauge", "The recorder's state: 1 for the current one.",
               RecordingState.allCases.map { ("{state=\"\($0.rawValue)\"}", $0 == snapshot.state ? "1" : "0") })
        one("bytes_written_total", "counter", "Bytes written into recordings since the daemon started.", String(snapshot.bytesWrittenTotal))
        one("segments_total", "counter", "Recording segments (files) finished since the daemon started.", String(snapshot.segmentsTotal))
        one("recordings_total", "counter", "Recordings started since the daemon started.", String(snapshot.recordingsTotal))
        one("dropped_frames_total", "counter", "Camera frames dropped because the encoder fell behind.", String(snapshot.droppedFramesTotal))
        one("dropped_audio_chunks_total", "counter", "Sound chunks dropped because the encoder fell behind.", String(snapshot.droppedAudioChunksTotal))
        if let free = snapshot.freeBytes {
            one("free_bytes", "gauge", "Free bytes on the media library's file system.", String(free))
        }
        if let total = snapshot.totalBytes {
            one("filesystem_size_bytes", "gauge", "Size of the media library's file system in bytes.", String(total))
        }
        one("camera_up", "gauge", "1 when the camera delivers frames, else 0.", snapshot.cameraUp ? "1" : "0")
        if let frames = snapshot.cameraFrames {
            metric("camera_frames_total", "counter",
                   "Camera frames since the camera was opened, by outcome: delivered (of them leased in the camera's buffer or copied), paced out, dropped for want of a buffer, corrupt.",
                   frames.samples.map { ("{outcome=\"\($0.outcome)\"}", String($0.count)) })
        }
        one("microphone_up", "gauge", "1 when the microphone delivers sound, else 0.", snapshot.microphoneUp ? "1" : "0")
        one("audio_xruns_total", "counter", "ALSA capture overruns recovered from.", String(snapshot.audioXrunsTotal))
        one("pin_failures_total", "counter", "Wrong PINs entered since the daemon started.", String(snapshot.pinFailuresTotal))
        one("default_pin", "gauge", "1 while the factory default PIN is set, else 0.", snapshot.defaultPIN ? "1" : "0")
        one("control_clients", "gauge", "Clients connected to the control socket.", String(snapshot.controlClients))
        one("control_events_dropped_total", "counter", "Events not delivered to slow control-socket subscribers.", String(snapshot.controlEventsDroppedTotal))
        one("quarantined_files", "gauge", "Damaged recordings salvage could not repair, kept in the media root's .quarantine folder.", String(snapshot.quarantinedFiles))
        if let eventsToday = snapshot.eventsToday {
            one("events_today", "gauge", "Event clips started today (local date) since the daemon started.", String(eventsToday))
        }
        if let score = snapshot.motionScorePercent {
            one("motion_score_percent", "gauge", "The largest changed area in the newest luma frame, percent of the watched picture.", number(score))
        }
        if let recording = snapshot.eventRecording {
            one("event_recording", "gauge", "1 while an event clip is being written, else 0.", recording ? "1" : "0")
        }
        if let connected = snapshot.mqttConnected {
            one("mqtt_connected", "gauge", "1 while connected to the MQTT broker, else 0.", connected ? "1" : "0")
            one("mqtt_queued_messages", "gauge", "MQTT messages waiting for the broker.", String(snapshot.mqttQueuedMessages))
            one("mqtt_dropped_messages_total", "counter", "MQTT messages dropped (the oldest) because the queue was full while the broker was away.", String(snapshot.mqttDroppedMessagesTotal))
            one("mqtt_reconnects_total", "counter", "Connections to the MQTT broker made again after a loss.", String(snapshot.mqttReconnectsTotal))
            one("mqtt_commands_ignored_total", "counter", "MQTT command messages ignored as unknown or malformed.", String(snapshot.mqttCommandsIgnoredTotal))
        }
        if let upload = snapshot.upload {
            one("upload_queue_files", "gauge", "Library files waiting for their offsite copy.", String(upload.queuedFiles))
            one("upload_queue_bytes", "gauge", "Bytes waiting for their offsite copy.", String(upload.queuedBytes))
            one("uploaded_files_total", "counter", "Files copied offsite and checked since the daemon started.", String(upload.uploadedFiles))
            one("uploaded_bytes_total", "counter", "Bytes copied offsite and checked since the daemon started.", String(upload.uploadedBytes))
            one("upload_failures_total", "counter", "Failed upload attempts since the daemon started.", String(upload.failures))
            one("upload_vanished_files_total", "counter", "Queued files that were gone before their upload (the disk guard deleted them to keep the disk from filling, or a person did).", String(upload.vanishedFiles))
        }
        if let stream = snapshot.stream {
            one("stream_up", "gauge", "1 while the live stream ([stream] url) is sending, else 0.", stream.live ? "1" : "0")
            one("stream_bytes_total", "counter", "Bytes the live stream sent since the daemon started (this connection).", String(stream.bytesSent))
            one("stream_reconnects_total", "counter", "Times the live stream connected again after a loss.", String(stream.reconnects))
            one("stream_dropped_gops_total", "counter", "GOPs the live stream dropped because the network fell behind.", String(stream.droppedGOPs))
        }
        if let rtsp = snapshot.rtsp {
            one("rtsp_clients", "gauge", "RTSP clients set up to play now.", String(rtsp.clients))
            one("rtsp_dropped_gops_total", "counter", "GOPs RTSP clients lost because they fell behind (each goes on at the next keyframe).", String(rtsp.droppedGOPs))
            one("rtsp_clients_refused_total", "counter", "RTSP clients refused because max_clients played already.", String(rtsp.refused))
        }
        one("uptime_seconds", "gauge", "Seconds since the daemon started.", number(snapshot.uptimeSeconds))
        return out
    }

    /// Label values escape backslash, double quote and newline.
    static func escapeLabel(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    /// Help text escapes backslash and newline.
    static func escapeHelp(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n")
    }

    /// Prometheus spells the special values `NaN`, `+Inf`, `-Inf`.
    static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        return value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
