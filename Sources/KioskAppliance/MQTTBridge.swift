import Foundation
import Glibc
import KioskCore
import KioskMQTT
import KioskWakeUp
import Logging
import ServiceLifecycle

/// The board on the user's MQTT broker: availability (with the broker-held last will),
/// retained state, event messages and the latest still out; `set/record`, `set/snapshot`
/// and `set/stream` in, obeyed through the same `Appliance` calls as the socket and the
/// buttons; Home Assistant discovery, sent again when Home Assistant comes back.
///
/// One thread owns the libmosquitto client and polls its socket and a wake-up event.
/// Everyone else only appends to a bounded outbox and wakes it, so a broker that is
/// down, slow or refusing us never blocks the recorder or the UI: messages wait up to
/// `mqtt.queue_messages`, the oldest go first and are counted. Commands run on a serial
/// queue of their own, since starting a recording may block (a purge first).
///
/// Over 400 lines as one thing: the thread that owns the libmosquitto client does both
/// directions on the one connection (connect, last will, publish, subscribe, commands
/// in); the topics, payloads, discovery documents and outbox are pure types in
/// KioskCore/Fleet.
public final class MQTTBridge: Sendable {
    public struct Status: Sendable, Equatable {
        public var broker: String
        public var connected = false
        public var queued = 0
        public var dropped = 0
        /// Connections made after the first (a broker restart, a network loss).
        public var reconnects = 0
        public var commandsIgnored = 0
        public var lastError: String?

        /// One line for `kioskcam status`.
        public var line: String {
            var text = connected ? "connected to \(broker)" : "not connected to \(broker)"
            text += ", \(queued) queued, \(dropped) dropped"
            if reconnects > 0 { text += ", \(reconnects) reconnects" }
            if commandsIgnored > 0 { text += ", \(commandsIgnored) commands ignored" }
            if !connected, let lastError { text += " (\(lastError))" }
            return text
        }
    }

    private let settings: Configuration.MQTT
    private let broker: MQTTBrokerAddress
    private let password: String?
    private let topics: FleetTopics
    private let discovery: HomeAssistantDiscovery
    private let appliance: Appliance
    private let isDefaultPIN: @Sendable () -> Bool?
    private let logger: Logger
    private let wake: WakeUpEvent
    private let threads = ThreadGroup()
    private let commandQueue = DispatchQueue(label: "kioskcam.mqtt-commands")

    /// What other threads hand the MQTT thread.
    private struct Shared {
        var outbox: MQTTOutbox
        var stateDue = true
        var discoveryDue = true
        var snapshotPath: String?
        /// A fresh still is being taken for the interval (one at a time).
        var stillPending = false
        /// When the interval's next still is due.
        var nextStill = Date.distantPast
        var stopping = false
        var status: Status
    }
    private let shared: Locked<Shared>

    /// Messages in flight (sent, not yet acknowledged) at most: libmosquitto queues
    /// without a bound beyond it, so the outbox holds the rest.
    static let inflightLimit = 16
    /// The largest still published; a bigger file is skipped with a log line.
    static let snapshotByteLimit = 8 << 20

    /// - Throws: `ApplianceError` naming the setting when the password file cannot be
    ///   read or `mqtt.url` is empty.
    public init(appliance: Appliance, configuration: Configuration, deviceID: String, version: String,
                isDefaultPIN: @escaping @Sendable () -> Bool?, logger: Logger) throws {
        let settings = configuration.mqtt
        guard let broker = settings.broker else { throw ApplianceError("mqtt.url is empty") }
        self.settings = settings
        self.broker = broker
        password = try Self.readPassword(settings)
        topics = FleetTopics(topicPrefix: settings.topicPrefix, discoveryPrefix: settings.discoveryPrefix, deviceID: deviceID)
        let web = configuration.web
        let webHost = web.listen.host == "0.0.0.0" || web.listen.host == "::" ? ProcessInfo.processInfo.hostName : web.listen.host
        discovery = HomeAssistantDiscovery(topics: topics, version: version, events: appliance.events != nil,
                                           stream: appliance.stream != nil, commands: settings.commands,
                                           configurationURL: web.enabled ? "\(web.tls == .off ? "http" : "https")://\(webHost.contains(":") ? "[\(webHost)]" : webHost):\(web.listen.port)/" : nil,
                                           deviceName: settings.deviceName.isEmpty ? nil : settings.deviceName)
        self.appliance = appliance
        self.isDefaultPIN = isDefaultPIN
        self.logger = logger
        do {
            wake = try WakeUpEvent()
        } catch {
            throw ApplianceError("mqtt: cannot make its wake-up event: \(error)")
        }
        shared = Locked(Shared(outbox: MQTTOutbox(limit: settings.queueMessages), status: Status(broker: broker.description)))
        appliance.onEvent { [weak self] event in self?.observe(event) }
    }

    public var status: Status {
        shared.withLock {
            var status = $0.status
            status.queued = $0.outbox.count
            status.dropped = $0.outbox.dropped
            return status
        }
    }

    public func start() {
        threads.start(name: "kioskcam.mqtt") { [self] in run() }
        logger.info("mqtt: publishing to \(broker) under \(topics.base)/ (Home Assistant discovery under \(settings.discoveryPrefix)/)")
    }

    /// Publishes `offline`, says goodbye to the broker (so it does not publish the will)
    /// and waits for the thread. Blocking, at most a few seconds.
    public func stop() {
        shared.withLock { $0.stopping = true }
        wake.signal()
        _ = threads.wait(timeout: 10)
        commandQueue.sync {}
    }

    // MARK: What other threads hand over

    private func observe(_ event: ApplianceEvent) {
        switch event {
        case .recordingState, .fileFinished, .cameraHealth, .failure:
            requestState()
        case .snapshotSaved(let path):
            shared.withLock { $0.snapshotPath = path }
            wake.signal()
        case .event(let message):
            if let data = try? JSONValue(encoding: message) {
                enqueue(OutgoingMessage(topic: topics.events, payload: Array(data.description.utf8), retained: false))
            }
            requestState()
        default:
            break
        }
    }

    private func requestState() {
        shared.withLock { $0.stateDue = true }
        wake.signal()
    }

    /// Appends to the outbox; `wake` for callers other than the MQTT thread itself.
    private func enqueue(_ message: OutgoingMessage, wake: Bool = true) {
        shared.withLock { $0.outbox.append(message) }
        if wake { self.wake.signal() }
    }

    // MARK: The MQTT thread

    /// The connection's state, the MQTT thread's own.
    private final class Session {
        var client: MQTTClient?
        /// CONNACK accepted.
        var connected = false
        var dropClient = false
        var inflight = 0
        var backoff = ReconnectBackoff(initial: 1, ceiling: 60)
        var nextAttempt = Date.distantPast
        var lastStatePublish = Date.distantPast
        var everConnected = false
        /// The last event's time as last sent on `<base>/last_event` (nil: again on connect).
        var lastEventPublished: String?
        var lastLoggedError: String?
        /// Why the broker's CONNACK refused us: more telling than the read error after it.
        var refusal: String?
    }

    private func run() {
        let session = Session()
        while !shared.withLock({ $0.stopping }) {
            if session.client == nil, Date() >= session.nextAttempt { connect(session) }
            pollOnce(session)
            if session.dropClient { dropConnection(session, reason: nil) }
            if session.connected { pump(session) }
        }
        goodbye(session)
    }

    private func connect(_ session: Session) {
        session.refusal = nil
        do {
            let client = try MQTTClient(clientID: "kioskcam-\(topics.node)") { [weak self, unowned session] event in
                self?.handle(event, session: session)
            }
            try client.setWill(topic: topics.availability, payload: Array("offline".utf8), qos: 1, retained: true)
            if !settings.username.isEmpty || password != nil {
                try client.setCredentials(username: settings.username, password: password)
            }
            if broker.tls { try client.setTLS(caFile: settings.caFile) }
            session.client = client
            try client.connect(host: broker.host, port: broker.port, keepAliveSeconds: 30)
        } catch {
            dropConnection(session, reason: "\(error)")
        }
    }

    private func pollOnce(_ session: Session) {
        var descriptors = [wake.pollDescriptor]
        let socket = session.client?.socket ?? -1
        if socket >= 0 {
            let events = Int16(POLLIN) | (session.client?.wantsWrite == true ? Int16(POLLOUT) : 0)
            descriptors.append(pollfd(fd: socket, events: events, revents: 0))
        }
        var timeout = 1000
        if session.client == nil {
            timeout = max(10, min(1000, Int(session.nextAttempt.timeIntervalSinceNow * 1000)))
        }
        _ = descriptors.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), Int32(timeout)) }
        _ = wake.drain()
        guard let client = session.client, descriptors.count == 2 else { return }
        let ready = descriptors[1].revents
        do {
            if ready & Int16(POLLIN | POLLERR | POLLHUP) != 0 { try client.read() }
            if session.client != nil, client.wantsWrite, ready & Int16(POLLOUT) != 0 { try client.write() }
            if session.client != nil { try client.housekeeping() }
        } catch {
            if error.lostConnection { session.dropClient = true }
            if session.refusal == nil { recordError(session, "\(error)") }
        }
    }

    /// Called from inside `read()` (on the MQTT thread).
    private func handle(_ event: MQTTClient.Event, session: Session) {
        switch event {
        case .connected(let code):
            guard code == 0 else {
                // CONNACK 4: bad user name or password; 5: not authorised.
                let hint = code == 4 || code == 5 ? " (check mqtt.username and the file mqtt.password_file names)" : ""
                let refusal = "the broker refused the connection: \(connackDescription(code))\(hint)"
                session.refusal = refusal
                recordError(session, refusal)
                session.dropClient = true
                return
            }
            session.connected = true
            session.inflight = 0
            session.lastEventPublished = nil
            session.backoff.reset()
            session.lastLoggedError = nil
            let reconnect = session.everConnected
            session.everConnected = true
            do {
                if settings.commands { try session.client?.subscribe(topics.commandFilter, qos: 1) }
                try session.client?.subscribe(topics.homeAssistantStatus, qos: 1)
            } catch {
                recordError(session, "\(error)")
            }
            shared.withLock {
                $0.status.connected = true
                $0.status.lastError = nil
                if reconnect { $0.status.reconnects += 1 }
                // Availability first: the broker may still hold the will's `offline`.
                $0.outbox.putBack(OutgoingMessage(topic: topics.availability, payload: Array("online".utf8), retained: true))
                $0.discoveryDue = true
                $0.stateDue = true
            }
            logger.notice("mqtt: connected to \(broker)\(reconnect ? " again" : "")")
        case .disconnected(let code):
            if session.connected && !shared.withLock({ $0.stopping }) {
                logger.warning("mqtt: lost the connection to \(broker) (code \(code)); reconnecting")
            }
            session.dropClient = true
        case .published:
            session.inflight = max(0, session.inflight - 1)
        case .message(let topic, let payload, _):
            received(topic: topic, payload: payload, session: session)
        }
    }

    private func received(topic: String, payload: [UInt8], session: Session) {
        if topic == topics.homeAssistantStatus {
            if payload == Array("online".utf8) {
                logger.info("mqtt: Home Assistant is online; sending discovery again")
                shared.withLock { $0.discoveryDue = true; $0.stateDue = true }
            }
            return
        }
        guard settings.commands else { return }
        switch FleetCommand.parse(topic: topic, payload: payload, topics: topics) {
        case .success(let command):
            commandQueue.async { [self] in perform(command) }
        case .failure(let rejection):
            let ignored = shared.withLock {
                $0.status.commandsIgnored += 1
                return $0.status.commandsIgnored
            }
            // The first few, then every power of ten: a flood of junk must not flood the log.
            if ignored <= 3 || Self.isPowerOfTen(ignored) {
                logger.warning("mqtt: ignored \(rejection) (\(ignored) ignored so far)")
            }
        }
    }

    private static func isPowerOfTen(_ value: Int) -> Bool {
        var value = value
        while value >= 10 && value % 10 == 0 { value /= 10 }
        return value == 1
    }

    /// A command, on the command queue: the same calls the socket makes.
    private func perform(_ command: FleetCommand) {
        do {
            switch command {
            case .record(true):
                try appliance.record(.start(.video))
                logger.notice("mqtt: recording started by set/record")
            case .record(false):
                if case .stop = try appliance.record(.stop) { logger.notice("mqtt: recording stopped by set/record") }
            case .snapshot:
                let path = try appliance.takeSnapshot()
                logger.info("mqtt: still \(path) taken by set/snapshot")
            case .stream(let on):
                guard let stream = appliance.stream else {
                    logger.warning("mqtt: set/stream ignored: no [stream] url is configured")
                    return
                }
                on ? stream.start() : stream.stop()
                logger.notice("mqtt: live stream \(on ? "started" : "stopped") by set/stream")
            }
        } catch {
            logger.warning("mqtt: \(command) not done: \(error)")
        }
        requestState()
    }

    /// Publishes what is due while fewer than `inflightLimit` messages await their ack.
    private func pump(_ session: Session) {
        let now = Date()
        let (discoveryDue, stateDue, snapshotPath) = shared.withLock { shared -> (Bool, Bool, String?) in
            defer { shared.discoveryDue = false; shared.stateDue = false; shared.snapshotPath = nil }
            return (shared.discoveryDue, shared.stateDue, shared.snapshotPath)
        }
        if discoveryDue {
            for message in discovery.messages {
                enqueue(OutgoingMessage(topic: message.topic, payload: Array(message.payload.description.utf8), retained: true), wake: false)
            }
            for topic in discovery.retractions {
                enqueue(OutgoingMessage(topic: topic, payload: [], retained: true), wake: false)
            }
        }
        if stateDue || now.timeIntervalSince(session.lastStatePublish) >= Double(settings.stateIntervalSeconds) {
            session.lastStatePublish = now
            let state = currentState()
            enqueue(OutgoingMessage(topic: topics.state, payload: Array(state.json.description.utf8), retained: true), wake: false)
            if let lastEvent = state.lastEventStart.flatMap(FleetState.timestamp), lastEvent != session.lastEventPublished {
                session.lastEventPublished = lastEvent
                enqueue(OutgoingMessage(topic: topics.lastEvent, payload: Array(lastEvent.utf8), retained: true), wake: false)
            }
        }
        if let snapshotPath {
            publishSnapshot(snapshotPath)
            shared.withLock { $0.nextStill = now.addingTimeInterval(Double(settings.stillIntervalSeconds)) }
        }
        if settings.stillIntervalSeconds > 0 { refreshStill(now) }
        while session.connected, session.inflight < Self.inflightLimit, let client = session.client,
              let message = shared.withLock({ $0.outbox.next() }) {
            do {
                try client.publish(topic: message.topic, payload: message.payload, qos: 1, retained: message.retained)
                session.inflight += 1
            } catch {
                shared.withLock { $0.outbox.putBack(message) }
                if error.lostConnection { session.dropClient = true }
                recordError(session, "\(error)")
                break
            }
        }
        if session.dropClient { dropConnection(session, reason: nil) }
    }

    private func publishSnapshot(_ path: String) {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
              let size = (attributes[.size] as? NSNumber)?.intValue, size > 0 else { return }
        guard size <= Self.snapshotByteLimit else {
            logger.warning("mqtt: still \(path) is \(size) bytes, over the \(Self.snapshotByteLimit)-byte limit; not published")
            return
        }
        guard let data = FileManager.default.contents(atPath: path) else { return }
        enqueue(OutgoingMessage(topic: topics.snapshot, payload: Array(data), retained: true), wake: false)
    }

    /// Home Assistant's camera picture renewed from the next frame (`still_interval_seconds`),
    /// on the command queue: the MQTT thread never waits for the camera. Not saved in the
    /// library; a camera without a picture skips this round quietly (its problem sensor says it).
    private func refreshStill(_ now: Date) {
        let due = shared.withLock { shared -> Bool in
            guard !shared.stillPending, now >= shared.nextStill else { return false }
            shared.stillPending = true
            return true
        }
        guard due else { return }
        commandQueue.async { [self] in
            let jpeg = try? appliance.currentPictureJPEG()
            let taken = jpeg.map { !$0.isEmpty && $0.count <= Self.snapshotByteLimit } ?? false
            shared.withLock {
                $0.stillPending = false
                // Without a picture (the camera starting or lost): again in 5 s.
                $0.nextStill = Date(timeIntervalSinceNow: taken ? Double(settings.stillIntervalSeconds) : 5)
            }
            if taken, let jpeg { enqueue(OutgoingMessage(topic: topics.snapshot, payload: jpeg, retained: true)) }
        }
    }

    private func currentState() -> FleetState {
        let status = appliance.status
        var state = FleetState()
        state.recordingState = status.recorder.state
        state.kind = status.recorder.state == .idle ? nil : status.activity.kind?.rawValue
        state.file = status.recorder.currentFile
        state.freeBytes = status.freeBytes
        state.camera = "\(status.cameraName): \(status.cameraState)"
        state.microphone = "\(status.microphoneName): \(status.microphoneState)"
        state.defaultPIN = isDefaultPIN()
        state.cameraWorking = status.cameraName == "none" ? nil : status.cameraRunning
        state.microphoneWorking = status.microphoneName == "none" ? nil : status.microphoneState == "running"
        state.uptimeSeconds = Date().timeIntervalSince(status.startedAt)
        state.droppedFrames = status.recorder.droppedVideoFrames
        if let events = appliance.events?.currentStatus {
            state.motion = events.motion
            state.eventRecording = events.recording
            state.lastEvent = events.lastEvent
            state.lastEventStart = events.lastEventStart
            state.eventsToday = events.eventsToday
        }
        if let stream = appliance.stream { state.streaming = stream.status.state != .stopped }
        return state
    }

    /// Forgets the client; the next attempt comes after the backoff.
    private func dropConnection(_ session: Session, reason: String?) {
        if let reason { recordError(session, reason) }
        session.client = nil
        session.connected = false
        session.dropClient = false
        session.inflight = 0
        session.nextAttempt = Date(timeIntervalSinceNow: session.backoff.nextDelay(unit: Double.random(in: 0...1)))
        shared.withLock { $0.status.connected = false }
    }

    private func recordError(_ session: Session, _ message: String) {
        shared.withLock { $0.status.lastError = message }
        if message != session.lastLoggedError {
            logger.error("mqtt: \(message); trying again with backoff (up to 60 s)")
            session.lastLoggedError = message
        }
    }

    /// On stop: `offline` (retained) sent and flushed for up to 2 s, then DISCONNECT.
    private func goodbye(_ session: Session) {
        guard let client = session.client, session.connected else { return }
        do {
            try client.publish(topic: topics.availability, payload: Array("offline".utf8), qos: 1, retained: true)
            session.inflight += 1
            let deadline = Date(timeIntervalSinceNow: 2)
            while session.inflight > 0, session.client != nil, Date() < deadline { pollOnce(session) }
        } catch {
            logger.warning("mqtt: could not publish offline: \(error)")
        }
        client.disconnect()
        logger.info("mqtt: disconnected from \(broker)")
    }

    /// The broker password `password_file` holds (nil without one); `kioskcam config
    /// check` asks too, so a missing file is found before the daemon starts.
    /// - Throws: `ApplianceError` naming the file and the fix.
    public static func readPassword(_ settings: Configuration.MQTT) throws -> String? {
        guard let path = settings.passwordFile else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ApplianceError("mqtt.password_file \(path) cannot be read: create it with the broker password (mode 0600, readable by kioskcam), or set password_file = \"\"")
        }
        guard data.count <= 4096, let text = String(data: data, encoding: .utf8) else {
            throw ApplianceError("mqtt.password_file \(path) does not hold a password (not UTF-8 text, or over 4 KiB)")
        }
        let password = text.trimmingCharacters(in: .newlines)
        guard !password.isEmpty else { throw ApplianceError("mqtt.password_file \(path) is empty: write the broker password into it") }
        return password
    }
}

/// The MQTT bridge as a service: connected from start-up, `offline` published and the
/// connection closed on shutdown.
struct MQTTService: Service {
    let bridge: MQTTBridge

    func run() async throws {
        bridge.start()
        try? await gracefulShutdown()
        await onBackgroundThread("kioskcam.mqtt-stop") { [bridge] in bridge.stop() }
    }
}
