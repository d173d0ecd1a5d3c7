import Foundation
import KioskCore

/// Keeps a camera going across unplugs and stalls.
///
/// It stands between a real camera and the pipeline: frames pass straight through;
/// when the camera ends with a failure (unplugged, no frame for N s) the supervisor
/// reports `.lost`, and on its own thread reopens the camera every `retryInterval`
/// seconds until frames flow again. The pipeline never sees the camera "end", so a
/// recording can be finished on loss and started again on return by whoever watches
/// `health` (the daemon or `kioskcam record`).
public final class CameraSupervisor: VideoSource, CaptureSink, Sendable {
    public enum Health: Sendable, Equatable, CustomStringConvertible {
        case starting
        case running
        case lost(since: Date, reason: String)

        public var description: String {
            switch self {
            case .starting: "starting"
            case .running: "running"
            case .lost(let since, let reason): "camera lost since \(LocalTimestamp(since).readable) (\(reason))"
            }
        }
    }

    public let name: String
    /// The current camera's format: a reopened camera may differ, so it is set under the
    /// lock by the supervisor thread and may be read on any thread.
    public var format: VideoFormat { state.withLock { $0.format } }
    private let open: @Sendable () throws -> VideoSource
    private let retryInterval: Double
    private let onHealthChange: @Sendable (Health) -> Void
    private struct State {
        var camera: VideoSource?
        var sink: CaptureSink?
        var health = Health.starting
        var format: VideoFormat
        var failedCamera: VideoSource?
        var stopping = false
    }
    private let state: Locked<State>
    private let watcher = SourceThread()

    /// - Parameters:
    ///   - camera: The opened camera to start with.
    ///   - open: Reopens the camera after a loss (throws while it is still gone).
    ///   - onHealthChange: Called on every change, from a capture or the supervisor thread.
    public init(camera: VideoSource, retryInterval: Double = 2,
                open: @escaping @Sendable () throws -> VideoSource,
                onHealthChange: @escaping @Sendable (Health) -> Void) {
        name = camera.name
        state = Locked(State(camera: camera, format: camera.format))
        self.open = open
        self.retryInterval = retryInterval
        self.onHealthChange = onHealthChange
    }

    public var health: Health { state.withLock { $0.health } }

    /// The camera now open (nil while lost): its controls, for run-time changes.
    public var current: VideoSource? { state.withLock { $0.camera } }

    public func start(into sink: CaptureSink) throws {
        let camera = state.withLock { state -> VideoSource? in
            state.sink = sink
            state.stopping = false
            return state.camera
        }
        try camera?.start(into: self)
        watcher.start(name: "kioskcam.camera.supervisor") { [self] thread in
            while !thread.shouldStop {
                SystemClock.sleep(until: SystemClock().now().advanced(byNanoseconds: Int64(retryInterval * 1e9)))
                guard case .lost = health, !thread.shouldStop, !hasRunningCamera else { continue }
                reopen()
            }
        }
    }

    public func stop() {
        let (current, failed) = state.withLock { state -> (VideoSource?, VideoSource?) in
            state.stopping = true
            defer { state.failedCamera = nil }
            return (state.camera, state.failedCamera)
        }
        watcher.stop()
        current?.stop()
        failed?.stop()
    }

    /// A camera reopened earlier is still running: health stays lost until its first
    /// frame, which a camera may take longer than `retryInterval` to deliver. It is waited
    /// for, never replaced: the one replaced would keep capturing (its thread, device and
    /// buffers) with nothing left to stop it. If it never delivers, it ends by itself
    /// (no frame for N s) and becomes the failed camera. Only the supervisor thread puts
    /// a camera there after `start`, so the answer holds until that thread acts on it.
    private var hasRunningCamera: Bool { state.withLock { $0.camera != nil } }

    /// Closes the dead camera (its thread has ended) and tries a fresh one.
    private func reopen() {
        let dead = state.withLock { state -> VideoSource? in
            defer { state.failedCamera = nil }
            return state.failedCamera
        }
        dead?.stop()
        do {
            let fresh = try open()
            let sink = state.withLock { state -> CaptureSink? in
                guard !state.stopping else { return nil }
                state.camera = fresh
                state.format = fresh.format
                return state.sink
            }
            guard sink != nil else { fresh.stop(); return }
            try fresh.start(into: self)
        } catch {
            state.withLock { $0.camera = nil }
            // Still gone: keep the original "lost since" time and try again later.
        }
    }

    private func setHealth(_ health: Health) {
        let changed = state.withLock { state -> Bool in
            guard state.health != health else { return false }
            if case .lost = state.health, case .lost = health { return false }
            state.health = health
            return true
        }
        if changed { onHealthChange(health) }
    }

    // MARK: CaptureSink (the camera's thread)

    public func deliver(_ frame: VideoFrame) {
        if case .running = health {} else { setHealth(.running) }
        let sink = state.withLock { $0.sink }
        sink?.deliver(frame)
    }

    public func deliver(_ chunk: AudioChunk) {
        state.withLock { $0.sink }?.deliver(chunk)
    }

    public func videoSourceEnded(_ name: String, _ end: SourceEnd) {
        switch end {
        case .failed(let reason):
            state.withLock {
                $0.failedCamera = $0.camera
                $0.camera = nil
            }
            setHealth(.lost(since: Date(), reason: reason))
        case .endOfInput:
            state.withLock { $0.sink }?.videoSourceEnded(name, end)
        case .stopped:
            break
        }
    }

    public func audioSourceEnded(_ name: String, _ end: SourceEnd) {
        state.withLock { $0.sink }?.audioSourceEnded(name, end)
    }
}
