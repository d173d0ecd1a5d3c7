import Foundation
import KioskControl
import KioskCore
import KioskPIN
import KioskRecording
import KioskUpload
import Logging
import ServiceLifecycle

/// Answers the control socket from the running appliance.
struct ApplianceControlHandler: ControlHandler {
    let appliance: Appliance
    let interaction: InteractionLoop?
    let pinStore: PinStore
    let deviceID: String?
    let version: String
    let mqtt: MQTTBridge?
    let uploader: Uploader?
    let broadcast: BroadcastLink
    let web: WebFactsBox

    func handle(_ request: ControlRequest) -> ControlOutcome {
        switch request {
        case .status:
            return .encoding(statusReport())
        case .recordStart(let audioOnly, let duration):
            do {
                try appliance.record(.start(audioOnly ? .audio : .video), maximumSeconds: duration)
                let activity = appliance.activity
                return .success(["state": .string(activity.state.rawValue), "kind": .string((activity.kind ?? .video).rawValue)])
            } catch {
                return .failure(ControlError(.failed, "\(error)"))
            }
        case .recordStop:
            do {
                guard case .stop(let kind) = try appliance.record(.stop) else {
                    return .failure(ControlError(.failed, "not recording: there is nothing to stop"))
                }
                // Answer once the file is in the library (the client waits up to 30 s).
                let finished = appliance.waitUntilIdle(timeout: 25)
                let files = appliance.finishedFiles(of: kind)
                return .success(["state": .string(appliance.recordingState.rawValue), "kind": .string(kind.rawValue),
                                 "finished": .bool(finished), "files": .array(files.map(JSONValue.string))])
            } catch {
                return .failure(ControlError(.failed, "\(error)"))
            }
        case .snapshot:
            do {
                return .success(["path": .string(try appliance.takeSnapshot())])
            } catch {
                return .failure(ControlError(.failed, "\(error)"))
            }
        case .list(let date):
            let listing = LibraryListing(layout: LibraryLayout(root: appliance.configuration.storage.mediaRoot))
            let days = date.map { [$0] } ?? listing.days()
            return .encoding(["recordings": days.flatMap { listing.recordings(on: $0) }])
        case .purge(let dryRun):
            return purge(dryRun: dryRun)
        case .pinSet(let pin):
            do {
                try pinStore.setPIN(pin)
                appliance.logger.notice("the PIN was changed through the control socket")
                return .success(["changed": .bool(true)])
            } catch {
                return .failure(ControlError(.badArgument, "\(error)"))
            }
        case .screenshot:
            guard let screen = interaction?.screen else {
                return .failure(ControlError(.unavailable, "this daemon has no screen"))
            }
            do {
                let png = try screen.screenshotPNG()
                return .success(["png_base64": .string(Data(png).base64EncodedString()),
                                 "width": .integer(Int64(screen.size.width)), "height": .integer(Int64(screen.size.height))])
            } catch {
                return .failure(ControlError(.failed, "\(error)"))
            }
        case .cameraSet(let adjustment):
            let reports = appliance.adjustCamera(adjustment)
            if reports.contains(where: { $0.name == .zoom && $0.applied != nil }) { interaction?.zoomChangedElsewhere() }
            var result: [String: JSONValue] = [:]
            for report in reports {
                var entry: [String: JSONValue] = [:]
                if let applied = report.applied { entry["applied"] = .string(applied) }
                if let message = report.message { entry["message"] = .string(message) }
                result[report.name.rawValue] = .object(entry)
            }
            guard reports.contains(where: { $0.applied != nil }) else {
                return .failure(ControlError(.failed, reports.map(\.line).joined(separator: "; ")))
            }
            return .success(result)
        case .cameraGet:
            return .success(appliance.cameraSettings)
        case .subscribe:
            return .failure(ControlError(.unavailable, "subscribe is handled by the server"))
        case .eventStart, .eventStop:
            return manualEventTrigger(on: request == .eventStart)
        case .uploadStatus:
            guard let uploader else { return .failure(Self.uploadsOff) }
            return .success(Self.uploadStatus(uploader))
        case .uploadNow:
            guard let uploader else { return .failure(Self.uploadsOff) }
            uploader.uploadNow()
            return .success(["queued_files": .integer(Int64(uploader.figures.queuedFiles))])
        case .broadcastStart(let destinations, let duration, let size):
            do {
                let pid = try broadcast.start(destinations: destinations, duration: duration,
                                              size: size ?? appliance.configuration.broadcast.size)
                return .success(["pid": .integer(Int64(pid)), "source": .string("screen"),
                                 "memory_capped": .bool(broadcast.cap.directory != nil)])
            } catch {
                return .failure(ControlError(.failed, error.message))
            }
        case .broadcastStop:
            guard broadcast.stop() else {
                return .failure(ControlError(.failed, "no broadcast is running: there is nothing to stop"))
            }
            return .success(["state": .string(BroadcastStatus.State.stopped.rawValue)])
        case .clipExport(let export):
            return exportClip(export)
        }
    }

    func statusReport() -> StatusReport {
        let status = appliance.status
        var report = StatusReport(state: status.recorder.state)
        report.kind = status.activity.kind?.rawValue
        report.currentFile = status.recorder.currentFile
        report.bytesWritten = status.recorder.bytesWritten
        report.secondsRecorded = status.recorder.secondsWritten
        report.segment = status.recorder.segmentIndex
        report.droppedFrames = status.recorder.droppedVideoFrames
        report.droppedAudioChunks = status.recorder.droppedAudioChunks
        report.freeBytes = status.freeBytes
        report.camera = "\(status.cameraName): \(status.cameraState)"
        report.cameraFrames = status.cameraFrames
        report.microphone = "\(status.microphoneName): \(status.microphoneState)"
            + (status.microphoneOverruns > 0 ? ", \(status.microphoneOverruns) overruns" : "")
        report.deviceID = deviceID
        report.uptimeSeconds = Date().timeIntervalSince(status.startedAt)
        let pin = try? pinStore.status()
        report.defaultPIN = pin?.isDefault
        report.pinFailures = pin?.failures
        report.levelsRMSDBFS = status.recorder.audioLevels?.rmsDBFS
        report.levelsPeakDBFS = status.recorder.audioLevels?.peakHoldDBFS
        report.lastError = status.recorder.lastError
        report.quarantinedFiles = status.quarantinedFiles
        if let events = appliance.events?.currentStatus {
            report.eventsMode = appliance.configuration.events.mode.rawValue
            report.eventsToday = events.eventsToday
            report.lastEvent = events.lastEvent
            report.motionScore = (events.motionScore * 100).rounded() / 100
            report.eventRecording = events.recording
            if let ring = appliance.preEventBuffer {
                report.preEventBytes = ring.bytes
                report.preEventSeconds = (ring.seconds * 100).rounded() / 100
                report.preEventLimitBytes = ring.limit
            }
        }
        report.mqtt = mqtt?.status.line
        report.overlay = appliance.graph.encoder.overlay?.text.template
        if let privacy = appliance.graph.privacy {
            report.privacyMaskedPercent = privacy.maskedPercent
            report.privacyDroppedFrames = privacy.counters.dropped
        }
        if let timelapse = appliance.graph.timelapse {
            let status = timelapse.output.status
            report.timelapseFile = status.path
            report.timelapseFrames = status.path == nil ? nil : Int(clamping: status.frames)
            report.timelapseError = status.failure
        }
        if let stream = appliance.stream?.status {
            report.streamState = stream.state.rawValue
            report.streamDestination = stream.destination
            report.streamBytes = stream.bytesSent
            report.streamReconnects = max(0, stream.connects - 1)
            report.streamDroppedGOPs = stream.droppedGOPs
            report.streamLastError = stream.lastError
        }
        if let figures = uploader?.figures {
            report.uploadQueuedFiles = figures.queuedFiles
            report.uploadQueuedBytes = figures.queuedBytes
            report.uploadedFiles = figures.uploadedFiles
            report.uploadLastError = figures.lastError
            report.uploadLastSuccess = figures.lastSuccess
        }
        broadcast.fill(&report)
        web.fill(&report)
        report.version = version
        return report
    }

    private func purge(dryRun: Bool) -> ControlOutcome {
        let configuration = appliance.configuration
        let purger = LibraryStorage.purger(configuration, logger: appliance.logger)
        do {
            let plan = try purger.plan(today: CalendarDate(LocalTimestamp(Date())), bitrate: LibraryStorage.bitrate(configuration))
            var deletions: [JSONValue] = []
            for deletion in plan.deletions {
                let reason: String
                switch deletion.reason {
                case .age(let days): reason = "\(days) days old"
                case .space: reason = "free space below the floor"
                }
                var entry: [String: JSONValue] = ["folder": .string("\(deletion.kind.rawValue)/\(deletion.date.folderName)"),
                                                  "bytes": .integer(deletion.bytes), "reason": .string(reason),
                                                  "share": .string(deletion.share.rawValue)]
                if !deletion.isWholeFolder { entry["files"] = .array(deletion.files.map { .string($0) }) }
                deletions.append(.object(entry))
            }
            var result: [String: JSONValue] = ["dry_run": .bool(dryRun), "deletions": .array(deletions),
                                               "left_alone": .array(plan.reports.map { .string("\($0.relativePath) (\($0.reason))") })]
            if !plan.heldForUpload.isEmpty { result["kept_for_upload"] = .array(plan.heldForUpload.map { .string($0) }) }
            if !plan.unuploadedFiles.isEmpty { result["deleted_before_upload"] = .array(plan.unuploadedFiles.map { .string($0) }) }
            if !plan.eventLogs.isEmpty { result["event_logs"] = .array(plan.eventLogs.map { .string("events/\($0.folderName).jsonl") }) }
            if !dryRun, !plan.deletions.isEmpty || !plan.eventLogs.isEmpty {
                let applied = purger.apply(plan)
                result["freed_bytes"] = .integer(applied.freedBytes)
                result["failures"] = .array(applied.failures.map { .string("\($0.kind.rawValue)/\($0.date.folderName): \($0.message)") })
            }
            return .success(result)
        } catch {
            return .failure(ControlError(.failed, "\(error)"))
        }
    }
}

/// The control socket as a service: opened after the devices, closed first on shutdown
/// (the socket file is removed, so clients see "not running" at once).
struct ControlService: Service {
    let server: ControlServer

    func run() async throws {
        try? await gracefulShutdown()
        await onBackgroundThread("kioskcam.control-stop") { [server] in server.stop() }
    }
}

/// Buttons, touch and the screen as a service.
struct InteractionService: Service {
    let loop: InteractionLoop

    func run() async throws {
        loop.start()
        try? await gracefulShutdown()
        await onBackgroundThread("kioskcam.ui-stop") { [loop] in loop.stop() }
    }
}

extension ControlEvent {
    /// The control socket's view of an appliance event; nil for events it does not stream.
    init?(_ event: ApplianceEvent) {
        switch event {
        case .recordingState(let state):
            self.init(.state, ["state": .string(state.rawValue)])
        case .fileFinished(let path, let seconds, let bytes):
            self.init(.state, ["file_finished": .string(path), "seconds": .number(seconds), "bytes": .integer(bytes)])
        case .snapshotSaved(let path):
            self.init(.state, ["snapshot": .string(path)])
        case .cameraHealth(let health):
            self.init(.state, ["camera": .string(health)])
        case .failure(let message):
            self.init(.state, ["error": .string(message)])
        case .button(let text):
            self.init(.button, ["event": .string(text)])
        case .touch(let touch):
            self.init(.touch, ["phase": .string(touch.phase.rawValue), "x": .integer(Int64(touch.point.x)),
                               "y": .integer(Int64(touch.point.y)), "slot": .integer(Int64(touch.slot))])
        case .screen(let page):
            self.init(.state, ["screen": .string(page.rawValue)])
        case .notice(let text):
            self.init(.state, ["notice": .string(text)])
        case .pinRejected:
            self.init(.state, ["pin": .string("rejected")])
        case .event(let message):
            self = ControlEvent.event(message)
        }
    }
}

extension ApplianceControlHandler {
    /// `event.start` / `event.stop`: the manual trigger of event clips.
    func manualEventTrigger(on: Bool) -> ControlOutcome {
        guard let events = appliance.events else {
            return .failure(ControlError(.unavailable, "event clips are off: set events.mode = \"events\" or \"both\" in [events] and restart kioskcam"))
        }
        var result: [String: JSONValue] = ["trigger": .string(on ? "on" : "off")]
        if let id = events.manualTrigger(on: on) { result["event"] = .string(id) }
        return .success(result)
    }
}

extension ApplianceControlHandler {
    static let uploadsOff = ControlError(.unavailable, "uploads are off: set [upload] url (and access_key_id, secret_access_key_file) and restart kioskcam")

    /// `upload.status`: the figures and the first files waiting.
    static func uploadStatus(_ uploader: Uploader) -> [String: JSONValue] {
        let figures = uploader.figures
        let queue = uploader.queue
        var result: [String: JSONValue] = [
            "queued_files": .integer(Int64(figures.queuedFiles)), "queued_bytes": .integer(figures.queuedBytes),
            "uploaded_files": .integer(Int64(figures.uploadedFiles)), "uploaded_bytes": .integer(figures.uploadedBytes),
            "failures": .integer(Int64(figures.failures)), "vanished_files": .integer(Int64(figures.vanishedFiles)),
            "destination": .string(uploader.settings.upload.url), "endpoint": .string(uploader.settings.upload.effectiveEndpoint),
        ]
        if let error = figures.lastError { result["last_error"] = .string(error) }
        if let success = figures.lastSuccess { result["last_success"] = .string(success) }
        if let current = figures.current {
            result["current"] = .string(current)
            result["current_bytes_sent"] = .integer(figures.currentBytesSent)
        }
        result["waiting"] = .array(queue.entries.prefix(20).map { entry in
            .object(["file": .string(entry.file.relativePath), "bytes": .integer(entry.bytes),
                     "attempts": .integer(Int64(entry.attempts)), "not_before": .integer(entry.notBefore)])
        })
        return result
    }
}
