import Foundation
import Glibc
import KioskCore

/// A camera run in a helper process, as a `VideoSource`: `kioskcam-camera` opens
/// the camera there and hands its frames over through shared memory, each lent to the
/// graph in place (`MediaBuffer`) and given back when the graph lets go.
///
/// Why a process: libcamera 0.0.3 aborts the process that runs its camera manager when a
/// camera module comes back after a removal ("duplicated ID"). Here that ends only the
/// helper; its stream ends `.failed`, and `CameraSupervisor` opens a fresh helper (a
/// fresh camera manager, which sees the camera anew). A helper that stops answering —
/// no message for `noFrameTimeout` + 10 s while streaming — is killed the same way.
public final class HelperCamera: VideoSource, FrameCounting, Sendable {
    public let name: String
    public let format: VideoFormat
    /// What the helper said of the camera beyond its format (the camera kind's own words).
    public let details: Data
    public var pid: Int32 { child.pid }

    private let child: ChildProcess
    private let channel: CameraHelperChannel
    private let slots: SharedFrameSlots
    private let silenceLimit: Double
    private struct State {
        var sink: CaptureSink?
        var started = false
        var stopAsked = false
        var ended = false
        var counters = CameraFrameCounters.zero
        var answers: [Int: Data] = [:]
        var nextCall = 1
    }
    private let state = Locked(State())
    private let reader = ThreadGroup()

    /// Starts the helper and waits until it has opened the camera.
    /// - Parameters:
    ///   - program: The helper's program (kioskcam itself) and its arguments.
    ///   - openTimeout: Seconds the helper may take to open the camera.
    ///   - noFrameTimeout: The camera's own no-frame timeout (the helper ends its stream
    ///     after it); the helper is killed when silent for 10 s longer.
    /// - Throws: `CameraHelperError` with the helper's own words when it could not open
    ///   the camera, or why the helper did not start or answer.
    public init(program: String, arguments: [String], openTimeout: Double = 60, noFrameTimeout: Double = 5) throws(CameraHelperError) {
        let (ours, theirs) = try CameraHelperChannel.pair()
        let process: ChildProcess
        do {
            process = try ChildProcess(program: program, arguments: arguments, input: theirs.descriptor)
        } catch {
            throw CameraHelperError(error.description)
        }
        _ = consume theirs   // the helper has its end; ours sees EOF when the helper is gone
        silenceLimit = max(noFrameTimeout, 1) + 10
        let deadline = Date(timeIntervalSinceNow: openTimeout)
        var opened: (CameraHelperOpened, Int32)?
        var failure: String?
        while opened == nil, failure == nil {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { failure = "the camera helper did not open the camera within \(Int(openTimeout)) s"; break }
            do {
                guard let (message, attached) = try ours.receive(timeout: min(remaining, 1)) else { continue }
                switch message {
                case .opened(let description):
                    if let attached { opened = (description, attached) } else { failure = "the camera helper sent no frame memory" }
                case .openFailed(let why):
                    failure = why
                    if let attached { close(attached) }
                default:
                    if let attached { close(attached) }
                }
            } catch {
                failure = "the camera helper ended before it opened the camera (\(Self.describe(process)))"
            }
        }
        guard let (description, descriptor) = opened else {
            Self.end(process)
            throw CameraHelperError(failure ?? "the camera helper did not open the camera")
        }
        defer { close(descriptor) }
        guard let format = description.format else {
            Self.end(process)
            throw CameraHelperError("the camera helper sent a format no camera has (\(description.width)x\(description.height) at \(description.framesPerSecond) fps)")
        }
        do {
            slots = try SharedFrameSlots(descriptor: descriptor, slotBytes: description.slotBytes, slotCount: description.slotCount)
        } catch {
            Self.end(process)
            throw error
        }
        guard description.slotBytes >= format.frameByteCount else {
            Self.end(process)
            throw CameraHelperError("the camera helper's frame slots (\(description.slotBytes) bytes) are smaller than a \(format) frame")
        }
        child = process
        channel = ours
        name = description.name
        self.format = format
        details = description.details
        reader.start(name: "kioskcam.camera.helper") { [self] in read() }
    }

    // The reading thread holds the camera until the helper has ended, so by now it has.
    deinit { Self.end(child) }

    public var frameCounters: CameraFrameCounters { state.withLock { $0.counters } }

    public func start(into sink: CaptureSink) throws {
        try state.withLock { (state: inout State) throws(CameraHelperError) in
            guard !state.started else { throw CameraHelperError("\(name) is already streaming") }
            guard !state.ended else { throw CameraHelperError("\(name)'s helper has ended; open the camera again") }
            state.started = true
            state.sink = sink
        }
        guard channel.send(.start) else { throw CameraHelperError("\(name)'s helper has ended (\(Self.describe(child)))") }
    }

    /// Stops the camera and waits until its helper has said so (or is killed after 10 s).
    /// Called from the sink's callback on the reading thread, it only asks.
    public func stop() {
        let (started, asked) = state.withLock { state -> (Bool, Bool) in
            defer { state.stopAsked = true }
            return (state.started && !state.ended, state.stopAsked)
        }
        if !asked { channel.send(.stop) }
        guard started, !reader.includesCurrentThread else { return }
        let ended = state.withLock(waitingUntil: { $0.ended }, deadline: Date(timeIntervalSinceNow: 10)) { $0.ended }
        if !ended { child.signal(SIGKILL) }
        reader.wait()
    }

    /// A camera-specific call (controls, focus) and its answer; nil when the helper does
    /// not answer within `timeout` seconds or has ended.
    public func call(_ payload: Data, timeout: Double = 5) -> Data? {
        let id = state.withLock { state -> Int in
            defer { state.nextCall += 1 }
            return state.nextCall
        }
        guard channel.send(.call(id: id, payload: payload)) else { return nil }
        return state.withLock(waitingUntil: { $0.answers[id] != nil || $0.ended },
                              deadline: Date(timeIntervalSinceNow: timeout)) { $0.answers.removeValue(forKey: id) }
    }

    // MARK: The reading thread

    private func read() {
        var lastHeard = Date()
        var end: SourceEnd?
        while end == nil {
            let received: (CameraHelperMessage, Int32?)?
            do {
                received = try channel.receive(timeout: 1)
            } catch {
                end = helperGone()
                break
            }
            guard let (message, attached) = received else {
                let streaming = state.withLock { $0.started && !$0.stopAsked }
                if streaming, -lastHeard.timeIntervalSinceNow > silenceLimit {
                    child.signal(SIGKILL)
                    end = .failed("camera lost: \(name)'s helper sent nothing for \(Int(silenceLimit)) s and was stopped; kioskcam opens the camera again")
                }
                continue
            }
            lastHeard = Date()
            if let attached { close(attached) }
            switch message {
            case .frame(let frame): deliver(frame)
            case .counters(let counters): state.withLock { $0.counters = counters }
            case .answer(let id, let payload):
                state.withLock { $0.answers[id] = payload }
                state.wakeWaiters()
            case .ended(let why): end = why
            case .opened, .openFailed, .start, .stop, .release, .call: break
            }
        }
        let (sink, stopAsked) = state.withLock { state -> (CaptureSink?, Bool) in
            state.ended = true
            return (state.started ? state.sink : nil, state.stopAsked)
        }
        // Asked to stop, a helper that had to be killed still ended as asked.
        if stopAsked, case .failed? = end { end = .stopped }
        state.wakeWaiters()
        if let end { sink?.videoSourceEnded(name, end) }
        _ = child.wait(timeout: 5)
    }

    /// Lends slot `frame.slot` to the graph; its release sends the slot back.
    private func deliver(_ frame: CameraHelperFrame) {
        guard frame.byteCount >= 0, frame.byteCount <= slots.slotBytes, let memory = slots.slot(frame.slot) else {
            channel.send(.release(slot: frame.slot))
            state.withLock { $0.counters.corrupt += 1 }
            return
        }
        let sink = state.withLock { state -> CaptureSink? in
            state.counters = frame.counters
            return state.stopAsked ? nil : state.sink
        }
        let buffer = MediaBuffer(wrapping: memory, byteCount: frame.byteCount) { [channel, slots, slot = frame.slot] in
            _ = slots   // the mapping stays until the last frame in it is let go
            channel.send(.release(slot: slot))
        }
        guard let sink else { return }
        sink.deliver(VideoFrame(buffer: buffer, format: format, timestamp: MonotonicInstant(nanoseconds: frame.timestampNanoseconds),
                                sequence: frame.sequence))
    }

    /// How the helper ended, when it went without saying so.
    private func helperGone() -> SourceEnd {
        _ = child.wait(timeout: 2)
        return .failed("camera failed: \(name)'s helper process ended (\(Self.describe(child))); kioskcam opens the camera again")
    }

    static func describe(_ child: ChildProcess) -> String {
        child.ending + (child.terminatingSignal == SIGABRT ? ": it aborted, as libcamera does when a camera comes back" : "")
    }

    /// Ends a helper that is no longer wanted: closes nothing (the channel goes with the
    /// camera), asks it to stop, then kills it if it lingers.
    private static func end(_ child: ChildProcess) {
        guard child.isRunning else { return }
        child.signal(SIGTERM)
        if !child.wait(timeout: 3) {
            child.signal(SIGKILL)
            _ = child.wait(timeout: 3)
        }
    }
}
