import Foundation
import KioskControl
import KioskCore
import KioskPIN
import KioskRecording
import KioskUpload
import KioskWeb

/// Running totals for the metrics file, counted from the appliance's events.
final class MetricsCounters: Sendable {
    private let appliance: Appliance
    private let mqtt: MQTTBridge?
    private let uploader: Uploader?
    private struct Totals {
        var bytesFinished: Int64 = 0
        var segments = 0
        var recordings = 0
        var pinFailures = 0
    }
    private let totals = Locked(Totals())

    private let rtsp: RTSPServer?

    init(appliance: Appliance, mqtt: MQTTBridge?, uploader: Uploader?, rtsp: RTSPServer?) {
        self.appliance = appliance
        self.rtsp = rtsp
        self.mqtt = mqtt
        self.uploader = uploader
        appliance.onEvent { [weak self] event in
            guard let self else { return }
            switch event {
            case .fileFinished(_, _, let bytes):
                totals.withLock { $0.bytesFinished += bytes; $0.segments += 1 }
            case .recordingState(.recording):
                totals.withLock { $0.recordings += 1 }
            case .pinRejected:
                totals.withLock { $0.pinFailures += 1 }
            default:
                break
            }
        }
    }

    func snapshot(pinStore: PinStore, control: ControlServer?, deviceID: String, version: String) -> MetricsSnapshot {
        let status = appliance.status
        var snapshot = MetricsSnapshot()
        snapshot.state = status.recorder.state
        let (finished, segmentCount, recordingCount) = totals.withLock { ($0.bytesFinished, $0.segments, $0.recordings) }
        snapshot.bytesWrittenTotal = finished + (status.recorder.state == .idle ? 0 : status.recorder.bytesWritten)
        snapshot.segmentsTotal = segmentCount
        snapshot.recordingsTotal = recordingCount
        snapshot.droppedFramesTotal = status.recorder.droppedVideoFrames
        snapshot.droppedAudioChunksTotal = status.recorder.droppedAudioChunks
        snapshot.freeBytes = status.freeBytes
        snapshot.totalBytes = status.totalBytes
        snapshot.cameraUp = status.cameraRunning
        snapshot.cameraFrames = status.cameraFrames
        snapshot.microphoneUp = status.microphoneState == "running"
        snapshot.audioXrunsTotal = status.microphoneOverruns
        let pin = try? pinStore.status()
        // A counter since the daemon started: the store's own count resets on a right PIN.
        snapshot.pinFailuresTotal = totals.withLock { $0.pinFailures }
        snapshot.defaultPIN = pin?.isDefault ?? false
        snapshot.controlClients = control?.clientCount ?? 0
        snapshot.controlEventsDroppedTotal = control?.eventsDroppedTotal ?? 0
        snapshot.quarantinedFiles = status.quarantinedFiles
        if let events = appliance.events?.currentStatus {
            snapshot.eventsToday = events.eventsToday
            snapshot.motionScorePercent = events.motionScore
            snapshot.eventRecording = events.recording
        }
        if let mqtt = mqtt?.status {
            snapshot.mqttConnected = mqtt.connected
            snapshot.mqttQueuedMessages = mqtt.queued
            snapshot.mqttDroppedMessagesTotal = mqtt.dropped
            snapshot.mqttReconnectsTotal = mqtt.reconnects
            snapshot.mqttCommandsIgnoredTotal = mqtt.commandsIgnored
        }
        snapshot.upload = uploader?.figures
        if let stream = appliance.stream?.status {
            snapshot.stream = StreamFigures(live: stream.state == .live, bytesSent: stream.bytesSent,
                                            reconnects: max(0, stream.connects - 1), droppedGOPs: stream.droppedGOPs)
        }
        if let rtsp, let rtp = appliance.graph.rtp {
            let figures = rtp.figures
            snapshot.rtsp = RTSPFigures(clients: rtsp.clients.count, droppedGOPs: figures.droppedGOPs, refused: rtsp.refusedClients)
        }
        snapshot.uptimeSeconds = Date().timeIntervalSince(status.startedAt)
        snapshot.deviceID = deviceID
        snapshot.version = version
        return snapshot
    }
}
