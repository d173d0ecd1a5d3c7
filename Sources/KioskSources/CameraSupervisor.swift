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
public final class CameraSupervisor: VideoSource, CaptureSink, @unchecked Sendable {
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
    public var format: VideoFormat { lock.withLock { currentFormat } }
    private let open: @Sendable () throws -> VideoSource
    private let retryInterval: Double
    private let onHealthChange: @Sendable (Health) -> Void
    private let lock = Lock()
    private var camera: VideoSource?
    private var sink: CaptureSink?
    private var currentHealth = Health.starting
    private var currentFormat: VideoFormat
    private var failedCamera: VideoSource?
    private var stopping = false
    private let watcher = SourceThread()

    /// - Parameters:
    ///   - camera: The opened camera to start with.
    ///   - open: Reopens the camera after a loss (throws while it is still gone).
    ///   - onHealthChange: Called on every change, from a capture or the supervisor thread.
    public init(camera: VideoSource, retryInterval: Double = 2,
                open: @escaping @Sendable () throws -> VideoSource,
                onHealthChange: @escaping @Sendable (Health) -> Void) {
        name = camera.name
        currentFormat = camera.format
        self.camera = camera
        self.open = open
        self.retryInterval = retryInterval
        self.onHealthChange = onHealthChange
    }

    public var health: Health { lock.withLock { currentHealth } }

    /// The camera now open (nil while lost): its controls, for run-time changes.
    public var current: VideoSource? { lock.withLock { camera } }

    public func start(into sink: CaptureSink) throws {
        let camera = lock.withLock { () -> VideoSource? in
            self.sink = sink
            stopping = false
            return self.camera
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
        let (current, failed) = lock.withLock { () -> (VideoSource?, VideoSource?) in
            stopping = true
            defer { failedCamera = nil }
            return (camera, failedCamera)
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
    private var hasRunningCamera: Bool { lock.withLock { camera != nil } }

    /// Closes the dead camera (its thread has ended) and tries a fresh one.
    private func reopen() {
        let dead = lock.withLock { () -> VideoSource? in
            defer { failedCamera = nil }
            return failedCamera
        }
        dead?.stop()
        do {
            let fresh = try open()
            let sink = lock.withLock { () -> CaptureSink? in
                guard !stopping else { return nil }
                camera = fresh
                currentFormat = fresh.format
                return self.sink
            }
            guard sink != nil else { fresh.stop(); return }
            try fresh.start(into: self)
        } catch {
            lock.withLock { camera = nil }
            // Still gone: keep the original "lost since" time and try again later.
        }
    }

    private func setHealth(_ health: Health) {
        let changed = lock.withLock { () -> Bool in
            guard currentHealth != health else { return false }
            if case .lost = currentHealth, case .lost = health { return false }
            currentHealth = health
            return true
        }
        if changed { onHealthChange(health) }
    }

    // MARK: CaptureSink (the camera's thread)

    public func deliver(_ frame: VideoFrame) {
        if case .running = health {} else { setHealth(.running) }
        let sink = lock.withLock { self.sink }
        sink?.deliver(frame)
    }

    public func deliver(_ chunk: AudioChunk) {
        lock.withLock { sink }?.deliver(chunk)
    }

    public func videoSourceEnded(_ name: String, _ end: SourceEnd) {
        switch end {
        case .failed(let reason):
            lock.withLock {
                failedCamera = camera
                camera = nil
            }
            setHealth(.lost(since: Date(), reason: reason))
        case .endOfInput:
            lock.withLock { sink }?.videoSourceEnded(name, end)
        case .stopped:
            break
        }
    }

    public func audioSourceEnded(_ name: String, _ end: SourceEnd) {
        lock.withLock { sink }?.audioSourceEnded(name, end)
    }
}
