import Foundation
import KioskCore
import KioskRecording

/// The one owner of "what is recording": the video recorder and the sound-only recorder,
/// started and stopped only here, by `RecordingArbiter`'s rule (one recording at a time).
///
/// The socket, the buttons, the touch screen and camera-loss recovery all come through
/// `perform`, which decides and acts under one lock: two requests from two places can
/// never both see "idle" and start two recordings. Recorders only ever move towards idle
/// on their own (a finished duration, a full disk, a writer failure), so an activity
/// read under the lock can only be more conservative than the truth.
final class RecordingOwner: Sendable {
    let video: RecordingOutput
    /// nil without a microphone.
    let audio: RecordingOutput?
    /// Guards no state of its own (the recorders keep theirs): it makes deciding and
    /// acting one step.
    private let decisions = Lock()

    init(video: RecordingOutput, audio: RecordingOutput?) {
        self.video = video
        self.audio = audio
    }

    /// What is recording now.
    var activity: RecordingActivity {
        let videoState = video.state
        if videoState != .idle { return RecordingActivity(kind: .video, state: videoState) }
        if let audioState = audio?.state, audioState != .idle { return RecordingActivity(kind: .audio, state: audioState) }
        return .idle
    }

    /// The output of the recording that runs (the video one when idle).
    var current: RecordingOutput { activity.kind == .audio ? (audio ?? video) : video }

    /// Decides `request` against what is recording and carries it out, atomically.
    /// - Parameters:
    ///   - maximumSeconds: For a start: end by itself after this much recorded time.
    ///   - beforeVideoStart: Checks that a video recording can start (a camera that
    ///     delivers frames); runs under the lock, so it must be quick.
    /// - Returns: What was done.
    /// - Throws: `ApplianceError` with the arbiter's refusal ("already recording: a
    ///   sound-only recording is running …") or the recorder's reason (disk full).
    @discardableResult
    func perform(_ request: RecordingRequest, maximumSeconds: Double? = nil,
                 beforeVideoStart: () throws(ApplianceError) -> Void = {}) throws(ApplianceError) -> RecordingDecision {
        try decisions.withLock { () throws(ApplianceError) -> RecordingDecision in
            let decision = RecordingArbiter.decide(request, activity: activity)
            do {
                switch decision {
                case .refuse(let refusal):
                    throw ApplianceError(refusal.message)
                case .start(.video):
                    try beforeVideoStart()
                    try video.start(maximumSeconds: maximumSeconds)
                case .start(.audio):
                    guard let audio else {
                        throw ApplianceError("there is no microphone, so there is nothing to record sound from; set [microphone] source")
                    }
                    try audio.start(maximumSeconds: maximumSeconds)
                case .stop(let kind):
                    try (kind == .audio ? audio ?? video : video).stop(.now)
                }
            } catch let error as ApplianceError {
                throw error
            } catch let error as RecorderError {
                throw ApplianceError(error.description)
            } catch {
                throw ApplianceError("\(error)")
            }
            return decision
        }
    }

    /// Both recorders' states read under the decision lock: nobody can start one
    /// meanwhile, so this is a consistent view of the one-recording rule (tests).
    func statesUnderDecisionLock() -> (video: RecordingState, audio: RecordingState?) {
        decisions.withLock { (video.state, audio?.state) }
    }

    /// Waits until nothing records (or `timeout` seconds pass). Blocking.
    /// - Returns: Whether everything is idle.
    func waitUntilIdle(timeout: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while Date() < deadline {
            if activity.state == .idle { return true }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return activity.state == .idle
    }
}
