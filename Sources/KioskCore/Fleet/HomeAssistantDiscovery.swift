import Foundation

/// The board's state as one retained JSON message on `<base>/state`, and the Home
/// Assistant entities that read it.
public struct FleetState: Sendable, Equatable {
    public var recordingState: RecordingState = .idle
    /// "video" or "audio" while recording.
    public var kind: String?
    public var file: String?
    public var freeBytes: Int64?
    public var camera: String?
    public var microphone: String?
    public var defaultPIN: Bool?
    public var uptimeSeconds: Double = 0
    public var droppedFrames: Int = 0
    /// What the motion detector sees now (nil when event clips are off): not whether a
    /// clip records — a manual event is no motion.
    public var motion: Bool?
    /// An event clip is being written (nil when event clips are off).
    public var eventRecording: Bool?
    public var lastEvent: String?
    /// When the last event started, wall-clock seconds since 1970 (kept across restarts:
    /// read back from the event log).
    public var lastEventStart: Double?
    public var eventsToday: Int?
    public var streaming: Bool?
    /// The camera delivers pictures (nil: no camera is configured).
    public var cameraWorking: Bool?
    /// The microphone delivers sound (nil: no microphone is configured).
    public var microphoneWorking: Bool?

    public init() {}

    /// `2026-11-28T21:53:00Z`: what a Home Assistant timestamp sensor reads.
    public static func timestamp(_ seconds: Double) -> String? {
        guard seconds.isFinite, seconds >= 0, seconds < 1e11 else { return nil }
        return iso8601UTC(secondsSince1970: Int64(seconds.rounded(.down)))
    }

    public var json: JSONValue {
        var object: [String: JSONValue] = [
            "state": .string(recordingState.rawValue),
            "recording": .bool(recordingState != .idle),
            "uptime_seconds": .integer(Int64(uptimeSeconds.isFinite ? min(max(0, uptimeSeconds), 1e12) : 0)),
            "dropped_frames": .integer(Int64(droppedFrames)),
        ]
        object["kind"] = kind.map(JSONValue.string) ?? .null
        object["file"] = file.map(JSONValue.string) ?? .null
        object["free_bytes"] = freeBytes.map(JSONValue.integer) ?? .null
        object["camera"] = camera.map(JSONValue.string) ?? .null
        object["microphone"] = microphone.map(JSONValue.string) ?? .null
        object["default_pin"] = defaultPIN.map(JSONValue.bool) ?? .null
        object["last_event"] = lastEvent.map(JSONValue.string) ?? .null
        object["last_event_at"] = lastEventStart.flatMap(Self.timestamp).map(JSONValue.string) ?? .null
        object["camera_ok"] = cameraWorking.map(JSONValue.bool) ?? .null
        object["microphone_ok"] = microphoneWorking.map(JSONValue.bool) ?? .null
        // Every key a template reads is in every message (null when that part is off):
        // Home Assistant warns on each message whose template reads a missing key.
        object["motion"] = motion.map(JSONValue.bool) ?? .null
        object["event_in_progress"] = eventRecording.map(JSONValue.bool) ?? .null
        object["events_today"] = eventsToday.map { .integer(Int64($0)) } ?? .null
        object["streaming"] = streaming.map(JSONValue.bool) ?? .null
        return .object(object)
    }
}

/// Home Assistant MQTT discovery: one retained config message per entity, all naming the
/// same device block and the board's availability topic, so a board that dies (its last
/// will) shows every entity unavailable. Event starts and ends are device triggers too,
/// so an automation can say "when KioskCam starts an event".
public struct HomeAssistantDiscovery: Sendable {
    public let topics: FleetTopics
    public let version: String
    /// Adds the motion and event-clip sensors, events today and the device triggers.
    public let events: Bool
    /// Adds the stream switch (`[stream] url` is set).
    public let stream: Bool
    /// Adds the switch, the button and the stream switch (`mqtt.commands`).
    public let commands: Bool
    /// The web app's address, for the device page's "Visit" link (nil: the web app is off).
    public let configurationURL: String?
    /// The device's name in Home Assistant (nil: "KioskCam" and the id's first 8 characters).
    public let deviceName: String?

    public init(topics: FleetTopics, version: String, events: Bool, stream: Bool, commands: Bool,
                configurationURL: String? = nil, deviceName: String? = nil) {
        self.topics = topics
        self.version = version
        self.events = events
        self.stream = stream
        self.commands = commands
        self.configurationURL = configurationURL
        self.deviceName = deviceName
    }

    /// The device triggers: an event's first message (`new`) and its last (`end`).
    static let eventTriggers: [(object: String, type: String, payload: String)] = [
        ("event_started", "event_started", "new"),
        ("event_ended", "event_ended", "end"),
    ]

    /// Config topics of entities this start does not offer (a part turned off, the
    /// commands off or on), published with an empty retained payload so that Home
    /// Assistant removes what an earlier start announced.
    public var retractions: [String] {
        var topics: [String] = []
        func retract(_ component: String, _ object: String) { topics.append(self.topics.discoveryConfig(component: component, object: object)) }
        if commands { retract("binary_sensor", "recording") } else {
            retract("switch", "recording")
            retract("button", "snapshot")
        }
        if !commands || !stream { retract("switch", "stream") }
        if !events {
            retract("binary_sensor", "motion")
            retract("binary_sensor", "event_in_progress")
            retract("sensor", "events_today")
            for trigger in Self.eventTriggers { retract("device_automation", trigger.object) }
        }
        return topics
    }

    public struct Message: Sendable, Equatable {
        public let topic: String
        public let payload: JSONValue
    }

    /// Every config message, in a stable order.
    public var messages: [Message] {
        var messages: [Message] = []
        func add(_ component: String, _ object: String, _ name: String, _ fields: [String: JSONValue]) {
            var payload = fields
            payload["name"] = .string(name)
            payload["unique_id"] = .string("kioskcam_\(topics.node)_\(object)")
            payload["object_id"] = .string("kioskcam_\(topics.node.prefix(8))_\(object)")
            payload["availability_topic"] = .string(topics.availability)
            payload["payload_available"] = .string("online")
            payload["payload_not_available"] = .string("offline")
            payload["device"] = device
            payload["origin"] = .object(["name": .string("kioskcam"), "sw_version": .string(version)])
            messages.append(Message(topic: topics.discoveryConfig(component: component, object: object), payload: .object(payload)))
        }
        let state = JSONValue.string(topics.state)
        // On while anything records, an event clip included.
        let recording = JSONValue.string("{{ 'ON' if value_json.recording or value_json.event_in_progress else 'OFF' }}")
        if commands {
            add("switch", "recording", "Recording", [
                "state_topic": state, "value_template": recording,
                "command_topic": .string(topics.command(.record)), "payload_on": .string("ON"), "payload_off": .string("OFF"),
                "icon": .string("mdi:record-rec"),
            ])
            add("button", "snapshot", "Take snapshot", [
                "command_topic": .string(topics.command(.snapshot)), "payload_press": .string("PRESS"),
                "icon": .string("mdi:camera"),
            ])
            if stream {
                add("switch", "stream", "Live stream", [
                    "state_topic": state, "value_template": .string("{{ 'ON' if value_json.streaming else 'OFF' }}"),
                    "command_topic": .string(topics.command(.stream)), "payload_on": .string("ON"), "payload_off": .string("OFF"),
                    "icon": .string("mdi:broadcast"),
                ])
            }
        } else {
            add("binary_sensor", "recording", "Recording", [
                "state_topic": state, "value_template": recording,
                "payload_on": .string("ON"), "payload_off": .string("OFF"), "icon": .string("mdi:record-rec"),
            ])
        }
        add("camera", "camera", "Latest still", ["topic": .string(topics.snapshot)])
        // Gigabytes with one decimal: Home Assistant converts data sizes on request, and
        // "None" (no storage figure) reads as unknown, not as a bad number.
        add("sensor", "free_space", "Free space", [
            "state_topic": state,
            "value_template": .string("{{ (value_json.free_bytes / 1000000000) | round(2) if value_json.free_bytes is number else None }}"),
            "unit_of_measurement": .string("GB"), "device_class": .string("data_size"), "state_class": .string("measurement"),
            "suggested_display_precision": .integer(1), "entity_category": .string("diagnostic"),
        ])
        // A timestamp sensor on a topic of its own, published once there is an event:
        // Home Assistant has no "unknown" for a timestamp in a state message.
        add("sensor", "last_event", "Last event", [
            "state_topic": .string(topics.lastEvent), "device_class": .string("timestamp"), "icon": .string("mdi:cctv"),
        ])
        add("sensor", "dropped_frames", "Dropped frames", [
            "state_topic": state, "value_template": .string("{{ value_json.dropped_frames }}"),
            "state_class": .string("total_increasing"), "entity_category": .string("diagnostic"),
        ])
        // Problems: on when a configured part is not working (off when it is not configured).
        for (object, name, key) in [("camera_problem", "Camera", "camera_ok"), ("microphone_problem", "Microphone", "microphone_ok")] {
            add("binary_sensor", object, name, [
                "state_topic": state, "value_template": .string("{{ 'ON' if value_json.\(key) == false else 'OFF' }}"),
                "payload_on": .string("ON"), "payload_off": .string("OFF"), "device_class": .string("problem"),
                "entity_category": .string("diagnostic"),
            ])
        }
        add("binary_sensor", "default_pin", "Default PIN", [
            "state_topic": state, "value_template": .string("{{ 'ON' if value_json.default_pin else 'OFF' }}"),
            "payload_on": .string("ON"), "payload_off": .string("OFF"), "device_class": .string("problem"),
            "entity_category": .string("diagnostic"), "icon": .string("mdi:lock-alert"),
        ])
        if events {
            add("binary_sensor", "motion", "Motion", [
                "state_topic": state, "value_template": .string("{{ 'ON' if value_json.motion else 'OFF' }}"),
                "payload_on": .string("ON"), "payload_off": .string("OFF"), "device_class": .string("motion"),
            ])
            add("binary_sensor", "event_in_progress", "Event clip", [
                "state_topic": state, "value_template": .string("{{ 'ON' if value_json.event_in_progress else 'OFF' }}"),
                "payload_on": .string("ON"), "payload_off": .string("OFF"), "device_class": .string("running"),
                "icon": .string("mdi:cctv"),
            ])
            add("sensor", "events_today", "Events today", [
                "state_topic": state, "value_template": .string("{{ value_json.events_today if value_json.events_today is number else None }}"),
                "state_class": .string("total_increasing"), "icon": .string("mdi:counter"),
            ])
            // Device triggers carry no entity fields: only what the trigger schema reads.
            for trigger in Self.eventTriggers {
                messages.append(Message(topic: topics.discoveryConfig(component: "device_automation", object: trigger.object), payload: .object([
                    "automation_type": .string("trigger"), "topic": .string(topics.events),
                    "value_template": .string("{{ value_json.type }}"), "payload": .string(trigger.payload),
                    "type": .string(trigger.type), "subtype": .string("event_clip"), "device": device,
                ])))
            }
        }
        return messages
    }

    private var device: JSONValue {
        .object([
            "identifiers": .array([.string("kioskcam_\(topics.node)")]),
            "name": .string(deviceName ?? "KioskCam \(topics.node.prefix(8))"),
            "manufacturer": .string("KioskCam"),
            "model": .string("KioskCam camera appliance"),
            "sw_version": .string(version),
            "serial_number": .string(topics.node),
        ].merging(configurationURL.map { ["configuration_url": JSONValue.string($0)] } ?? [:]) { a, _ in a })
    }
}
