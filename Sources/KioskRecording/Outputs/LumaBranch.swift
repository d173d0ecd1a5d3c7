import Foundation
import KioskCore

/// The low-resolution luma branch: a few times a second, the newest frame's luma
/// downscaled to about 320 pixels wide, on a thread of its own, for motion detection.
/// Capture hands it frames by reference and never waits: while the thread is busy with
/// one frame, newer frames replace the waiting one and the replaced ones are counted.
public final class LumaBranch: CaptureBranch, Sendable {
    public let framesPerSecond: Int
    public let targetWidth: Int
    private let minimumInterval: Int64
    private struct State {
        var waiting: VideoFrame?
        var lastTaken: MonotonicInstant?
        var skipped = 0
        var made = 0
        var subscribers: [@Sendable (LumaFrame) -> Void] = []
    }
    private let state = Locked(State())
    /// Works on the state, not on the branch: the branch may go while the thread runs.
    private let thread: RepeatingThread

    /// - Parameters:
    ///   - framesPerSecond: Luma frames made per second at most (5–10 is plenty for motion).
    ///   - targetWidth: Their width (the height follows the camera's aspect).
    public init(framesPerSecond: Int = 8, targetWidth: Int = 320) {
        self.framesPerSecond = max(1, framesPerSecond)
        self.targetWidth = targetWidth
        minimumInterval = 1_000_000_000 / Int64(self.framesPerSecond)
        thread = RepeatingThread(name: "kioskcam.luma", interval: 1) { [state] _ in
            Self.work(state, targetWidth: targetWidth)
        }
    }

    /// Gets every luma frame, on the branch's thread (it must return quickly). The branch
    /// does no work until someone subscribes.
    public func subscribe(_ receiver: @escaping @Sendable (LumaFrame) -> Void) {
        state.withLock { $0.subscribers.append(receiver) }
        thread.start()
    }

    /// Stops the thread (blocking).
    public func stop() { thread.stop() }

    /// The camera stopped: a frame not yet made small is let go (it may hold a driver's buffer).
    public func videoEnded(_ name: String, _ end: SourceEnd) {
        state.withLock { $0.waiting = nil }
    }

    public func take(_ frame: VideoFrame) {
        let minimumInterval = minimumInterval
        let wake = state.withLock { state -> Bool in
            guard !state.subscribers.isEmpty else { return false }
            if let lastTaken = state.lastTaken, frame.timestamp.nanoseconds(since: lastTaken) < minimumInterval { return false }
            state.lastTaken = frame.timestamp
            if state.waiting != nil { state.skipped += 1 }
            state.waiting = frame
            return true
        }
        if wake { thread.wake() }
    }

    private static func work(_ state: Locked<State>, targetWidth: Int) {
        guard let (frame, receivers) = state.withLock({ state -> (VideoFrame, [@Sendable (LumaFrame) -> Void])? in
            guard let frame = state.waiting else { return nil }
            state.waiting = nil
            return (frame, state.subscribers)
        }) else { return }
        let downscaled = LumaDownscaler.downscale(frame.buffer.bytes, format: frame.format, targetWidth: targetWidth,
                                                  time: frame.timestamp)
        frame.buffer.doneReading()
        guard let luma = downscaled else { return }
        state.withLock { $0.made += 1 }
        for receiver in receivers { receiver(luma) }
    }

    /// Luma frames made, and frames replaced while the thread was busy.
    public var counters: (made: Int, skipped: Int) { state.withLock { ($0.made, $0.skipped) } }
}
