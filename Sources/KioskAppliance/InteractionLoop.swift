import Foundation
import Glibc
import KioskCore
import KioskGPIO
import KioskInput
import KioskMedia
import KioskRecording
import KioskPIN
import KioskScreen
import KioskSources
import KioskWakeUp
import Logging

/// The appliance's one poll loop for people: GPIO button lines, touch devices (and
/// their hotplug watch), the status LED and the screen, on one thread.
///
/// The loop only does I/O: it polls the descriptors, decodes events with the device
/// wrappers, feeds them to `InteractionController` (KioskCore), which makes every
/// decision, and performs the effects it returns. A touch is decoded, decided and drawn
/// in the same wake-up, so a key shows its digit within a frame. Anything slow leaves
/// the thread: recorder commands run on a serial queue, the PIN hash on another, and
/// their answers come back through an inbox and a `WakeUpEvent`. The loop sleeps in
/// `poll` until an fd is readable or the controller's next deadline.
///
/// Over 400 lines as one thing: the thread that owns these devices polls them and
/// performs every effect on them, so its inputs and effects stay beside the fds they
/// touch. The media view's player, its second job, is in `InteractionLoop+MediaView.swift`.
public final class InteractionLoop: @unchecked Sendable { // @unchecked: devices and the controller belong to the loop thread; the inbox is under `inboxLock`
    private let appliance: Appliance
    let logger: Logger
    let configuration: Configuration
    let clock = SystemClock()
    /// Wakes the loop from `poll` when a message is posted or a stop is asked for.
    private let wakeUp: WakeUpEvent
    let inboxLock = Lock()
    // Guarded by `inboxLock`.
    var inbox: [Message] = []
    private var stopRequested = false
    private var beats: UInt64 = 0
    private var started = false
    /// Stills asked for on the screen or a button and not yet saved: while any is, the
    /// screensaver waits and the Photo button is off.
    private var stillsInProgress = 0
    /// The media view's player is running: the screensaver waits.
    var mediaPlaying = false
    var lastScreenStatus: ScreenStatus?
    private let thread = ThreadGroup()

    private let commandQueue = DispatchQueue(label: "kioskcam.commands")
    /// Zoom changes from pinches, off the UI thread; `pendingZoom` holds the newest factor
    /// not yet applied (nil when none waits).
    private let zoomQueue = DispatchQueue(label: "kioskcam.zoom")
    private let pendingZoom = Locked<Double?>(nil)
    /// The camera's torch as the screen shows it: nil when the camera has none, else
    /// whether it is on (read at start, then what the last switch applied).
    private let torchState = Locked<Bool?>(nil)
    private let pinQueue = DispatchQueue(label: "kioskcam.pin")
    /// Library listings, thumbnails and photos for the media view: disk work, off the loop.
    let mediaQueue = DispatchQueue(label: "kioskcam.media")
    /// The day whose thumbnails are wanted; the thumbnail pass stops when it changes.
    let mediaDay = Locked<String?>(nil)

    // The media view's player, owned by the loop thread.
    var player: MediaPlayer?
    var playerPollAt: MonotonicInstant?
    var lastTouchTime: MonotonicInstant?
    /// How long from the tap to the player's start, for the first-picture log line.
    var playerStartLatency: Double = 0
    var firstPictureLogged = false
    /// How often the player's position is read for the scrubber and the play head.
    static let playerPollNanoseconds: Int64 = 100_000_000

    // Owned by the loop thread.
    private var buttons: ButtonPanel?
    private var touch: TouchPanel?
    let renderer: ScreenRenderer?
    /// The overlay's text for the preview (`overlay.preview`), made on the loop thread; nil when off.
    let previewStamp: OverlayStamp?
    private var controller: InteractionController
    private let pinStore: PinStore
    /// What a `broadcast` button starts and stops; nil: the button does nothing.
    private let broadcast: BroadcastLink?

    enum Message {
        case recordingState(RecordingState)
        case status(ScreenStatus)
        case pinChecked(PinCheckResult)
        case failure
        case lockNow
        case zoomChanged(Double)
        /// A recorder command finished (or failed): the recorder's own state rules again.
        case commandDone
        case media(MediaAnswer)
    }

    /// Opens the screen (falling back to a file-backed one, and saying so), the touch
    /// devices and the GPIO lines. Missing devices are logged, not fatal.
    /// - Parameter broadcast: What a button with the action `broadcast` toggles.
    public init(appliance: Appliance, configuration: Configuration, broadcast: BroadcastLink? = nil, logger: Logger) throws {
        self.broadcast = broadcast
        self.appliance = appliance
        self.configuration = configuration
        self.logger = logger
        do {
            wakeUp = try WakeUpEvent()
        } catch {
            throw ApplianceError("cannot create the UI loop's wake-up eventfd: \(error); the process has too many open files")
        }
        pinStore = PinStore(directory: configuration.control.stateDirectory, throttle: configuration.lock.throttle)
        let now = clock.now()

        var renderer: ScreenRenderer?
        do {
            let framebuffer = try Framebuffer.open(config: configuration) { [logger] line in logger.notice("screen: \(line)") }
            renderer = try ScreenRenderer(framebuffer: framebuffer, rotation: configuration.screen.rotation,
                                          previewOrientation: configuration.camera.orientation)
        } catch {
            logger.error("screen: \(error); running without a screen")
        }
        self.renderer = renderer
        previewStamp = configuration.overlay.onPreview ? appliance.graph.encoder.overlay?.makeStamp() : nil
        var screen: ScreenController?
        if let renderer {
            var controller = ScreenController(settings: configuration.lock, layout: renderer.layout, now: now,
                                              startLocked: configuration.lock.startLocked)
            var status = ScreenStatus()
            status.defaultPinWarning = (try? pinStore.isDefault()) ?? false
            _ = controller.update(status: status)
            screen = controller
        }
        // The largest zoom: the camera's own where it has one, else the digital zoom's.
        // The first pinch starts from the zoom now (`camera.zoom` in the config).
        var zoomMaximum = 4.0
        let cameraSettings = appliance.cameraSettings
        let zoomNow = Self.zoomFactor(cameraSettings)
        if case .object(let zoom)? = cameraSettings["zoom"], let maximum = zoom["maximum"]?.doubleValue { zoomMaximum = maximum }
        if case .object(let torch)? = cameraSettings["torch"], torch["how"] == .string("camera") {
            torchState.withLock { $0 = (torch["value"]?.doubleValue ?? 0) != 0 }
        }
        let pinch = renderer.map { renderer in
            var recognizer = PinchZoomRecognizer(maximum: zoomMaximum, area: renderer.layout.preview)
            if let zoomNow { recognizer.zoomChanged(to: zoomNow) }
            return recognizer
        }
        controller = InteractionController(screen: screen, previewFramesPerSecond: configuration.screen.previewFramesPerSecond,
                                           now: now, pinch: pinch)
        openButtons()
        openTouch(screen: renderer?.size ?? ScreenSize(width: 800, height: 480))
        appliance.onEvent { [weak self] event in
            switch event {
            case .recordingState(let state): self?.post(.recordingState(state))
            case .failure: self?.post(.failure)
            default: break
            }
        }
    }

    /// Loop iterations so far (the loop wakes at least once a second): the watchdog
    /// pings systemd only while this moves.
    public var heartbeat: UInt64 { inboxLock.withLock { beats } }

    /// The renderer, for screenshots over the control socket.
    public var screen: ScreenRenderer? { renderer }

    /// Shows the PIN screen now (the control socket's `lock`, tests).
    public func lockScreen() { post(.lockNow) }

    /// The zoom was set elsewhere (the control socket): the next pinch starts from
    /// what the camera or the digital zoom is heading to now.
    public func zoomChangedElsewhere() {
        guard let factor = Self.zoomFactor(appliance.cameraSettings) else { return }
        post(.zoomChanged(factor))
    }

    /// The zoom factor `camera.get` reports: where the digital zoom is heading, or the
    /// camera's own zoom.
    static func zoomFactor(_ settings: [String: JSONValue]) -> Double? {
        guard case .object(let zoom)? = settings["zoom"] else { return nil }
        return zoom["target"]?.doubleValue ?? zoom["value"]?.doubleValue
    }

    /// Feeds the live screen's status line, level meter and REC indicator.
    /// - Parameters:
    ///   - fleetProblem: "MQTT offline" while the broker is unreachable.
    ///   - broadcast: The broadcast's short state while one runs.
    public func update(_ status: ApplianceStatus, fleetProblem: String? = nil, broadcast: String? = nil, web: ScreenWebInfo? = nil) {
        var screen = ScreenStatus()
        screen.recordingSeconds = status.recorder.secondsWritten
        screen.recordingBytes = status.recorder.bytesWritten
        screen.audioLevels = status.recorder.audioLevels
        screen.freeBytes = status.freeBytes
        screen.cameraState = status.cameraState
        screen.deviceName = status.cameraName
        screen.defaultPinWarning = (try? pinStore.isDefault()) ?? false
        screen.fleetProblem = fleetProblem
        screen.broadcast = broadcast
        screen.web = web
        screen.broadcastAvailable = self.broadcast != nil && !configuration.broadcast.destinations.isEmpty
        screen.recordingKind = status.activity.kind
        screen.torch = torchState.withLock { $0 }
        inboxLock.withLock {
            screen.stillInProgress = stillsInProgress > 0
            screen.playbackActive = mediaPlaying
            lastScreenStatus = screen
        }
        if let events = appliance.events?.currentStatus {
            screen.motion = events.motion
            screen.eventClip = events.recording
        }
        post(.status(screen))
    }

    // MARK: Thread

    public func start() {
        guard inboxLock.withLock({ () -> Bool in
            defer { started = true }
            return !started
        }) else { return }
        thread.start(name: "kioskcam.ui") { [self] in loop() }
    }

    /// Stops the loop, waits for it, and releases the devices (the LED goes dark).
    public func stop() {
        guard inboxLock.withLock({ started }) else { return }
        inboxLock.withLock { stopRequested = true }
        wake()
        _ = thread.wait()
        inboxLock.withLock { started = false }
    }

    /// A still started (+1) or ended (-1): the screen's status says so at once, not at
    /// the next half-second status round (a still takes a frame, ~33 ms).
    private func countStill(_ change: Int) {
        inboxLock.withLock {
            stillsInProgress = max(0, stillsInProgress + change)
            guard var status = lastScreenStatus else { return }
            status.stillInProgress = stillsInProgress > 0
            lastScreenStatus = status
            inbox.append(.status(status))
        }
        wake()
    }

    func post(_ message: Message) {
        inboxLock.withLock { inbox.append(message) }
        wake()
    }

    func wake() { wakeUp.signal() }

    private func loop() {
        feed(.started)
        while true {
            let (messages, stop) = inboxLock.withLock { () -> ([Message], Bool) in
                defer { inbox.removeAll() }
                beats &+= 1
                return (inbox, stopRequested)
            }
            if stop { break }
            let now = clock.now()
            for message in messages { handle(message, now: now) }
            timers(now: now)
            waitForInput(until: nextDeadline(now: clock.now()))
        }
        stopPlayer()
        if let buttons { try? buttons.setLED(false) }
        touch?.close()
        buttons = nil
        touch = nil
    }

    /// The controller's deadline, given the devices' own (debounce, long press, LED
    /// blink, a touch's missing release).
    private func nextDeadline(now: MonotonicInstant) -> MonotonicInstant {
        controller.nextDeadline(now: now, devices: [buttons?.nextDeadline(after: now), touch?.nextDeadline, playerPollAt])
    }

    private func waitForInput(until deadline: MonotonicInstant) {
        var fds = [wakeUp.pollDescriptor]
        for fd in buttons?.fileDescriptors ?? [] { fds.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0)) }
        for fd in touch?.pollDescriptors ?? [] { fds.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0)) }
        let milliseconds = max(0, Int32((deadline.nanoseconds(since: clock.now()) + 999_999) / 1_000_000))
        let ready = poll(&fds, nfds_t(fds.count), milliseconds)
        guard ready > 0 else { return }
        for entry in fds where entry.revents != 0 {
            if entry.fd == wakeUp.fd {
                _ = wakeUp.drain()
            } else if let buttons, buttons.fileDescriptors.contains(entry.fd) {
                do {
                    for event in try buttons.handleReadable(fd: entry.fd) { handle(event) }
                } catch {
                    buttonFailure("\(error)")
                }
            } else if let touch {
                let events = entry.fd == touch.hotplugDescriptor ? touch.handleHotplug() : touch.handleReadable(fd: entry.fd)
                for event in events { handle(event) }
            }
        }
    }

    // MARK: Inputs

    private func handle(_ message: Message, now: MonotonicInstant) {
        let input: InteractionInput = switch message {
        case .recordingState(let state): .recordingStateChanged(state)
        case .status(let status): .status(status)
        case .pinChecked(let result): .pinChecked(result)
        case .failure: .recorderFailed
        case .lockNow: .lockNow
        case .zoomChanged(let factor): .zoomChanged(factor)
        case .commandDone: .recorderCommandDone(state: appliance.recordingState)
        case .media(let answer): .media(answer)
        }
        feed(input, now: now)
    }

    private func handle(_ event: ButtonEvent) {
        appliance.publish(.button(event.description))
        feed(.button(event, recorder: appliance.activity))
    }

    private func handle(_ event: TouchEvent) {
        lastTouchTime = event.time
        appliance.publish(.touch(event))
        feed(.touch(event, recorder: appliance.activity))
    }

    private func timers(now: MonotonicInstant) {
        if let buttons {
            do {
                for event in try buttons.tick(now: now) { handle(event) }
            } catch {
                buttonFailure("\(error)")
            }
        }
        for event in touch?.expire(now: now) ?? [] { handle(event) }
        pollPlayer(now: now)
        feed(.tick, now: now)
    }

    /// Hands an input to the controller and carries out what it decides, in order.
    func feed(_ input: InteractionInput, now: MonotonicInstant? = nil) {
        let now = now ?? clock.now()
        for effect in controller.handle(input, now: now) { perform(effect, now: now) }
    }

    // MARK: Effects

    private func perform(_ effect: InteractionEffect, now: MonotonicInstant) {
        switch effect {
        case .sendRecorderCommand(let request) where appliance.events != nil && configuration.events.mode == .events
            && [.start(.video), .toggle(.video)].contains(request):
            // Events mode: the record key is a trigger — a clip from pre_seconds before
            // to post_seconds after — not a continuous recording.
            appliance.events?.pulse(.button)
            post(.commandDone)
        case .sendRecorderCommand(let request):
            // Off this thread: a start may purge the library first. The answer comes
            // back through the inbox.
            let appliance = appliance
            let logger = logger
            commandQueue.async { [weak self] in
                defer { self?.post(.commandDone) }
                do {
                    try appliance.record(request)
                } catch {
                    logger.error("\(request) failed: \(error)")
                    appliance.publish(.failure("\(request): \(error)"))
                }
            }
        case .focus(let point):
            // Back through the preview's letter-box, orientation and digital zoom to the
            // camera's frame; the control writes go off this thread, behind any zoom.
            guard let renderer, let camera = appliance.camera else { break }
            let mapping = PreviewTapMapping(area: renderer.layout.preview, frame: camera.format.size,
                                            orientation: configuration.camera.orientation,
                                            digitalZoom: appliance.graph.digitalZoom?.zoom.now ?? 1)
            guard let framePoint = mapping.framePoint(point) else { break }
            let logger = logger
            zoomQueue.async { [weak self] in
                guard let asked = self?.appliance.cameraAdjuster.focus(at: framePoint) else { return }
                logger.debug("tap to focus at \(String(format: "%.3f, %.3f", framePoint.x, framePoint.y)) of the frame: \(asked)")
            }
        case .setZoom(let factor):
            // Off this thread (a camera control write), latest wins: a pinch sends many
            // factors and only the newest matters, so at most one waits.
            let first = pendingZoom.withLock { pending -> Bool in
                defer { pending = factor }
                return pending == nil
            }
            guard first else { break }
            zoomQueue.async { [weak self] in
                guard let self, let latest = self.pendingZoom.withLock({ pending -> Double? in
                    defer { pending = nil }
                    return pending
                }) else { return }
                var adjustment = CameraAdjustment()
                guard (try? adjustment.set(.zoom, .value(latest))) != nil else { return }
                _ = self.appliance.adjustCamera(adjustment)
            }
        case .setTorch(let on):
            // Off this thread (a camera control write); the button shows what was applied.
            let appliance = appliance, logger = logger, torchState = torchState
            zoomQueue.async {
                var adjustment = CameraAdjustment()
                guard (try? adjustment.set(.torch, .value(on ? 1 : 0))) != nil else { return }
                for report in appliance.adjustCamera(adjustment) where report.name == .torch {
                    if let applied = report.applied {
                        torchState.withLock { $0 = applied == "on" }
                    } else {
                        logger.error("torch button: \(report.line)")
                    }
                }
            }
        case .takeSnapshot:
            // Answered by the encoder thread with the next frame (or at once without a
            // camera picture): nothing waits here or on the command queue.
            let appliance = appliance
            let logger = logger
            let command = ButtonCommand.takeSnapshot
            countStill(+1)
            appliance.takeSnapshot { [weak self] result in
                self?.countStill(-1)
                if case .failure(let error) = result {
                    logger.error("\(command) failed: \(error)")
                    appliance.publish(.failure("\(command): \(error)"))
                }
            }
        case .toggleBroadcast:
            // Off this thread: a stop waits for the broadcast to finish its file.
            let destinations = configuration.broadcast.destinations, size = configuration.broadcast.size
            guard let broadcast, !destinations.isEmpty else {
                logger.notice("broadcast button: set [broadcast] to = [\"library\", \"rtmp://…\"] to say where the screen goes")
                return
            }
            let logger = logger
            commandQueue.async {
                if broadcast.stop() { return }
                do {
                    _ = try broadcast.start(destinations: destinations, duration: nil, size: size)
                } catch {
                    logger.error("broadcast button: \(error)")
                }
            }
        case .checkPIN(let pin):
            let store = pinStore
            pinQueue.async { [weak self] in
                let result: PinCheckResult
                do {
                    result = try store.verify(pin)
                } catch {
                    self?.logger.error("PIN check failed: \(error)")
                    result = .unavailable(reason: "see the log")
                }
                self?.post(.pinChecked(result))
            }
        case .draw(let model):
            _ = renderer?.render(model)
        case .refreshPreview(let model):
            guard let renderer, let frame = appliance.graph.preview?.takeNewFrame() else { return }
            let updated = (try? renderer.updatePreview(frame, overlay: previewOverlay(for: frame))) != nil
            frame.buffer.doneReading()
            if updated { _ = renderer.render(model) }
        case .setPanelBlank(let blank):
            _ = renderer?.framebuffer.setBlanked(blank)
        case .media(let request):
            performMedia(request, now: now)
        case .setLED(let pattern):
            guard let buttons else { return }
            do {
                try buttons.showStatus(pattern, now: now)
            } catch {
                buttonFailure("\(error)")
            }
        case .openButtons:
            openButtons()
        case .rescanTouch:
            guard let touch else { return }
            for notice in touch.rescan() { logger.notice("\(notice)") }
            feed(.touchNeedsRescan(touch.needsPeriodicRescan), now: now)
        case .log(.info, let message):
            logger.info("\(message)")
        case .log(.notice, let message):
            logger.notice("\(message)")
        case .log(.error, let message):
            logger.error("\(message)")
        case .pageShown(let page):
            logger.info("screen: \(page.rawValue)")
            appliance.publish(.screen(page))
        case .pinRejected:
            logger.notice("a wrong PIN was entered on the screen")
            appliance.publish(.pinRejected)
        case .measureTouchLatency(let event):
            // From the kernel's timestamp of the release to the new picture in the
            // framebuffer (the draw is the first effect of the same input).
            let milliseconds = Double(clock.now().nanoseconds(since: event.time)) / 1e6
            logger.info("touch release at \(event.point) drawn \(String(format: "%.1f", milliseconds)) ms after the kernel event")
        }
    }

    // MARK: Devices

    private func openButtons() {
        do {
            buttons = try ButtonPanel.open(configuration.buttons, now: clock.now())
            feed(buttons.map { .buttonsOpened(summary: $0.summary) } ?? .buttonsNotConfigured)
        } catch {
            buttonFailure("\(error)")
        }
    }

    /// Lets the GPIO lines go; the controller logs it and says when to try again.
    private func buttonFailure(_ message: String) {
        buttons = nil
        feed(.buttonsFailed(message))
    }

    private func openTouch(screen: ScreenSize) {
        let panel = TouchPanel(settings: configuration.touch, screen: screen, screenRotation: configuration.screen.rotation)
        let logger = logger
        panel.onNotice = { notice in logger.notice("\(notice)") }
        for notice in panel.start() { logger.notice("\(notice)") }
        touch = panel
        feed(.touchNeedsRescan(panel.needsPeriodicRescan))
    }
}
