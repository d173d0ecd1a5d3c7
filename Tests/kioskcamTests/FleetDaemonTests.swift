import Foundation
import KioskTestSupport
import XCTest

/// `kioskcam run` against a real Mosquitto and a real S3 server (moto) on 127.0.0.1:
/// discovery as Home Assistant reads it, commands, the last will, a broker restart,
/// junk commands, and five boards sharing one broker and one bucket.
final class FleetDaemonTests: XCTestCase {
    /// - Parameter stillInterval: `mqtt.still_interval_seconds`; 0 (off) unless a test is
    ///   about it, so that the retained still is the one a test took.
    func startBoard(_ folder: TemporaryDirectory, _ name: String, broker: MosquittoBroker, stillInterval: Int = 0,
                    extra: String = "") throws -> KioskcamDaemon {
        try KioskcamDaemon(root: folder.path + "/" + name, sections: """
            [mqtt]
            url = "\(broker.url)"
            state_interval_seconds = 5
            still_interval_seconds = \(stillInterval)
            \(extra)
            """)
    }

    func retained(_ broker: MosquittoBroker, _ topic: String) throws -> String? {
        try broker.subscribe(topic, count: 1, seconds: 2, retainedOnly: true).first?.payload
    }

    /// An `[upload]` section to `bucket` (created) on `server`, its secret in a file in `folder`.
    func uploadSection(to server: MotoServer, bucket: String, prefix: String, in folder: TemporaryDirectory) throws -> String {
        try server.createBucket(bucket)
        try "secret\n".write(toFile: folder.path + "/s3-secret", atomically: true, encoding: .utf8)
        return """
            [upload]
            url = "s3://\(bucket)/\(prefix)"
            endpoint = "\(server.endpoint)"
            access_key_id = "kioskcam"
            secret_access_key_file = "\(folder.path)/s3-secret"
            """
    }

    func json(_ text: String?) -> [String: Any]? {
        text.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    func testDiscoveryCommandsAndTheLastWill() throws {
        let folder = TemporaryDirectory()
        let broker = try MosquittoBroker(folder: folder.path)
        let board = try startBoard(folder, "board", broker: broker)
        let id = board.deviceID
        XCTAssertFalse(id.isEmpty)
        let base = "kioskcam/\(id)"
        XCTAssertTrue(waitUntil(10) { (try? self.retained(broker, base + "/availability")) == "online" }, board.logText())

        // Discovery: retained, JSON, one device, every entity available through our topic.
        // A switch, a button, a camera, three sensors and three problem sensors (no stream
        // configured, no events).
        let configs = try broker.subscribe("homeassistant/+/kioskcam_\(id)/+/config", count: 9, seconds: 5, retainedOnly: true)
        XCTAssertEqual(Set(configs.map(\.topic)).count, 9, "\(configs.map(\.topic))")
        for config in configs {
            let payload = try XCTUnwrap(json(config.payload), "not JSON: \(config.payload)")
            XCTAssertEqual(payload["availability_topic"] as? String, base + "/availability", config.topic)
            let device = try XCTUnwrap(payload["device"] as? [String: Any], config.topic)
            XCTAssertEqual(device["identifiers"] as? [String], ["kioskcam_\(id)"])
            XCTAssertNotNil(payload["unique_id"] as? String)
        }
        let state = try XCTUnwrap(json(try retained(broker, base + "/state")))
        XCTAssertEqual(state["recording"] as? Bool, false)
        XCTAssertEqual(state["default_pin"] as? Bool, true)
        XCTAssertNotNil(state["free_bytes"] as? Int)
        XCTAssertTrue(waitUntil(10) { self.json(try? self.retained(broker, base + "/state"))?["camera_ok"] as? Bool == true })
        XCTAssertEqual(json(try retained(broker, base + "/state"))?["microphone_ok"] as? Bool, true)

        // set/record ON starts a recording, OFF finishes it into the library.
        try broker.publish(base + "/set/record", "ON")
        XCTAssertTrue(waitUntil(10) { board.status()["state"] as? String == "recording" }, board.logText())
        XCTAssertTrue(waitUntil(10) { self.json(try? self.retained(broker, base + "/state"))?["recording"] as? Bool == true })
        XCTAssertNil(board.waitUntilRecorded(1.5), board.logText())
        try broker.publish(base + "/set/record", "OFF")
        XCTAssertTrue(waitUntil(15) { board.status()["state"] as? String == "idle" }, board.logText())
        let videos = (try? FileManager.default.subpathsOfDirectory(atPath: board.media + "/video"))?.filter { $0.hasSuffix(".mp4") } ?? []
        XCTAssertEqual(videos.count, 1, "\(videos)")
        if let video = videos.first {
            let probe = try FFprobe.probe(board.media + "/video/" + video, countFrames: false)
            XCTAssertEqual(Set(probe.streams.map(\.codec_type)), ["video", "audio"])
        }

        // set/snapshot takes a still; its JPEG is the retained snapshot.
        try broker.publish(base + "/set/snapshot", "PRESS")
        XCTAssertTrue(waitUntil(10) {
            ((try? FileManager.default.subpathsOfDirectory(atPath: board.media + "/photo")) ?? []).contains { $0.hasSuffix(".jpg") }
        }, board.logText())
        let received = folder.path + "/snapshot.jpg"
        let subscriber = try requiredProgram("mosquitto_sub", package: "mosquitto-clients")
        try Tool.run("/bin/sh", ["-c", "\"$0\" -p \(broker.port) -t '\(base)/snapshot' -C 1 -W 5 -N > '\(received)'", subscriber])
        let stills = try FileManager.default.subpathsOfDirectory(atPath: board.media + "/photo").filter { $0.hasSuffix(".jpg") }
        let published = try Data(contentsOf: URL(fileURLWithPath: received))
        XCTAssertEqual(published.prefix(2), Data([0xFF, 0xD8]), "a JPEG")
        XCTAssertEqual(published, try Data(contentsOf: URL(fileURLWithPath: board.media + "/photo/" + (stills.first ?? ""))),
                       "byte for byte the still in the library")

        // Status and metrics tell the connection.
        XCTAssertTrue((board.status()["mqtt"] as? String)?.hasPrefix("connected to \(broker.url)") == true, "\(board.status())")
        XCTAssertTrue(waitUntil(5) {
            ((try? String(contentsOfFile: board.root + "/metrics/kioskcam.prom", encoding: .utf8)) ?? "").contains("kioskcam_mqtt_connected 1")
        })

        // kill -9: the broker publishes the will.
        board.signal(SIGKILL)
        board.reap()
        XCTAssertTrue(waitUntil(10) { (try? self.retained(broker, base + "/availability")) == "offline" })
    }

    /// Home Assistant's camera picture renews itself: a still at connection and then every
    /// `still_interval_seconds`, none of them saved in the library.
    func testTheStillIsRenewedOnItsInterval() throws {
        let folder = TemporaryDirectory()
        let broker = try MosquittoBroker(folder: folder.path)
        let board = try startBoard(folder, "board", broker: broker, stillInterval: 10)
        let base = "kioskcam/\(board.deviceID)"
        let received = folder.path + "/stills"
        let subscriber = try requiredProgram("mosquitto_sub", package: "mosquitto-clients")
        // Two stills within 25 s of the start, without a press: the first, then one 10 s on.
        try Tool.run("/bin/sh", ["-c", "\"$0\" -p \(broker.port) -t '\(base)/snapshot' -C 2 -W 25 -N > '\(received)'", subscriber])
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: received)))
        let starts = (0..<max(0, bytes.count - 2)).filter { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xD8 && bytes[$0 + 2] == 0xFF }
        XCTAssertGreaterThanOrEqual(starts.count, 2, "two JPEGs: \(bytes.count) bytes, \(board.logText())")
        XCTAssertEqual(starts.first, 0)
        let saved = ((try? FileManager.default.subpathsOfDirectory(atPath: board.media + "/photo")) ?? []).filter { $0.hasSuffix(".jpg") }
        XCTAssertEqual(saved, [], "the interval's stills are not kept in the library")
    }

    /// A clean stop says offline itself; a broker that goes away and comes back on the
    /// same port is reconnected to, with availability, discovery and commands back.
    func testSurvivesABrokerRestartAndSaysOfflineOnStop() throws {
        let folder = TemporaryDirectory()
        let broker = try MosquittoBroker(folder: folder.path)
        let board = try startBoard(folder, "board", broker: broker)
        let base = "kioskcam/\(board.deviceID)"
        XCTAssertTrue(waitUntil(10) { (try? self.retained(broker, base + "/availability")) == "online" })

        broker.stop()
        XCTAssertTrue(waitUntil(10) { (board.status()["mqtt"] as? String)?.hasPrefix("not connected") == true }, "\(board.status())")
        // Messages meanwhile wait in the bounded outbox; the recorder is not held up.
        XCTAssertEqual(try board.kioskcam(["start"]).status, 0)
        XCTAssertTrue(waitUntil(10) { board.status()["state"] as? String == "recording" })
        try broker.start()   // no persistence: the new broker has no retained messages at all
        XCTAssertTrue(waitUntil(15) { (try? self.retained(broker, base + "/availability")) == "online" }, board.logText())
        XCTAssertTrue(waitUntil(10) { self.json(try? self.retained(broker, base + "/state"))?["recording"] as? Bool == true })
        XCTAssertNotNil(try retained(broker, "homeassistant/switch/kioskcam_\(board.deviceID)/recording/config"), "discovery sent again")
        XCTAssertTrue(board.logText().contains("mqtt: connected to \(broker.url) again"))
        try broker.publish(base + "/set/record", "OFF")
        XCTAssertTrue(waitUntil(15) { board.status()["state"] as? String == "idle" }, board.logText())
        XCTAssertTrue((board.status()["mqtt"] as? String)?.contains("1 reconnects") == true, "\(board.status())")

        XCTAssertEqual(board.terminate(), 0)
        XCTAssertEqual(try retained(broker, base + "/availability"), "offline", "said on a clean stop, not left to the will")
    }

    /// 10,000 junk payloads on the command topics change nothing, cost nothing visible
    /// and are counted; the log shows a handful of lines, not 10,000.
    func testTenThousandMalformedCommandsChangeNothing() throws {
        let folder = TemporaryDirectory()
        let broker = try MosquittoBroker(folder: folder.path)
        let board = try startBoard(folder, "board", broker: broker)
        let base = "kioskcam/\(board.deviceID)"
        XCTAssertTrue(waitUntil(10) { (try? self.retained(broker, base + "/availability")) == "online" })
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ONFonf01 \t{}[]\"':;,.-_/+#*$%\\é漢😀abcXYZ")
        var lines: [String] = []
        for index in 0..<10_000 {
            let length = Int.random(in: 1...80, using: &generator)
            var line = String((0..<length).map { _ in alphabet.randomElement(using: &generator) ?? "x" })
            // Never one of the words a command takes (nothing, after trimming, is PRESS).
            if ["", "ON", "OFF", "1", "0", "TRUE", "FALSE", "PRESS"].contains(line.trimmingCharacters(in: .whitespaces).uppercased()) {
                line += "?"
            }
            lines.append(index % 1000 == 0 ? String(repeating: "A", count: 500) : line)
        }
        let topics = ["/set/record", "/set/stream", "/set/snapshot", "/set/reboot"]
        for (number, topic) in topics.enumerated() {
            let share = lines[(number * 2500)..<((number + 1) * 2500)].joined(separator: "\n") + "\n"
            try broker.publish(base + topic, share, lines: true)
        }
        XCTAssertTrue(waitUntil(20) {
            ((try? String(contentsOfFile: board.root + "/metrics/kioskcam.prom", encoding: .utf8)) ?? "")
                .contains("kioskcam_mqtt_commands_ignored_total 10000")
        }, board.logText().suffix(2000).description)
        XCTAssertTrue(board.process.isRunning)
        XCTAssertEqual(board.status()["state"] as? String, "idle")
        XCTAssertFalse(FileManager.default.fileExists(atPath: board.media + "/photo"), "no still was taken")
        let ignoredLines = board.logText().components(separatedBy: "\n").filter { $0.contains("mqtt: ignored") }
        XCTAssertLessThanOrEqual(ignoredLines.count, 10, "throttled: \(ignoredLines.count) lines")
        XCTAssertTrue(ignoredLines.last?.contains("(10000 ignored so far)") == true, "\(ignoredLines.last ?? "")")
        // The board still obeys a good command afterwards.
        try broker.publish(base + "/set/record", "ON")
        XCTAssertTrue(waitUntil(10) { board.status()["state"] as? String == "recording" }, board.logText())
    }

    /// A fleet on one machine: five boards with their own state and media, one broker,
    /// one bucket. Each board appears in discovery once, under its own device; a command
    /// reaches its board only; every file each board makes arrives in the bucket once,
    /// byte for byte, under that board's id.
    func testFiveBoardsOnOneBrokerAndOneBucket() throws {
        let folder = TemporaryDirectory()
        let broker = try MosquittoBroker(folder: folder.path)
        let bucket = try MotoServer()
        let upload = try uploadSection(to: bucket, bucket: "fleet", prefix: "site-a", in: folder)
        let boards = try (1...5).map { try startBoard(folder, "board\($0)", broker: broker, extra: upload) }
        let ids = Set(boards.map(\.deviceID))
        XCTAssertEqual(ids.count, 5, "five device ids")
        XCTAssertTrue(waitUntil(15) {
            (try? broker.subscribe("kioskcam/+/availability", count: 5, seconds: 2, retainedOnly: true))?
                .filter { $0.payload == "online" }.count == 5
        })
        let configs = try broker.subscribe("homeassistant/switch/+/recording/config", count: 5, seconds: 5, retainedOnly: true)
        var devices: [String: Int] = [:]
        for config in configs {
            let payload = try XCTUnwrap(json(config.payload))
            let device = try XCTUnwrap((payload["device"] as? [String: Any])?["identifiers"] as? [String])
            devices[device.joined(), default: 0] += 1
        }
        XCTAssertEqual(Set(devices.keys), Set(ids.map { "kioskcam_\($0)" }))
        XCTAssertEqual(Set(devices.values), [1], "each board once")

        // One board's command reaches that board only.
        let chosen = boards[2]
        try broker.publish("kioskcam/\(chosen.deviceID)/set/record", "ON")
        XCTAssertTrue(waitUntil(10) { chosen.status()["state"] as? String == "recording" })
        Thread.sleep(forTimeInterval: 1)   // a command that reached another board too has had time to act
        XCTAssertEqual(boards.filter { $0.status()["state"] as? String == "recording" }.count, 1)
        // Then every board records a little and takes a still.
        for board in boards where board !== chosen { try broker.publish("kioskcam/\(board.deviceID)/set/record", "ON") }
        XCTAssertTrue(waitUntil(15) { boards.allSatisfy { $0.status()["state"] as? String == "recording" } })
        for board in boards { XCTAssertNil(board.waitUntilRecorded(1.5), board.logText()) }
        for board in boards {
            try broker.publish("kioskcam/\(board.deviceID)/set/record", "OFF")
            try broker.publish("kioskcam/\(board.deviceID)/set/snapshot", "PRESS")
        }
        XCTAssertTrue(waitUntil(20) { boards.allSatisfy { $0.status()["state"] as? String == "idle" } })

        // Every finished file of every board, in the bucket once.
        func libraryFiles(_ board: KioskcamDaemon) -> [String] {
            ((try? FileManager.default.subpathsOfDirectory(atPath: board.media)) ?? [])
                .filter { $0.hasSuffix(".mp4") || $0.hasSuffix(".jpg") }.filter { !$0.contains(".incoming") }.sorted()
        }
        XCTAssertTrue(waitUntil(20) { boards.allSatisfy { libraryFiles($0).count == 2 } }, "\(boards.map(libraryFiles))")
        var expected: [String: String] = [:]
        for board in boards {
            for file in libraryFiles(board) { expected["site-a/\(board.deviceID)/\(file)"] = board.media + "/" + file }
        }
        XCTAssertEqual(expected.count, 10)
        XCTAssertTrue(waitUntil(30) {
            boards.allSatisfy { ($0.status()["upload_queued_files"] as? Int) == 0 } && ((try? bucket.keys(in: "fleet"))?.count ?? 0) >= 10
        }, "\(boards.map { $0.status()["upload_queued_files"] ?? "none" }) \(boards[0].logText().suffix(1500))")
        let keys = try bucket.keys(in: "fleet")
        XCTAssertEqual(keys.count, Set(keys).count, "no key twice")
        XCTAssertEqual(Set(keys), Set(expected.keys), "every file once, under its board's id")
        for (key, path) in expected {
            XCTAssertEqual(try bucket.object("fleet", key), try Data(contentsOf: URL(fileURLWithPath: path)), key)
        }
        for board in boards { XCTAssertEqual(board.terminate(), 0) }
    }

    /// The footage of a board cut off mid-recording (a thief pulling the plug) is
    /// salvaged at the next start and copied offsite, though no `fileFinished` ever
    /// announced it; a file already marked uploaded is not copied again.
    func testASalvagedRecordingIsCopiedOffsiteAfterAPowerCut() throws {
        let folder = TemporaryDirectory()
        let bucket = try MotoServer()
        let sections = try uploadSection(to: bucket, bucket: "cut", prefix: "boards", in: folder)
        let root = folder.path + "/board"
        var board = try KioskcamDaemon(root: root, sections: sections)
        XCTAssertEqual(try board.kioskcam(["snapshot"]).status, 0)
        XCTAssertTrue(waitUntil(15) { ((try? bucket.keys(in: "cut")) ?? []).count == 1 }, board.logText())
        XCTAssertEqual(try board.kioskcam(["start"]).status, 0)
        XCTAssertNil(board.waitUntilRecorded(3), board.logText())
        board.signal(SIGKILL)
        board.reap()
        XCTAssertEqual(((try? FileManager.default.subpathsOfDirectory(atPath: board.media + "/video")) ?? []).filter { $0.hasSuffix(".mp4") }, [],
                       "the recording was still in .incoming")

        board = try KioskcamDaemon(root: root, sections: sections)
        XCTAssertTrue(waitUntil(20) { ((try? bucket.keys(in: "cut")) ?? []).count == 2 }, board.logText())
        let keys = try bucket.keys(in: "cut")
        let videos = ((try? FileManager.default.subpathsOfDirectory(atPath: board.media + "/video")) ?? []).filter { $0.hasSuffix(".mp4") }
        XCTAssertEqual(videos.count, 1, "salvaged into the library")
        let key = try XCTUnwrap(keys.first { $0.hasSuffix(".mp4") })
        let copy = try bucket.object("cut", key)
        XCTAssertEqual(copy, try Data(contentsOf: URL(fileURLWithPath: board.media + "/video/" + (videos.first ?? ""))))
        XCTAssertTrue(board.logText().contains("were not queued"), "the catch-up says what it did")
        // Once the queue is empty, whatever the catch-up queued has been copied.
        XCTAssertTrue(waitUntil(30) { (board.status()["upload_queued_files"] as? Int) == 0 },
                      "waited for upload_queued_files 0: \(board.status())")
        XCTAssertEqual(try bucket.keys(in: "cut").count, 2, "the still, marked uploaded before the cut, is not copied twice")
        XCTAssertEqual(board.terminate(), 0)
    }

    /// With event clips on: the motion sensor is discovered, an event's new and end
    /// messages reach `<base>/events`, and the state's `motion` follows the clip.
    func testEventMessagesAndTheMotionSensor() throws {
        let folder = TemporaryDirectory()
        let broker = try MosquittoBroker(folder: folder.path)
        let board = try startBoard(folder, "board", broker: broker, extra: """
            [events]
            mode = "events"
            motion = false
            pre_seconds = 1
            post_seconds = 1
            """)
        let base = "kioskcam/\(board.deviceID)"
        XCTAssertTrue(waitUntil(10) { (try? self.retained(broker, base + "/availability")) == "online" })
        let sensor = try XCTUnwrap(json(try retained(broker, "homeassistant/binary_sensor/kioskcam_\(board.deviceID)/motion/config")))
        XCTAssertEqual(sensor["device_class"] as? String, "motion")

        // Listen to the events topic while a manual event runs. A retained message on a
        // topic of the test's own arrives once the subscription is in place (it is not
        // JSON, so it is not one of the messages counted below).
        let subscribed = "kioskcam-test/\(board.deviceID)/subscribed"
        try Tool.run(try requiredProgram("mosquitto_pub", package: "mosquitto-clients"),
                     ["-p", String(broker.port), "-t", subscribed, "-m", "subscribed", "-r"])
        let received = folder.path + "/events.txt"
        let subscriber = Process()
        subscriber.executableURL = URL(fileURLWithPath: try requiredProgram("mosquitto_sub", package: "mosquitto-clients"))
        subscriber.arguments = ["-p", String(broker.port), "-t", base + "/events", "-t", subscribed, "-C", "3", "-W", "60"]
        FileManager.default.createFile(atPath: received, contents: nil)
        subscriber.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: received))
        try subscriber.run()
        XCTAssertTrue(waitUntil(30) { ((try? String(contentsOfFile: received, encoding: .utf8)) ?? "").contains("subscribed") },
                      "waited for mosquitto_sub to subscribe (the retained message on \(subscribed))")
        XCTAssertEqual(try board.kioskcam(["event", "start"]).status, 0)
        // A manual event is an event clip, not motion: "Motion" follows the detector alone.
        XCTAssertTrue(waitUntil(10) { self.json(try? self.retained(broker, base + "/state"))?["event_in_progress"] as? Bool == true }, board.logText())
        XCTAssertEqual(json(try retained(broker, base + "/state"))?["motion"] as? Bool, false)
        Thread.sleep(forTimeInterval: 1)   // the scenario: an event that lasts a second (its clip is being written: event_in_progress)
        XCTAssertEqual(try board.kioskcam(["event", "stop"]).status, 0)
        subscriber.waitUntilExit()
        let messages = try String(contentsOfFile: received, encoding: .utf8).split(separator: "\n").compactMap { json(String($0)) }
        XCTAssertEqual(messages.map { $0["type"] as? String }, ["new", "end"], "\(messages)")
        XCTAssertEqual(Set(messages.compactMap { $0["id"] as? String }).count, 1, "one event")
        XCTAssertTrue((messages.last?["clip"] as? String)?.hasSuffix("-manual.mp4") == true, "\(messages.last ?? [:])")
        XCTAssertTrue(waitUntil(10) { self.json(try? self.retained(broker, base + "/state"))?["event_in_progress"] as? Bool == false })
        let state = try XCTUnwrap(json(try retained(broker, base + "/state")))
        XCTAssertEqual(state["events_today"] as? Int, 1)
        XCTAssertNotNil(state["last_event"] as? String)
        // Home Assistant's "Last event" timestamp sensor reads its own topic.
        let lastEvent = try XCTUnwrap(try retained(broker, base + "/last_event"))
        let at = try XCTUnwrap(ISO8601DateFormatter().date(from: lastEvent), lastEvent)
        XCTAssertLessThan(abs(at.timeIntervalSinceNow), 30, lastEvent)
    }

    /// An upload cut midway (the bucket's server stalls after part of the body, the
    /// daemon is killed), then a real server and the daemon back: the file arrives whole.
    func testAnUploadCutMidwayCompletesAfterTheServerAndTheDaemonComeBack() throws {
        let folder = TemporaryDirectory()
        // First the board's S3 endpoint is a server that reads part of the body and
        // stalls: the upload is midway by construction, however loaded the machine.
        let stalling = try StallingHTTPServer(bodyLimit: 8_192)
        let port = stalling.port
        try "secret\n".write(toFile: folder.path + "/s3-secret", atomically: true, encoding: .utf8)
        let sections = """
            [upload]
            url = "s3://cut/boards"
            endpoint = "http://127.0.0.1:\(port)"
            access_key_id = "kioskcam"
            secret_access_key_file = "\(folder.path)/s3-secret"
            """
        let root = folder.path + "/board"
        var board = try KioskcamDaemon(root: root, sections: sections)
        XCTAssertEqual(try board.kioskcam(["start"]).status, 0)
        XCTAssertNil(board.waitUntilRecorded(2), board.logText())
        XCTAssertEqual(try board.kioskcam(["stop"]).status, 0)
        let videos = ((try? FileManager.default.subpathsOfDirectory(atPath: board.media + "/video")) ?? []).filter { $0.hasSuffix(".mp4") }
        let video = try XCTUnwrap(videos.first)
        let size = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: board.media + "/video/" + video)[.size] as? Int)
        XCTAssertGreaterThan(size, 4 * stalling.bodyLimit, "long enough to be cut after the first \(stalling.bodyLimit) bytes")
        let key = "boards/\(board.deviceID)/video/\(video)"
        func midway() -> StallingHTTPServer.Request? {
            stalling.received.first { $0.line.hasPrefix("PUT /cut/boards/") && $0.bodyBytes >= stalling.bodyLimit }
        }
        XCTAssertTrue(waitUntil(30) { midway() != nil },
                      "waited for the upload's first \(stalling.bodyLimit) bytes: \(stalling.received) \(board.status()) \(board.logText().suffix(1500))")
        XCTAssertEqual(board.status()["upload_queued_files"] as? Int, 1, "the queue still holds the file: \(board.status())")
        board.signal(SIGKILL)
        board.reap()
        stalling.stop()

        let server = try MotoServer(port: port)
        try server.createBucket("cut")
        board = try KioskcamDaemon(root: root, sections: sections)
        XCTAssertTrue(waitUntil(60) { ((try? server.keys(in: "cut")) ?? []) == [key] },
                      "\((try? server.keys(in: "cut")) ?? []) \(board.logText().suffix(1500))")
        XCTAssertEqual(try server.object("cut", key), try Data(contentsOf: URL(fileURLWithPath: board.media + "/video/" + video)))
        XCTAssertTrue(waitUntil(5) { (board.status()["upload_queued_files"] as? Int) == 0 })
        XCTAssertEqual(board.terminate(), 0)
    }

    /// `mqtts://` with `ca_file`, a user and `password_file`: the board connects and
    /// obeys; a wrong password and a broker certificate from another authority are
    /// refused with a status that names what to check, and the camera records on.
    func testMQTTOverTLSWithAPassword() throws {
        let folder = TemporaryDirectory()
        let security = try MosquittoBroker.Security.make(in: folder.path, user: "camera", password: "s3cret pass")
        let broker = try MosquittoBroker(folder: folder.path, security: security)
        try "s3cret pass\n".write(toFile: folder.path + "/mqtt-password", atomically: true, encoding: .utf8)
        try "wrong\n".write(toFile: folder.path + "/wrong-password", atomically: true, encoding: .utf8)
        let otherAuthority = TemporaryDirectory()
        let other = try MosquittoBroker.Security.make(in: otherAuthority.path, user: "x", password: "x")
        func board(_ name: String, password: String, ca: String) throws -> KioskcamDaemon {
            try startBoard(folder, name, broker: broker, extra: """
                username = "camera"
                password_file = "\(password)"
                ca_file = "\(ca)"
                """)
        }
        let good = try board("good", password: folder.path + "/mqtt-password", ca: security.caFile)
        let base = "kioskcam/\(good.deviceID)"
        XCTAssertTrue(waitUntil(10) { (try? self.retained(broker, base + "/availability")) == "online" }, good.logText())
        try broker.publish(base + "/set/record", "ON")
        XCTAssertTrue(waitUntil(10) { good.status()["state"] as? String == "recording" }, good.logText())

        let refused = try board("refused", password: folder.path + "/wrong-password", ca: security.caFile)
        XCTAssertTrue(waitUntil(10) { (refused.status()["mqtt"] as? String)?.contains("not authori") == true }, "\(refused.status())")
        XCTAssertTrue(refused.logText().contains("check mqtt.username"), refused.logText())
        let untrusted = try board("untrusted", password: folder.path + "/mqtt-password", ca: other.caFile)
        XCTAssertTrue(waitUntil(10) { (untrusted.status()["mqtt"] as? String)?.hasPrefix("not connected") == true }, "\(untrusted.status())")
        XCTAssertTrue(untrusted.logText().contains("mqtt.ca_file"), untrusted.logText())
        for board in [refused, untrusted] {
            XCTAssertEqual(try board.kioskcam(["start"]).status, 0, "records without its broker")
            XCTAssertTrue(waitUntil(10) { board.status()["state"] as? String == "recording" })
        }
        XCTAssertEqual(try retained(broker, "kioskcam/\(refused.deviceID)/availability"), nil, "never got in")
    }

    /// `set/stream` stops and starts the `[stream]` output (here HLS into a folder), the
    /// state's `streaming` follows, and Home Assistant is offered the stream switch.
    func testTheStreamSwitch() throws {
        let folder = TemporaryDirectory()
        let broker = try MosquittoBroker(folder: folder.path)
        // A folder that does not exist yet: the daemon makes it and puts index.m3u8 inside.
        let playlist = folder.path + "/hls/index.m3u8"
        let board = try KioskcamDaemon(root: folder.path + "/board", sections: """
            [stream]
            url = "\(folder.path)/hls"
            [mqtt]
            url = "\(broker.url)"
            """)
        let base = "kioskcam/\(board.deviceID)"
        XCTAssertTrue(waitUntil(10) { (try? self.retained(broker, base + "/availability")) == "online" })
        let streamSwitch = try XCTUnwrap(json(try retained(broker, "homeassistant/switch/kioskcam_\(board.deviceID)/stream/config")))
        XCTAssertEqual(streamSwitch["command_topic"] as? String, base + "/set/stream")
        XCTAssertTrue(waitUntil(15) { FileManager.default.fileExists(atPath: playlist) }, board.logText())
        XCTAssertTrue(waitUntil(10) { self.json(try? self.retained(broker, base + "/state"))?["streaming"] as? Bool == true })
        // Status and metrics show the stream.
        XCTAssertTrue(waitUntil(10) { (board.status()["stream_bytes"] as? Int ?? 0) > 0 }, "\(board.status())")
        XCTAssertEqual(board.status()["stream_state"] as? String, "live")
        XCTAssertEqual(board.status()["stream_destination"] as? String, playlist)
        XCTAssertTrue(try board.kioskcam(["status"]).stdout.contains("stream:       live to \(playlist)"))
        XCTAssertTrue(waitUntil(5) {
            ((try? String(contentsOfFile: folder.path + "/board/metrics/kioskcam.prom", encoding: .utf8)) ?? "").contains("kioskcam_stream_up 1")
        })

        try broker.publish(base + "/set/stream", "OFF")
        XCTAssertTrue(waitUntil(10) { self.json(try? self.retained(broker, base + "/state"))?["streaming"] as? Bool == false }, board.logText())
        XCTAssertTrue(board.logText().contains("live stream stopped by set/stream"))
        let stopped = try String(contentsOfFile: playlist, encoding: .utf8)
        Thread.sleep(forTimeInterval: 3)   // the scenario: longer than a segment, with the stream off
        XCTAssertEqual(try String(contentsOfFile: playlist, encoding: .utf8), stopped, "no new segments while off")

        try broker.publish(base + "/set/stream", "ON")
        XCTAssertTrue(waitUntil(10) { self.json(try? self.retained(broker, base + "/state"))?["streaming"] as? Bool == true }, board.logText())
        XCTAssertTrue(waitUntil(15) { (try? String(contentsOfFile: playlist, encoding: .utf8)) != stopped }, "segments again")
        XCTAssertEqual(board.terminate(), 0)
    }
}
