import Foundation
import KioskControl
import KioskBroadcast
import KioskCore
import KioskPIN
import KioskRecording
import Logging
import KioskUpload
import KioskWeb
import ServiceLifecycle

/// The whole appliance wired together: the capture and recording core, and around it
/// the buttons, touch, screen and control socket as services.
public final class ApplianceDaemon: Sendable {
    public let appliance: Appliance
    private let runner: ApplianceRunner
    private let logger: Logger
    private let interaction: InteractionLoop?
    private let control: ControlServer?
    private let metrics: MetricsTextfileWriter?
    private let mqtt: MQTTBridge?
    /// Offsite copies; nil while `[upload] url` is empty.
    public let uploader: Uploader?
    /// The screen broadcast the daemon starts and stops (`broadcast.start`/`.stop`).
    public let broadcast: BroadcastLink
    /// The web app; nil while `[web] enabled` is false or it could not start (logged).
    public let web: WebServer?

    /// Opens what the configuration names (falling back to built-in devices, and saying
    /// so). A part that cannot open (no screen, no GPIO, socket path unusable) is logged
    /// and left out; the appliance records regardless.
    /// - Parameters:
    ///   - reloadConfiguration: Reads the configuration again on SIGHUP.
    ///   - broadcastCommand: How to run `kioskcam broadcast` with this configuration
    ///     (`[program, "broadcast", "--config", FILE]`); nil: this program, default configuration.
    /// - Throws: `ApplianceError` when the media root or a named source is unusable. An
    ///   `[upload]` or `[mqtt]` that cannot work (a secret file missing, say) is logged
    ///   with its fix and left off: the camera records regardless.
    public init(configuration: Configuration, reloadConfiguration: (@Sendable () throws -> Configuration)?,
                version: String, broadcastCommand: [String]? = nil, logger: Logger) throws {
        self.logger = logger
        let stateDirectory = configuration.control.stateDirectory
        let deviceID: String?
        do {
            let identity = try DeviceIdentity.loadOrCreate(directory: stateDirectory)
            deviceID = identity.text
            logger.info("device id \(identity.text) (\(identity.path))")
        } catch {
            deviceID = nil
            logger.error("device id: \(error)")
        }
        var uploader: Uploader?
        if configuration.upload.isEnabled {
            do {
                uploader = try Uploader(.init(upload: configuration.upload, layout: LibraryLayout(root: configuration.storage.mediaRoot),
                                              stateDirectory: stateDirectory, deviceID: deviceID), logger: logger)
            } catch {
                logger.error("uploads are off: \(error)")
            }
        }
        self.uploader = uploader
        appliance = try Appliance(configuration: configuration, version: version, deviceID: deviceID, logger: logger)
        if let uploader {
            // Called on the recording threads: `enqueue` only takes a lock and wakes the uploader.
            appliance.onEvent { event in
                switch event {
                case .fileFinished(let path, _, let bytes): uploader.enqueue(path: path, bytes: bytes)
                case .snapshotSaved(let path): uploader.enqueue(path: path)
                default: break
                }
            }
            let location = configuration.upload.location.map { "s3://\($0.bucket)/\($0.prefix)" } ?? configuration.upload.url
            let limit = configuration.upload.maxKbps > 0 ? ", at most \(configuration.upload.maxKbps) kbit/s" : ""
            logger.notice("upload: finished files are copied to \(location) at \(configuration.upload.effectiveEndpoint)\(limit)")
        }
        runner = ApplianceRunner(appliance: appliance, reloadConfiguration: reloadConfiguration, logger: logger)

        // Before any child process and before READY=1: the daemon may move itself into a leaf.
        let broadcast = BroadcastLink(command: broadcastCommand ?? BroadcastProgram.command(), stateDirectory: stateDirectory,
                                      cap: BroadcastCgroupSetup.prepare(logger: logger), logger: logger)
        self.broadcast = broadcast
        var interaction: InteractionLoop?
        do {
            interaction = try InteractionLoop(appliance: appliance, configuration: configuration, broadcast: broadcast, logger: logger)
        } catch {
            logger.error("buttons, touch and screen are off: \(error)")
        }
        self.interaction = interaction
        let pinStore = PinStore(directory: stateDirectory, throttle: configuration.lock.throttle)
        if (try? pinStore.status().isDefault) == true {
            logger.warning("the factory PIN 1234 is still set: change it with `kioskcam pin set`")
        }
        var mqtt: MQTTBridge?
        if configuration.mqtt.broker != nil {
            do {
                guard let deviceID else { throw ApplianceError("there is no device id to name the board's topics (see the error above)") }
                mqtt = try MQTTBridge(appliance: appliance, configuration: configuration, deviceID: deviceID, version: version,
                                      isDefaultPIN: { (try? pinStore.status())?.isDefault }, logger: logger)
            } catch {
                logger.error("mqtt is off: \(error)")
            }
        }
        self.mqtt = mqtt
        let webFacts = WebFactsBox()
        let handler = ApplianceControlHandler(appliance: appliance, interaction: interaction, pinStore: pinStore,
                                              deviceID: deviceID, version: version, mqtt: mqtt, uploader: uploader,
                                              broadcast: broadcast, web: webFacts)
        web = Self.openWeb(configuration: configuration, deviceID: deviceID, version: version, handler: handler, appliance: appliance,
                           runner: runner, canReload: reloadConfiguration != nil, facts: webFacts, logger: logger)
        var control: ControlServer?
        do {
            control = try ControlServer(path: configuration.control.socketPath, group: configuration.control.socketGroup,
                                        options: ControlServer.Options(configuration.control), handler: handler, logger: logger)
            logger.info("control socket \(configuration.control.socketPath)")
        } catch {
            logger.error("control socket: \(error); kioskcam status/start/stop will not reach this daemon")
        }
        self.control = control
        if let control {
            appliance.onEvent { event in
                if let message = ControlEvent(event) { control.publish(message) }
            }
        }
        let appliance = appliance
        // The lock screen shows where the web app is; the board's address is read again
        // every 10 s (DHCP may change it), not at every tick.
        let webInfo = Locked<(info: ScreenWebInfo?, read: Double)>((nil, 0))
        let webServer = web
        runner.onTick = { [interaction, control, mqtt, broadcast, webServer] status in
            let now = Date().timeIntervalSince1970
            let screenWeb = webServer.flatMap { web in
                webInfo.withLock { cached in
                    if cached.info == nil || now - cached.read > 10 { cached = (web.screenInfo, now) }
                    return cached.info
                }
            }
            interaction?.update(status, fleetProblem: mqtt.map { $0.status.connected ? nil : "MQTT offline" } ?? nil,
                                broadcast: broadcast.current(now: now)?.shortLabel(now: now), web: screenWeb)
            if let event = broadcast.stateEvent(now: now) { control?.publish(event) }
            if let levels = status.recorder.audioLevels {
                control?.publish(ControlEvent(.levels, ["rms_dbfs": .array(levels.rmsDBFS.map(JSONValue.number)),
                                                        "peak_dbfs": .array(levels.peakHoldDBFS.map(JSONValue.number))]))
            }
            if status.recorder.state == .recording {
                control?.publish(ControlEvent(.progress, ["seconds": .number(status.recorder.secondsWritten),
                                                          "bytes": .integer(status.recorder.bytesWritten)]))
            }
        }
        if let interaction {
            runner.add(InteractionService(loop: interaction))
            runner.watch("UI loop") { interaction.heartbeat }
        }
        if let control { runner.add(ControlService(server: control)) }
        if let web { runner.add(WebService(server: web, facts: webFacts, logger: logger)) }
        var rtspServer: RTSPServer?
        if let rtp = appliance.graph.rtp {
            let name = deviceID.map { "KioskCam \($0)" } ?? "KioskCam"
            var streams: [RTSPStreamPath: RTPStream] = [.live: rtp]
            if let substream = appliance.graph.substream { streams[.sub] = substream.stream }
            let server = web?.rtspServer(configuration: configuration.rtsp, streams: streams, name: name)
                ?? RTSPServer.standalone(configuration: configuration.rtsp, streams: streams, stateDirectory: stateDirectory, name: name,
                                         logger: logger)
            appliance.rtspEnded.set { [weak server] in server?.streamEnded($0) }
            let listen = configuration.rtsp.listen
            let host = listen.host == "0.0.0.0" || listen.host == "::" ? ProcessInfo.processInfo.hostName : listen.host
            let url = "rtsp://\(host.contains(":") ? "[\(host)]" : host):\(listen.port)/live"
            webFacts.set(rtsp: server, url: url)
            rtspServer = server
            runner.add(RTSPService(server: server, url: url, facts: webFacts, logger: logger))
        } else if configuration.rtsp.enabled {
            logger.warning("rtsp: enabled, but there is no camera to serve")
        }
        if configuration.onvif.enabled, configuration.onvif.discovery, let web,
           let device = Self.onvifDevice(configuration: configuration, appliance: appliance, deviceID: deviceID, version: version, logger: logger) {
            runner.add(ONVIFDiscoveryService(discovery: web.onvifDiscovery(device: device), logger: logger))
        }
        if let mqtt { runner.add(MQTTService(bridge: mqtt)) }
        if let uploader { runner.add(UploadService(uploader: uploader)) }
        var metrics: MetricsTextfileWriter?
        if let path = configuration.control.metricsFile {
            let directory = (path as NSString).deletingLastPathComponent
            if FileManager.default.fileExists(atPath: directory) {
                let counters = MetricsCounters(appliance: appliance, mqtt: mqtt, uploader: uploader, rtsp: rtspServer)
                metrics = MetricsTextfileWriter(path: path, intervalSeconds: configuration.control.metricsIntervalSeconds,
                                                logger: logger) { [control] in
                    counters.snapshot(pinStore: pinStore, control: control, deviceID: deviceID ?? "", version: version)
                }
            } else {
                logger.info("metrics: \(directory) does not exist (no node_exporter textfile collector); not writing \(path)")
            }
        }
        self.metrics = metrics
    }

    /// The web app, when `[web]` enables it; a part that cannot start (a key that cannot be
    /// read) is logged with its fix and left off: the camera records regardless.
    private static func openWeb(configuration: Configuration, deviceID: String?, version: String, handler: ApplianceControlHandler,
                                appliance: Appliance, runner: ApplianceRunner, canReload: Bool, facts: WebFactsBox,
                                logger: Logger) -> WebServer? {
        guard configuration.web.enabled else { return nil }
        do {
            // Saved settings are applied by the reload SIGHUP runs (when this daemon has a
            // configuration to read again).
            var reload: (@Sendable (String) -> SettingsReloadOutcome)?
            if canReload {
                reload = { @Sendable (cause: String) -> SettingsReloadOutcome in
                    switch runner.reload(cause: cause) {
                    case .success(let change): return SettingsReloadOutcome(appliedNow: change.appliedNow, needRestart: change.needRestart)
                    case .failure(let failure): return SettingsReloadOutcome(error: failure.message)
                    }
                }
            }
            var backend = WebBackend(control: handler, currentPictureJPEG: { try appliance.currentPictureJPEG() },
                                     layout: LibraryLayout(root: configuration.storage.mediaRoot),
                                     live: appliance.camera == nil ? nil : appliance.graph.live,
                                     configuration: { appliance.configuration }, reload: reload)
            backend.onvifDevice = onvifDevice(configuration: configuration, appliance: appliance, deviceID: deviceID, version: version,
                                              logger: logger)
            let web = try WebServer(configuration: configuration.web, stateDirectory: configuration.control.stateDirectory,
                                    deviceID: deviceID, backend: backend, logger: logger)
            facts.set(web: web, error: nil)
            return web
        } catch {
            logger.error("web app is off: \(error)")
            facts.set(web: nil, error: error.description)
            return nil
        }
    }

    /// What ONVIF answers are made of (`[onvif] enabled`, with `[rtsp]`), for the host a
    /// client reached us by: the streams as the encoders make them, the web app's address.
    private static func onvifDevice(configuration: Configuration, appliance: Appliance, deviceID: String?, version: String,
                                    logger: Logger) -> (@Sendable (String) -> ONVIFDevice?)? {
        guard configuration.onvif.enabled else { return nil }
        guard configuration.rtsp.enabled, let video = appliance.graph.encoder.videoSettings else {
            logger.error("onvif is off: it hands NVRs the RTSP stream, so it needs [rtsp] enabled = true and a camera")
            return nil
        }
        let web = configuration.web, rtsp = configuration.rtsp
        let substream = appliance.graph.substream
        let name = deviceID.map { "KioskCam \($0)" } ?? "KioskCam"
        return { host in
            let address = host.isEmpty ? ProcessInfo.processInfo.hostName : host
            let bracketed = address.contains(":") ? "[\(address)]" : address
            var streams = [ONVIFDevice.Stream(token: "main", width: video.input.size.width, height: video.input.size.height,
                                              framesPerSecond: video.input.framesPerSecond, bitrate: video.bitrate,
                                              keyframeInterval: video.keyframeInterval,
                                              rtspURL: "rtsp://\(bracketed):\(rtsp.listen.port)/live")]
            if let substream {
                streams.append(.init(token: "sub", width: substream.size.width, height: substream.size.height,
                                     framesPerSecond: substream.framesPerSecond, bitrate: substream.encoder.videoSettings?.bitrate ?? 0,
                                     keyframeInterval: substream.encoder.videoSettings?.keyframeInterval ?? 0,
                                     rtspURL: "rtsp://\(bracketed):\(rtsp.listen.port)/sub"))
            }
            let interface = NetworkInterfaceFacts.lookup(ipv4: address)
            return ONVIFDevice(name: name, firmwareVersion: version, serialNumber: deviceID ?? "unknown",
                               baseURL: "\(web.tls == .off ? "http" : "https")://\(bracketed):\(web.listen.port)", streams: streams,
                               interfaceName: interface?.name ?? "eth0", hardwareAddress: interface?.hardwareAddress ?? "00:00:00:00:00:00",
                               ipv4Address: interface == nil ? "0.0.0.0" : address, ipv4PrefixLength: interface?.prefixLength ?? 24)
        }
    }

    /// Runs until SIGTERM/SIGINT (or `runFor` seconds).
    public func run(runFor: Double? = nil) async throws {
        let metrics = metrics
        let broadcast = broadcast
        do {
            try await runner.run(runFor: runFor)
        } catch {
            await onBackgroundThread("kioskcam.metrics-stop") { metrics?.stop(); broadcast.shutdown() }
            throw error
        }
        await onBackgroundThread("kioskcam.broadcast-stop") { broadcast.shutdown() }
        await onBackgroundThread("kioskcam.metrics-stop") { metrics?.stop() }
    }
}
