import Foundation
import XCTest
@testable import KioskCore

/// MQTT's pure parts: the `[mqtt]` keys, topics, commands from an untrusted broker,
/// Home Assistant discovery, the bounded outbox and the reconnect backoff.
final class FleetTests: XCTestCase {
    let topics = FleetTopics(topicPrefix: "kioskcam", discoveryPrefix: "homeassistant",
                             deviceID: "3b29627c-72a1-4732-bc9d-82d2390a2dc5")

    // MARK: Configuration

    func testBrokerAddresses() {
        XCTAssertEqual(MQTTBrokerAddress(url: "mqtt://broker.lan"), MQTTBrokerAddress(host: "broker.lan", port: 1883, tls: false))
        XCTAssertEqual(MQTTBrokerAddress(url: "mqtts://broker.lan"), MQTTBrokerAddress(host: "broker.lan", port: 8883, tls: true))
        XCTAssertEqual(MQTTBrokerAddress(url: "mqtt://10.0.0.2:1884/"), MQTTBrokerAddress(host: "10.0.0.2", port: 1884, tls: false))
        XCTAssertEqual(MQTTBrokerAddress(url: "mqtt://[::1]:1885"), MQTTBrokerAddress(host: "::1", port: 1885, tls: false))
        XCTAssertEqual(MQTTBrokerAddress(url: "mqtt://[::1]:1885")?.description, "mqtt://[::1]:1885")
        for bad in ["", "mqtt://", "http://broker", "mqtt://user:pw@broker", "mqtt://broker:0", "mqtt://broker:65536",
                    "mqtt://broker:port", "mqtt://broker/topic", "mqtt://::1", "mqtt://[::1", "mqtt://[::1]x", "mqtt://b roker",
                    "mqtt://broker:99999999999999999999999"] {
            XCTAssertNil(MQTTBrokerAddress(url: bad), bad)
        }
    }

    func testTheMQTTSection() throws {
        let configuration = try Configuration(toml: """
            [mqtt]
            url = "mqtts://broker.lan"
            username = "cam"
            password_file = "/etc/kioskcam/mqtt-password"
            ca_file = "/etc/kioskcam/ca.pem"
            topic_prefix = "home/cameras"
            discovery_prefix = "ha"
            commands = false
            """, file: "k.toml")
        XCTAssertEqual(configuration.mqtt.broker, MQTTBrokerAddress(host: "broker.lan", port: 8883, tls: true))
        XCTAssertEqual(configuration.mqtt.username, "cam")
        XCTAssertEqual(configuration.mqtt.passwordFile, "/etc/kioskcam/mqtt-password")
        XCTAssertEqual(configuration.mqtt.caFile, "/etc/kioskcam/ca.pem")
        XCTAssertEqual(configuration.mqtt.topicPrefix, "home/cameras")
        XCTAssertEqual(configuration.mqtt.discoveryPrefix, "ha")
        XCTAssertFalse(configuration.mqtt.commands)
        XCTAssertNil(try Configuration(toml: "", file: "k.toml").mqtt.broker, "off by default")
    }

    func testBadMQTTValuesNameTheKeyAndWhatIsAllowed() {
        let cases: [(String, String)] = [
            ("url = \"http://broker\"", "mqtt://host[:port]"),
            ("url = \"mqtt://u:p@broker\"", "mqtt://host[:port]"),
            ("password_file = \"relative/path\"", "absolute path"),
            ("topic_prefix = \"cams/#\"", "without +, #"),
            ("topic_prefix = \"/cams\"", "leading/trailing /"),
            ("discovery_prefix = \"\"", "one or more topic levels"),
            ("commands = \"yes\"", "true or false"),
            ("queue_messages = 1", "from 16 to 100000"),
            ("still_interval_seconds = 5", "from 10 to 86400"),
            ("device_name = \"a\\nb\"", "without control characters"),
        ]
        for (line, fragment) in cases {
            XCTAssertThrowsError(try Configuration(toml: "[mqtt]\n" + line, file: "k.toml"), line) { error in
                let message = "\(error)"
                XCTAssertTrue(message.contains("mqtt."), "names the key: \(message)")
                XCTAssertTrue(message.contains(fragment), "'\(message)' lacks '\(fragment)'")
            }
        }
    }

    // MARK: Topics and commands

    func testTopicsSitUnderThePrefixAndTheDeviceID() {
        XCTAssertEqual(topics.availability, "kioskcam/3b29627c-72a1-4732-bc9d-82d2390a2dc5/availability")
        XCTAssertEqual(topics.command(.record), "kioskcam/3b29627c-72a1-4732-bc9d-82d2390a2dc5/set/record")
        XCTAssertEqual(topics.commandFilter, "kioskcam/3b29627c-72a1-4732-bc9d-82d2390a2dc5/set/+")
        XCTAssertEqual(topics.discoveryConfig(component: "switch", object: "recording"),
                       "homeassistant/switch/kioskcam_3b29627c-72a1-4732-bc9d-82d2390a2dc5/recording/config")
        // Nothing from the id can add a topic level or a wildcard.
        let hostile = FleetTopics(topicPrefix: "k", discoveryPrefix: "h", deviceID: "a/b+#c d\u{0}é")
        XCTAssertEqual(hostile.node, "abcd")
        XCTAssertEqual(FleetTopics(topicPrefix: "k", discoveryPrefix: "h", deviceID: "//").node, "unknown")
    }

    func testCommandsTheBoardObeys() {
        func parse(_ name: String, _ payload: String) -> FleetCommand? {
            try? FleetCommand.parse(topic: topics.commandPrefix + name, payload: Array(payload.utf8), topics: topics).get()
        }
        XCTAssertEqual(parse("record", "ON"), .record(true))
        XCTAssertEqual(parse("record", "off\n"), .record(false))
        XCTAssertEqual(parse("stream", "ON"), .stream(true))
        XCTAssertEqual(parse("stream", "0"), .stream(false))
        XCTAssertEqual(parse("snapshot", "PRESS"), .snapshot)
        XCTAssertEqual(parse("snapshot", ""), .snapshot)
        XCTAssertNil(parse("record", "maybe"))
        XCTAssertNil(parse("record", ""))
        XCTAssertNil(parse("snapshot", "OFF"))
        XCTAssertNil(parse("reboot", "ON"))
        XCTAssertNil(parse("record/extra", "ON"))
        XCTAssertNil(parse("record", "ON" + String(repeating: " ", count: 100)), "too long, whatever it holds")
        let invalidUTF8 = FleetCommand.parse(topic: topics.command(.record), payload: [0x4F, 0xFF, 0x4E], topics: topics)
        XCTAssertEqual(invalidUTF8, .failure(.malformed(.record, "not UTF-8")))
        let elsewhere = FleetCommand.parse(topic: "kioskcam/other-board/set/record", payload: Array("ON".utf8), topics: topics)
        XCTAssertEqual(elsewhere, .failure(.unknownTopic("kioskcam/other-board/set/record")))
        XCTAssertEqual("\(FleetCommandRejection.malformed(.record, "\"x\""))", "set/record wants ON or OFF, not \"x\"")
    }

    /// 10,000 random payloads and topics: none traps, and only the few exact words parse.
    func testRandomCommandsNeverTrapAndRarelyParse() {
        var generator = ControlFuzzTests.SplitMix(state: 17)
        let words: Set<String> = ["ON", "OFF", "1", "0", "TRUE", "FALSE", "PRESS", ""]
        for _ in 0..<10_000 {
            let length = Int(generator.next() % 90)
            let payload = (0..<length).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            let name = ["record", "snapshot", "stream", "bogus", "", "record/x"][Int(generator.next() % 6)]
            let result = FleetCommand.parse(topic: topics.commandPrefix + name, payload: payload, topics: topics)
            if case .success = result {
                let word = String(decoding: payload, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines).uppercased()
                XCTAssertTrue(words.contains(word), "parsed \(payload) on \(name)")
            }
        }
    }

    // MARK: Discovery and state

    func testDiscoveryDescribesOneDeviceWithItsAvailability() throws {
        let discovery = HomeAssistantDiscovery(topics: topics, version: "1.2.3", events: true, stream: true, commands: true)
        let messages = discovery.messages
        XCTAssertEqual(messages.map(\.topic).sorted(), [
            "homeassistant/binary_sensor/kioskcam_\(topics.node)/camera_problem/config",
            "homeassistant/binary_sensor/kioskcam_\(topics.node)/default_pin/config",
            "homeassistant/binary_sensor/kioskcam_\(topics.node)/event_in_progress/config",
            "homeassistant/binary_sensor/kioskcam_\(topics.node)/microphone_problem/config",
            "homeassistant/binary_sensor/kioskcam_\(topics.node)/motion/config",
            "homeassistant/button/kioskcam_\(topics.node)/snapshot/config",
            "homeassistant/camera/kioskcam_\(topics.node)/camera/config",
            "homeassistant/device_automation/kioskcam_\(topics.node)/event_ended/config",
            "homeassistant/device_automation/kioskcam_\(topics.node)/event_started/config",
            "homeassistant/sensor/kioskcam_\(topics.node)/dropped_frames/config",
            "homeassistant/sensor/kioskcam_\(topics.node)/events_today/config",
            "homeassistant/sensor/kioskcam_\(topics.node)/free_space/config",
            "homeassistant/sensor/kioskcam_\(topics.node)/last_event/config",
            "homeassistant/switch/kioskcam_\(topics.node)/recording/config",
            "homeassistant/switch/kioskcam_\(topics.node)/stream/config",
        ])
        var devices = Set<JSONValue>()
        var uniqueIDs = Set<String>()
        let entities = messages.filter { !$0.topic.contains("/device_automation/") }
        for message in messages {
            guard case .object(let payload) = message.payload else { return XCTFail("not an object: \(message.payload)") }
            if let device = payload["device"] { devices.insert(device) }
            if message.topic.contains("/device_automation/") {
                XCTAssertEqual(payload["automation_type"], .string("trigger"), message.topic)
                XCTAssertEqual(payload["topic"], .string(topics.events), message.topic)
                continue
            }
            XCTAssertEqual(payload["availability_topic"], .string(topics.availability), message.topic)
            XCTAssertNotNil(payload["name"]?.stringValue, message.topic)
            if let id = payload["unique_id"]?.stringValue { uniqueIDs.insert(id) }
            // Every topic it names is ours.
            for key in ["state_topic", "command_topic", "topic"] {
                if key == "state_topic", message.topic.hasSuffix("/last_event/config") {
                    XCTAssertEqual(payload[key], .string(topics.lastEvent), "a topic that holds only a time")
                }
                if let topic = payload[key]?.stringValue { XCTAssertTrue(topic.hasPrefix(topics.base + "/"), "\(key) \(topic)") }
            }
        }
        XCTAssertEqual(devices.count, 1, "one device block shared by every entity")
        XCTAssertEqual(uniqueIDs.count, entities.count, "unique ids are unique")
        guard case .object(let device)? = devices.first else { return XCTFail("no device block") }
        XCTAssertEqual(device["identifiers"], .array([.string("kioskcam_\(topics.node)")]))
        XCTAssertEqual(device["sw_version"], .string("1.2.3"))
        // The switch reads the state's `recording` and commands set/record.
        let recording = try XCTUnwrap(messages.first { $0.topic.contains("/switch/") && $0.topic.hasSuffix("/recording/config") })
        guard case .object(let fields) = recording.payload else { return XCTFail("switch") }
        XCTAssertEqual(fields["command_topic"], .string(topics.command(.record)))
        XCTAssertEqual(fields["value_template"], .string("{{ 'ON' if value_json.recording or value_json.event_in_progress else 'OFF' }}"),
                       "on while an event clip records too")
        XCTAssertEqual(device["serial_number"], .string(topics.node))
        XCTAssertNil(device["configuration_url"], "no web app, no link")
        XCTAssertEqual(discovery.retractions, ["homeassistant/binary_sensor/kioskcam_\(topics.node)/recording/config"],
                       "the sensor an earlier start without commands announced")
    }

    /// Entities of parts turned off are retracted (an empty retained config), so that an
    /// earlier start's "Motion" or "Live stream" does not stay forever.
    func testPartsTurnedOffAreRetracted() {
        let discovery = HomeAssistantDiscovery(topics: topics, version: "1", events: false, stream: false, commands: false,
                                               configurationURL: "https://cam1:8443/")
        let retracted = Set(discovery.retractions)
        for (component, object) in [("switch", "recording"), ("button", "snapshot"), ("switch", "stream"), ("binary_sensor", "motion"),
                                    ("binary_sensor", "event_in_progress"), ("sensor", "events_today"), ("device_automation", "event_started"),
            ("device_automation", "event_ended")] {
            XCTAssertTrue(retracted.contains("homeassistant/\(component)/kioskcam_\(topics.node)/\(object)/config"), "\(component)/\(object)")
        }
        XCTAssertTrue(Set(discovery.messages.map(\.topic)).isDisjoint(with: retracted), "nothing offered and retracted at once")
        guard case .object(let fields)? = discovery.messages.first?.payload, case .object(let device)? = fields["device"] else {
            return XCTFail("no device block")
        }
        XCTAssertEqual(device["configuration_url"], .string("https://cam1:8443/"))
    }

    /// Every key a template reads is in every state message, even a bare one: Home
    /// Assistant warns on each message whose template reads a missing key.
    func testEveryKeyATemplateReadsIsInTheState() throws {
        let discovery = HomeAssistantDiscovery(topics: topics, version: "1", events: true, stream: true, commands: true, deviceName: "Front door")
        guard case .object(let bare) = FleetState().json else { return XCTFail("object") }
        var read = Set<String>()
        for message in discovery.messages {
            guard case .object(let payload) = message.payload, let template = payload["value_template"]?.stringValue,
                  payload["state_topic"] != nil else { continue }
            let pattern = try NSRegularExpression(pattern: #"value_json\.([a-z_]+)"#)
            for match in pattern.matches(in: template, range: NSRange(template.startIndex..., in: template)) {
                read.insert((template as NSString).substring(with: match.range(at: 1)))
            }
            if case .object(let device)? = payload["device"] { XCTAssertEqual(device["name"], .string("Front door")) }
        }
        XCTAssertTrue(read.isSuperset(of: ["recording", "free_bytes", "camera_ok", "microphone_ok", "default_pin", "events_today"]), "\(read)")
        XCTAssertEqual(read.subtracting(bare.keys), [], "read by a template, absent from the state")
    }

    func testTheLastEventIsATimestampHomeAssistantReads() {
        var state = FleetState()
        state.lastEventStart = 1_795_602_900.75
        state.cameraWorking = false
        guard case .object(let object) = state.json else { return XCTFail("object") }
        XCTAssertEqual(object["last_event_at"], .string("2026-11-25T10:35:00Z"))
        XCTAssertEqual(object["camera_ok"], .bool(false))
        XCTAssertEqual(object["microphone_ok"], .null, "no microphone configured")
        state.lastEventStart = .nan
        guard case .object(let torn) = state.json else { return XCTFail("object") }
        XCTAssertEqual(torn["last_event_at"], .null, "a time that is no time is left out, not trapped on")
    }

    func testDiscoveryWithoutCommandsOffersNothingToPress() {
        let discovery = HomeAssistantDiscovery(topics: topics, version: "1", events: false, stream: true, commands: false)
        let topicsSent = discovery.messages.map(\.topic)
        XCTAssertFalse(topicsSent.contains { $0.contains("/switch/") || $0.contains("/button/") }, "\(topicsSent)")
        XCTAssertTrue(topicsSent.contains { $0.contains("/binary_sensor/") && $0.hasSuffix("/recording/config") })
        XCTAssertFalse(topicsSent.contains { $0.hasSuffix("/motion/config") }, "no motion sensor without events")
        for message in discovery.messages {
            guard case .object(let payload) = message.payload else { return XCTFail("object") }
            XCTAssertNil(payload["command_topic"], message.topic)
        }
    }

    func testStateIsOneJSONObjectWithEveryField() throws {
        var state = FleetState()
        state.recordingState = .recording
        state.kind = "video"
        state.freeBytes = 1_000
        state.uptimeSeconds = .infinity
        state.motion = true
        let json = state.json
        guard case .object(let object) = json else { return XCTFail("object") }
        XCTAssertEqual(object["recording"], .bool(true))
        XCTAssertEqual(object["state"], .string("recording"))
        XCTAssertEqual(object["uptime_seconds"], .integer(0), "a non-finite time cannot trap")
        XCTAssertEqual(object["motion"], .bool(true))
        XCTAssertEqual(object["last_event"], .null, "present, so Home Assistant's template finds it")
        XCTAssertEqual(object["streaming"], .null, "no stream: null, but present, so a template that reads it finds it")
        XCTAssertEqual(object["event_in_progress"], .null)
        XCTAssertEqual(object["events_today"], .null)
        let decoded = try JSONSerialization.jsonObject(with: Data(json.description.utf8)) as? [String: Any]
        XCTAssertEqual(decoded?["free_bytes"] as? Int, 1_000)
    }

    // MARK: Outbox and backoff

    func testTheOutboxDropsTheOldestAndCounts() {
        var outbox = MQTTOutbox(limit: 3)
        for index in 0..<5 { outbox.append(message("events", "\(index)")) }
        XCTAssertEqual(outbox.count, 3)
        XCTAssertEqual(outbox.dropped, 2)
        XCTAssertEqual(outbox.next()?.payload, Array("2".utf8), "the oldest went first")
        XCTAssertEqual(outbox.bytes, 2)
    }

    func testRetainedMessagesKeepOnlyTheNewestPerTopic() {
        var outbox = MQTTOutbox(limit: 10)
        outbox.append(message("state", "old", retained: true))
        outbox.append(message("events", "e1"))
        outbox.append(message("state", "newer", retained: true))
        XCTAssertEqual(outbox.count, 2)
        XCTAssertEqual(outbox.dropped, 0)
        XCTAssertEqual(outbox.next()?.payload, Array("newer".utf8), "replaced in place, keeping its turn")
        XCTAssertEqual(outbox.next()?.payload, Array("e1".utf8))
        XCTAssertNil(outbox.next())
        XCTAssertEqual(outbox.bytes, 0)
    }

    func testTheOutboxIsBoundedInBytesAndPutBackGoesFirst() {
        var outbox = MQTTOutbox(limit: 100, byteLimit: 10)
        outbox.append(message("a", "123456"))
        outbox.append(message("b", "7890ab"))
        XCTAssertEqual(outbox.count, 1, "over 10 bytes: the oldest goes")
        XCTAssertEqual(outbox.dropped, 1)
        let first = outbox.next()
        XCTAssertEqual(first?.topic, "b")
        outbox.append(message("c", "1"))
        if let first { outbox.putBack(first) }
        XCTAssertEqual(outbox.next()?.topic, "b")
        XCTAssertEqual(outbox.next()?.topic, "c")
        // Many rounds keep memory compacted and the counts right.
        for index in 0..<1_000 {
            outbox.append(message("t", "\(index % 10)"))
            _ = outbox.next()
        }
        XCTAssertTrue(outbox.isEmpty)
        XCTAssertEqual(outbox.bytes, 0)
    }

    func testBackoffDoublesToItsCeilingWithJitterAndResets() {
        var backoff = ReconnectBackoff(initial: 1, ceiling: 60)
        let middles = (0..<10).map { _ in backoff.nextDelay(unit: 0.5) }
        XCTAssertEqual(middles, [1, 2, 4, 8, 16, 32, 60, 60, 60, 60])
        var jittered = ReconnectBackoff(initial: 1, ceiling: 60)
        XCTAssertEqual(jittered.nextDelay(unit: 0), 0.75)
        XCTAssertEqual(jittered.nextDelay(unit: 1), 2.5)
        XCTAssertEqual(jittered.nextDelay(unit: .nan), 4, "a bad random number cannot trap")
        for _ in 0..<100 { XCTAssertLessThanOrEqual(jittered.nextDelay(unit: 1), 60) }
        jittered.reset()
        XCTAssertEqual(jittered.nextDelay(unit: 0.5), 1)
    }

    private func message(_ topic: String, _ text: String, retained: Bool = false) -> OutgoingMessage {
        OutgoingMessage(topic: topic, payload: Array(text.utf8), retained: retained)
    }
}
