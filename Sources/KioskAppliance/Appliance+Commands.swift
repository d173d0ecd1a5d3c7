import Foundation
import KioskCore
import KioskRecording
import KioskSources
import KioskALSA
import Logging

// What the appliance does when asked — record, adjust the camera, take stills, report
// status — and its upkeep (the camera's supervision, twice a second), from any thread
// but the concurrency pool and the UI loop. What it is made of is in Appliance.swift.

extension Appliance {
    // MARK: Commands (any thread but the concurrency pool and the UI loop)

    /// Starts, stops or toggles a recording, by the one rule for all callers (one
    /// recording at a time; see `RecordingArbiter`).
    /// - Parameter maximumSeconds: For a start: end by itself after this much recorded time.
    /// - Returns: What was done.
    /// - Throws: `ApplianceError` naming why not: something else records, nothing does,
    ///   no microphone, a camera that delivers no frames, a full disk.
    @discardableResult
    public func record(_ request: RecordingRequest, maximumSeconds: Double? = nil) throws(ApplianceError) -> RecordingDecision {
        let decision = try owner.perform(request, maximumSeconds: maximumSeconds) { () throws(ApplianceError) in
            if case .lost = (camera as? CameraSupervisor)?.health {
                throw ApplianceError("the camera is not delivering frames (\(cameraState)); check its cable, or kioskcam probe")
            }
        }
        switch decision {
        case .start(.video): state.withLock { $0.userWantsRecording = true; $0.resumeAfterCameraLoss = false }
        case .stop: state.withLock { $0.userWantsRecording = false; $0.resumeAfterCameraLoss = false }
        case .start(.audio), .refuse: break
        }
        return decision
    }

    /// What is recording now.
    public var activity: RecordingActivity { owner.activity }

    /// Changes camera settings now (zoom, focus, exposure, white balance, brightness,
    /// contrast, torch): the camera's own controls where it has them — zoom glides —
    /// else digital zoom. Remembered across a camera reconnect.
    /// - Returns: One report per setting: what is set, or why not.
    public func adjustCamera(_ adjustment: CameraAdjustment) -> [CameraSettingReport] {
        cameraAdjuster.apply(adjustment)
    }

    /// Every camera setting's value, range and how it is applied (camera or digital).
    public var cameraSettings: [String: JSONValue] { cameraAdjuster.current() }

    /// The files the last recording of `kind` finished (after a stop, say).
    public func finishedFiles(of kind: RecordingKind) -> [String] {
        (kind == .audio ? owner.audio ?? owner.video : owner.video).status.finishedFiles
    }

    /// The state of whichever recording runs (video or sound only).
    public var recordingState: RecordingState { owner.activity.state }

    /// Waits until nothing records, up to `timeout` seconds. Blocking.
    /// - Returns: Whether everything is idle.
    public func waitUntilIdle(timeout: Double) -> Bool { owner.waitUntilIdle(timeout: timeout) }

    /// Saves the next frame as a JPEG. Without a camera picture (no camera, capture not
    /// running, camera lost) it fails at once instead of waiting.
    /// - Parameters:
    ///   - timeout: Seconds to wait for the next frame.
    ///   - completion: Called once, on the encoder thread or the caller's.
    public func takeSnapshot(timeout: Double = 5, _ completion: @escaping @Sendable (Result<String, ApplianceError>) -> Void) {
        if let problem = stillProblem {
            completion(.failure(ApplianceError(problem)))
            return
        }
        graph.stills.request(timeout: timeout) { result in
            completion(result.mapError { ApplianceError($0.description) })
        }
    }

    /// Takes a still and waits for it. Blocking.
    /// - Throws: `ApplianceError` when there is no camera picture, too many stills wait,
    ///   or no frame comes within `timeout` seconds.
    public func takeSnapshot(timeout: Double = 5) throws(ApplianceError) -> String {
        let answer = Locked<Result<String, ApplianceError>?>(nil)
        takeSnapshot(timeout: timeout) { result in
            answer.withLock { $0 = result }
            answer.wakeWaiters()
        }
        // The recorder answers by its deadline; the extra seconds only cover a stuck encoder.
        guard let result = answer.withLock(waitingUntil: { $0 != nil }, deadline: Date(timeIntervalSinceNow: timeout + 5), { $0 }) else {
            throw ApplianceError("no frame arrived from the camera within \(Int(timeout)) s; check the camera (kioskcam probe)")
        }
        return try result.get()
    }

    /// The next camera frame as JPEG bytes, not saved in the library (the web app's
    /// `snapshot.jpg`). Blocking.
    /// - Throws: `ApplianceError` when there is no camera picture or no frame comes in time.
    public func currentPictureJPEG(timeout: Double = 5) throws(ApplianceError) -> [UInt8] {
        if let problem = stillProblem { throw ApplianceError(problem) }
        let answer = Locked<Result<[UInt8], ApplianceError>?>(nil)
        graph.stills.requestJPEG(timeout: timeout) { result in
            answer.withLock { $0 = result.mapError { ApplianceError($0.description) } }
            answer.wakeWaiters()
        }
        guard let result = answer.withLock(waitingUntil: { $0 != nil }, deadline: Date(timeIntervalSinceNow: timeout + 5), { $0 }) else {
            throw ApplianceError("no frame arrived from the camera within \(Int(timeout)) s; check the camera (kioskcam probe)")
        }
        return try result.get()
    }

    /// Why a still cannot be taken now, or nil.
    private var stillProblem: String? {
        guard camera != nil else { return "there is no camera, so there is no picture to take; set [camera] source" }
        guard state.withLock({ $0.sourcesRunning }) else { return "the camera has not started yet (see the log); try again in a moment" }
        if let supervisor = camera as? CameraSupervisor, supervisor.health != .running {
            return "no picture from the camera (\(supervisor.health)); check its cable, or kioskcam probe"
        }
        return nil
    }

    // MARK: Upkeep (the upkeep service calls this twice a second)

    /// Follows the camera's health: a lost camera finishes the recording (kept), and
    /// recording resumes when it is back if the user had not stopped it.
    public func superviseCamera() {
        let health = cameraState
        let changed = state.withLock { state -> Bool in
            defer { state.lastCameraState = health }
            return health != state.lastCameraState
        }
        if changed { publish(.cameraHealth(health)) }
        guard let supervisor = camera as? CameraSupervisor else { return }
        switch supervisor.health {
        case .lost:
            let videoRecording = owner.activity == RecordingActivity(kind: .video, state: .recording)
            let mustStop = state.withLock { state -> Bool in
                guard state.userWantsRecording, videoRecording else { return false }
                state.resumeAfterCameraLoss = true
                return true
            }
            if mustStop {
                logger.error("\(supervisor.health); the recording so far is kept, and recording resumes when the camera is back")
                // Through the owner, but keeping the wish to record: this stop is not the user's.
                _ = try? owner.perform(.stop)
            }
        case .running:
            let resume = state.withLock { $0.resumeAfterCameraLoss } && owner.activity.state == .idle
            if resume {
                state.withLock { $0.resumeAfterCameraLoss = false }
                logger.notice("camera is back: recording again")
                do { try owner.perform(.start(.video)) } catch { logger.error("could not resume recording: \(error)") }
            }
        case .starting:
            break
        }
    }

    public var cameraState: String {
        guard let camera else { return "none" }
        if let supervisor = camera as? CameraSupervisor { return supervisor.health.description }
        return state.withLock { $0.sourcesRunning } ? "running" : "stopped"
    }

    public var status: ApplianceStatus {
        let activity = owner.activity
        let recorderStatus = graph.status(of: activity.kind == .audio ? owner.audio ?? owner.video : owner.video)
        let space = try? LibraryScanner.freeSpace(of: configuration.storage.mediaRoot)
        let (taken, last) = state.withLock { ($0.snapshotsTaken, $0.lastSnapshot) }
        let alsa = microphone as? ALSAMicrophone
        let cameraRunning: Bool
        if let supervisor = camera as? CameraSupervisor {
            cameraRunning = supervisor.health == .running
        } else {
            cameraRunning = camera != nil && state.withLock { $0.sourcesRunning }
        }
        return ApplianceStatus(
            recorder: recorderStatus,
            cameraName: camera?.name ?? "none",
            cameraState: cameraState,
            cameraRunning: cameraRunning,
            microphoneName: microphone?.name ?? "none",
            microphoneState: microphone == nil ? "none" : (state.withLock { $0.sourcesRunning } ? "running" : "stopped"),
            microphoneOverruns: alsa?.overruns ?? 0,
            freeBytes: space?.free,
            totalBytes: space?.total,
            startedAt: startedAt,
            snapshotsTaken: taken,
            lastSnapshot: last,
            usingBuiltInSources: usingBuiltInSources,
            activity: activity,
            quarantinedFiles: LibraryFiles(layout: LibraryLayout(root: configuration.storage.mediaRoot)).quarantinedFileCount(),
            cameraFrames: (((camera as? CameraSupervisor)?.current ?? camera) as? FrameCounting)?.frameCounters
        )
    }

    /// Finishes the recording (trailer written, file moved into the library), stops the
    /// encoder threads and the storage guard. Call after `stopSources()`. Blocking.
    public func finishRecording(timeout: Double = 30) {
        if recordingState != .idle { logger.notice("finishing the recording before exit") }
        events?.stop()
        graph.shutdown(timeout: timeout)
        storage.stop()
    }
}
