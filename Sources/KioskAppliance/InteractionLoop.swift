import Foundation
import Glibc
import KioskCore
import KioskGPIO
import KioskInput
import KioskPIN
import KioskScreen
import KioskSources
import Logging

/// The appliance's one poll loop for people: GPIO button lines, touch devices (and
/// their hotplug watch), the status LED, the screen logic and drawing, on one thread.
///
/// A touch is decoded, applied to the screen logic and drawn in the same wake-up, so a
/// key shows its digit within a frame. Anything slow leaves the thread: recorder
/// commands run on a serial queue, the PIN hash on another, and their answers come
/// back through an inbox and a wake-up pipe. The loop sleeps in `poll` until an fd
/// is readable or the next deadline (long press, LED blink, idle timer, preview frame).
public final class InteractionLoop: @unchecked Sendable {
    private let appliance: Appliance
    private let logger: Logger
    private let configuration: Configuration
    private let clock = SystemClock()
    /// Read and write ends of the wake-up pipe.
    private let wakeFD: Int32
    private let wakeWriteFD: Int32
    private let inboxLock = Lock()
    // Guarded by `inboxLock`.
    private var inbox: [Message] = []
    private var stopRequested = false
    private var beats: UInt64 = 0
    private var thread: Thread?
    private let finished = DispatchSemaphore(value: 0)

    private let commandQueue = DispatchQueue(label: "kioskcam.commands")
    private let pinQueue = DispatchQueue(label: "kioskcam.pin")

    // Owned by the loop thread.
    private var buttons: ButtonPanel?
    private var buttonRetryAt: MonotonicInstant?
    private var lastButtonError: String?
    private var touch: TouchPanel?
    private let renderer: ScreenRenderer?
    private var controller: ScreenController?
    private let pinStore: PinStore
    private var recordingState: RecordingState = .idle
    private var errorShownUntil: MonotonicInstant?
    private var nextPreview: MonotonicInstant
    private let previewInterval: Int64
    private var lastPage: ScreenPage?
    /// A start or stop sent to the recorder and not yet answered: buttons count it as
    /// starting/stopping, so two quick presses never make a double toggle.
    private var commandInFlight: RecordingState?
    private var nextTouchRescan: MonotonicInstant?

    private enum Message {
        case recordingState(RecordingState)
        case status(ScreenStatus)
        case pinChecked(PinCheckResult)
        case failure
        case lockNow
        /// A recorder command finished (or failed): the recorder's own state rules again.
        case commandDone
    }

    /// Opens the screen (falling back to a file-backed one, and saying so), the touch
    /// devices and the GPIO lines. Missing devices are logged, not fatal.
    public init(appliance: Appliance, configuration: Configuration, logger: Logger) throws {
        self.appliance = appliance
        self.configuration = configuration
        self.logger = logger
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            throw ApplianceError("cannot create the UI loop's wake-up pipe: \(String(cString: strerror(errno)))")
        }
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        wakeFD = ends[0]
        wakeWriteFD = ends[1]
        pinStore = PinStore(directory: configuration.control.stateDirectory, throttle: configuration.lock.throttle)
        let now = clock.now()
        nextPreview = now
        previewInterval = 1_000_000_000 / Int64(max(1, configuration.screen.previewFramesPerSecond))

        var renderer: ScreenRenderer?
        do {
            let framebuffer = try Framebuffer.open(config: configuration) { [logger] line in logger.notice("screen: \(line)") }
            renderer = try ScreenRenderer(framebuffer: framebuffer, rotation: configuration.screen.rotation)
        } catch {
            logger.error("screen: \(error); running without a screen")
        }
        self.renderer = renderer
        if let renderer {
            var controller = ScreenController(settings: configuration.lock, layout: renderer.layout, now: now,
                                              startLocked: configuration.lock.startLocked)
            var status = ScreenStatus()
            status.defaultPinWarning = (try? pinStore.isDefault()) ?? false
            _ = controller.update(status: status)
            self.controller = controller
        }
        openButtons(now: now)
        openTouch(screen: renderer?.size ?? ScreenSize(width: 800, height: 480))
        appliance.onEvent { [weak self] event in
            switch event {
            case .recordingState(let state): self?.post(.recordingState(state))
            case .failure: self?.post(.failure)
            default: break
            }
        }
    }

    deinit {
        close(wakeFD)
        close(wakeWriteFD)
    }

    /// Loop iterations so far (the loop wakes at least once a second): the watchdog
    /// pings systemd only while this moves.
    public var heartbeat: UInt64 { inboxLock.withLock { beats } }

    /// The renderer, for screenshots over the control socket.
    public var screen: ScreenRenderer? { renderer }

    /// Shows the PIN screen now (the control socket's `lock`, tests).
    public func lockScreen() { post(.lockNow) }

    /// Feeds the live screen's status line, level meter and REC indicator.
    public func update(_ status: ApplianceStatus) {
        var screen = ScreenStatus()
        screen.recordingSeconds = status.recorder.secondsWritten
        screen.recordingBytes = status.recorder.bytesWritten
        screen.audioLevels = status.recorder.audioLevels
        screen.freeBytes = status.freeBytes
        screen.cameraState = status.cameraState
        screen.deviceName = status.cameraName
        screen.defaultPinWarning = (try? pinStore.isDefault()) ?? false
        post(.status(screen))
    }

    // MARK: Thread

    public func start() {
        let thread = Thread { [self] in
            loop()
            finished.signal()
        }
        thread.name = "kioskcam.ui"
        self.thread = thread
        thread.start()
    }

    /// Stops the loop, waits for it, and releases the devices (the LED goes dark).
    public func stop() {
        guard thread != nil else { return }
        inboxLock.withLock { stopRequested = true }
        wake()
        finished.wait()
        thread = nil
    }

    private func post(_ message: Message) {
        inboxLock.withLock { inbox.append(message) }
        wake()
    }

    private func wake() {
        var one: UInt8 = 1
        _ = write(wakeWriteFD, &one, 1)   // a full pipe already means "wake up"
    }

    private func loop() {
        draw()
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
        if let buttons { try? buttons.setLED(false) }
        touch?.close()
        buttons = nil
        touch = nil
    }

    private func nextDeadline(now: MonotonicInstant) -> MonotonicInstant {
        var deadlines: [MonotonicInstant] = [now.advanced(byNanoseconds: 1_000_000_000)]
        if let d = buttons?.nextDeadline(after: now) { deadlines.append(d) }
        if let d = touch?.nextDeadline { deadlines.append(d) }
        if let d = controller?.nextDeadline { deadlines.append(d) }
        if let d = buttonRetryAt { deadlines.append(d) }
        if let d = nextTouchRescan { deadlines.append(d) }
        if renderer != nil, controller?.model.page == .live { deadlines.append(nextPreview) }
        return deadlines.min()!
    }

    private func waitForInput(until deadline: MonotonicInstant) {
        var fds = [pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
        for fd in buttons?.fileDescriptors ?? [] { fds.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0)) }
        for fd in touch?.pollDescriptors ?? [] { fds.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0)) }
        let milliseconds = max(0, Int32((deadline.nanoseconds(since: clock.now()) + 999_999) / 1_000_000))
        let ready = poll(&fds, nfds_t(fds.count), milliseconds)
        guard ready > 0 else { return }
        for entry in fds where entry.revents != 0 {
            if entry.fd == wakeFD {
                var drain = [UInt8](repeating: 0, count: 64)
                while read(wakeFD, &drain, drain.count) > 0 {}
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

    // MARK: Events

    private func handle(_ message: Message, now: MonotonicInstant) {
        switch message {
        case .recordingState(let state):
            recordingState = state
            apply(controller?.recordingChanged(state))
            showLED(now: now)
        case .status(let status):
            apply(controller?.update(status: status))
        case .pinChecked(let result):
            if case .wrong = result {
                logger.notice("a wrong PIN was entered on the screen")
                appliance.publish(.pinRejected)
            }
            apply(controller?.pinChecked(result, now: now))
        case .failure:
            errorShownUntil = now.advanced(byNanoseconds: 10_000_000_000)
            showLED(now: now)
        case .lockNow:
            apply(controller?.lockNow(now: now))
        case .commandDone:
            commandInFlight = nil
            // A start that failed never changes state: tell the screen, so its record
            // button does not wait out its fallback.
            recordingState = appliance.recordingState
            apply(controller?.recordingChanged(recordingState))
            showLED(now: now)
        }
    }

    /// What is recording, counting a command sent and not yet answered as starting or
    /// stopping: a second press meanwhile is dropped, not queued.
    private var activity: RecordingActivity {
        let current = appliance.activity
        guard let commandInFlight else { return current }
        return RecordingActivity(kind: current.kind ?? .video, state: commandInFlight)
    }

    private func handle(_ event: ButtonEvent) {
        appliance.publish(.button(event.description))
        logger.info("\(event)")
        switch ButtonGate.decide(event.action, activity: activity) {
        case .ignored(let reason):
            logger.info("button \(event.button): \(reason)")
        case .run(let command):
            run(command)
        }
    }

    /// Sends a command to the appliance off this thread (a start may purge the library
    /// first); the answer comes back through the inbox.
    private func run(_ command: ButtonCommand) {
        let appliance = appliance
        let logger = logger
        switch command {
        case .record(let request):
            switch RecordingArbiter.decide(request, activity: activity) {
            case .start: commandInFlight = .starting
            case .stop: commandInFlight = .stopping
            case .refuse(let refusal):
                logger.info("\(request): \(refusal.message)")
                return
            }
            commandQueue.async { [weak self] in
                defer { self?.post(.commandDone) }
                do {
                    try appliance.record(request)
                } catch {
                    logger.error("\(command) failed: \(error)")
                    appliance.publish(.failure("\(command): \(error)"))
                }
            }
        case .takeSnapshot:
            // Answered by the encoder thread with the next frame (or at once without a
            // camera picture): nothing waits here or on the command queue.
            appliance.takeSnapshot { result in
                if case .failure(let error) = result {
                    logger.error("\(command) failed: \(error)")
                    appliance.publish(.failure("\(command): \(error)"))
                }
            }
        }
    }

    private func handle(_ event: TouchEvent) {
        appliance.publish(.touch(event))
        let effects = controller?.touch(event)
        apply(effects)
        // The ≤ 16 ms promise for a key, measured where it matters: from the kernel's timestamp of the
        // release to the new picture in the framebuffer (the redraw runs first in `apply`).
        if event.phase == .release, effects?.contains(.redraw) == true {
            let milliseconds = Double(clock.now().nanoseconds(since: event.time)) / 1e6
            logger.info("touch release at \(event.point) drawn \(String(format: "%.1f", milliseconds)) ms after the kernel event")
        }
    }

    private func timers(now: MonotonicInstant) {
        if let buttons {
            do {
                for event in try buttons.tick(now: now) { handle(event) }
            } catch {
                buttonFailure("\(error)")
            }
        } else if let retry = buttonRetryAt, now >= retry {
            openButtons(now: now)
        }
        for event in touch?.expire(now: now) ?? [] { handle(event) }
        if let touch, touch.needsPeriodicRescan {
            if nextTouchRescan.map({ now >= $0 }) ?? true {
                nextTouchRescan = now.advanced(byNanoseconds: 5_000_000_000)
                for notice in touch.rescan() { logger.notice("\(notice)") }
            }
        }
        apply(controller?.tick(now: now))
        showLED(now: now)
        if let renderer, controller?.model.page == .live, now >= nextPreview {
            nextPreview = now.advanced(byNanoseconds: previewInterval)
            if let frame = appliance.graph.preview.takeNewFrame() {
                let updated = (try? renderer.updatePreview(frame)) != nil
                frame.buffer.doneReading()
                if updated { draw() }
            }
        }
    }

    /// Runs the screen logic's effects; drawing first, so the screen answers at once.
    private func apply(_ effects: [ScreenEffect]?) {
        guard let effects, !effects.isEmpty else { return }
        // Blanking changes the page too: draw it, so the panel's memory (and a screenshot)
        // is black even where the driver cannot switch the panel off.
        let changesPanel = effects.contains { if case .setPanelBlank = $0 { true } else { false } }
        if effects.contains(.redraw) || changesPanel { draw() }
        for effect in effects {
            switch effect {
            case .redraw: break
            case .startRecording: run(.record(.start(.video)))
            case .stopRecording: run(.record(.stop))
            case .takeSnapshot: run(.takeSnapshot)
            case .setPanelBlank(let blank): _ = renderer?.framebuffer.setBlanked(blank)
            case .verifyPIN(let pin):
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
            }
        }
        if let page = controller?.model.page, page != lastPage {
            lastPage = page
            logger.info("screen: \(page.rawValue)")
            appliance.publish(.screen(page))
        }
    }

    private func draw() {
        guard let renderer, let controller else { return }
        _ = renderer.render(controller.model)
    }

    private func showLED(now: MonotonicInstant) {
        guard let buttons else { return }
        let error = errorShownUntil.map { now < $0 } ?? false
        do {
            try buttons.showStatus(recordingState, error: error, now: now)
        } catch {
            buttonFailure("\(error)")
        }
    }

    // MARK: Devices

    private func openButtons(now: MonotonicInstant) {
        buttonRetryAt = nil
        do {
            buttons = try ButtonPanel.open(configuration.buttons, now: now)
            if let buttons {
                logger.notice("buttons: \(buttons.summary)")
                lastButtonError = nil
            }
        } catch {
            buttonFailure("\(error)")
        }
    }

    /// Logs a GPIO failure once per distinct message and retries in 30 s.
    private func buttonFailure(_ message: String) {
        if message != lastButtonError { logger.error("buttons: \(message); retrying every 30 s") }
        lastButtonError = message
        buttons = nil
        buttonRetryAt = clock.now().advanced(byNanoseconds: 30_000_000_000)
    }

    private func openTouch(screen: ScreenSize) {
        let panel = TouchPanel(settings: configuration.touch, screen: screen, screenRotation: configuration.screen.rotation)
        let logger = logger
        panel.onNotice = { notice in logger.notice("\(notice)") }
        for notice in panel.start() { logger.notice("\(notice)") }
        touch = panel
    }
}
