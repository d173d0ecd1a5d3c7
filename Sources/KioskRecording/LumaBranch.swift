import Foundation
import KioskCore

/// The low-resolution luma branch: a few times a second, the newest frame's luma
/// downscaled to about 320 pixels wide, on a thread of its own, for motion detection.
/// Capture hands it frames by reference and never waits: while the thread is busy with
/// one frame, newer frames replace the waiting one and the replaced ones are counted.
public final class LumaBranch: CaptureBranch, @unchecked Sendable {
    public let framesPerSecond: Int
    public let targetWidth: Int
    private let minimumInterval: Int64
    private let lock = Lock()
    // Guarded by `lock`.
    private var waiting: VideoFrame?
    private var lastTaken: MonotonicInstant?
    private var skipped = 0
    private var made = 0
    private var subscribers: [@Sendable (LumaFrame) -> Void] = []
    private var thread: RepeatingThread?

    /// - Parameters:
    ///   - framesPerSecond: Luma frames made per second at most (5–10 is plenty for motion).
    ///   - targetWidth: Their width (the height follows the camera's aspect).
    public init(framesPerSecond: Int = 8, targetWidth: Int = 320) {
        self.framesPerSecond = max(1, framesPerSecond)
        self.targetWidth = targetWidth
        minimumInterval = 1_000_000_000 / Int64(self.framesPerSecond)
        thread = RepeatingThread(name: "kioskcam.luma", interval: 1) { [weak self] _ in self?.work() }
    }

    /// Gets every luma frame, on the branch's thread (it must return quickly). The branch
    /// does no work until someone subscribes.
    public func subscribe(_ receiver: @escaping @Sendable (LumaFrame) -> Void) {
        lock.withLock { subscribers.append(receiver) }
        thread?.start()
    }

    /// Stops the thread (blocking).
    public func stop() { thread?.stop() }

    /// The camera stopped: a frame not yet made small is let go (it may hold a driver's buffer).
    public func videoEnded(_ name: String, _ end: SourceEnd) {
        lock.withLock { waiting = nil }
    }

    public func take(_ frame: VideoFrame) {
        let wake = lock.withLock { () -> Bool in
            guard !subscribers.isEmpty else { return false }
            if let lastTaken, frame.timestamp.nanoseconds(since: lastTaken) < minimumInterval { return false }
            lastTaken = frame.timestamp
            if waiting != nil { skipped += 1 }
            waiting = frame
            return true
        }
        if wake { thread?.wake() }
    }

    private func work() {
        guard let (frame, receivers) = lock.withLock({ () -> (VideoFrame, [@Sendable (LumaFrame) -> Void])? in
            guard let frame = waiting else { return nil }
            waiting = nil
            return (frame, subscribers)
        }) else { return }
        let downscaled = LumaDownscaler.downscale(frame.buffer.bytes, format: frame.format, targetWidth: targetWidth,
                                                  time: frame.timestamp)
        frame.buffer.doneReading()
        guard let luma = downscaled else { return }
        lock.withLock { made += 1 }
        for receiver in receivers { receiver(luma) }
    }

    /// Luma frames made, and frames replaced while the thread was busy.
    public var counters: (made: Int, skipped: Int) { lock.withLock { (made, skipped) } }
}
