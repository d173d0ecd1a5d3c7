import Foundation
import Glibc
import KioskCore

/// The helper process's side of a camera run in a process of its own
/// (`kioskcam-camera`): it serves one opened camera over the channel on its
/// standard input. Each frame is copied into the first free shared slot (none free: it
/// is dropped and counted, as the camera's own pool does) and announced; the daemon
/// sends the slot back when the graph has let go of it. The first free slot is always
/// taken, so a daemon that keeps up touches only the first few slots' memory.
public final class CameraHelperService: CaptureSink, Sendable {
    private let camera: VideoSource
    private let channel: CameraHelperChannel
    private let slots: SharedFrameSlots
    private let opened: CameraHelperOpened
    private let slotDescriptor: Int32
    private let answer: @Sendable (Data) -> Data
    private struct State {
        var busy: [Bool]
        var sent = 0
        var dropped = 0
        var ended = false
    }
    private let state: Locked<State>

    /// - Parameters:
    ///   - details: Camera-specific facts for the daemon (libcamera's controls).
    ///   - answer: Answers a camera-specific call (controls, focus).
    public init(camera: VideoSource, channel: CameraHelperChannel, slotCount: Int = 8, details: Data = Data(),
                answer: @escaping @Sendable (Data) -> Data = { _ in Data() }) throws(CameraHelperError) {
        let (slots, descriptor) = try SharedFrameSlots.create(slotBytes: camera.format.frameByteCount, slotCount: slotCount)
        self.camera = camera
        self.channel = channel
        self.slots = slots
        slotDescriptor = descriptor
        self.answer = answer
        opened = CameraHelperOpened(name: camera.name, format: camera.format, slotBytes: slots.slotBytes,
                                    slotCount: slotCount, details: details)
        state = Locked(State(busy: Array(repeating: false, count: slotCount)))
    }

    /// Says the camera is open, then serves until the daemon stops the camera, the
    /// camera ends, or the daemon is gone.
    /// - Returns: The exit status: 0, or 1 when the daemon could not be told.
    public func serve() -> Int32 {
        let told = channel.send(.opened(opened), passing: slotDescriptor)
        close(slotDescriptor)
        guard told else { return 1 }
        while !state.withLock({ $0.ended }) {
            let received: (CameraHelperMessage, Int32?)?
            do {
                received = try channel.receive(timeout: 0.5)
            } catch {
                camera.stop()   // the daemon is gone
                return 0
            }
            guard let (message, attached) = received else { continue }
            if let attached { close(attached) }
            switch message {
            case .start:
                do {
                    try camera.start(into: self)
                } catch {
                    end(.failed("camera failed: \(error)"))
                }
            case .stop:
                camera.stop()
                end(.stopped)
            case .release(let slot):
                state.withLock { state in
                    if state.busy.indices.contains(slot) { state.busy[slot] = false }
                }
            case .call(let id, let payload):
                channel.send(.answer(id: id, payload: answer(payload)))
            case .opened, .openFailed, .frame, .counters, .answer, .ended:
                break
            }
        }
        return 0
    }

    /// Tells the daemon the camera ended, once.
    private func end(_ end: SourceEnd) {
        let first = state.withLock { state -> Bool in
            defer { state.ended = true }
            return !state.ended
        }
        if first { channel.send(.ended(end)) }
    }

    // MARK: CaptureSink (the camera's thread)

    public func deliver(_ frame: VideoFrame) {
        let bytes = frame.buffer.bytes
        // One lock per frame: the slot, and the counts the message carries.
        let (taken, sent, dropped) = state.withLock { state -> (Int?, Int, Int) in
            guard bytes.count <= slots.slotBytes, bytes.baseAddress != nil, let free = state.busy.firstIndex(of: false) else {
                state.dropped += 1
                return (nil, state.sent, state.dropped)
            }
            state.busy[free] = true
            state.sent += 1
            return (free, state.sent, state.dropped)
        }
        guard let taken, let slot = slots.slot(taken), let source = bytes.baseAddress else {
            channel.send(.counters(counters(sent: sent, dropped: dropped)))
            return
        }
        slot.copyMemory(from: source, byteCount: bytes.count)
        frame.buffer.doneReading()
        channel.send(.frame(CameraHelperFrame(slot: taken, byteCount: bytes.count, timestampNanoseconds: frame.timestamp.nanoseconds,
                                              sequence: frame.sequence, counters: counters(sent: sent, dropped: dropped))))
    }

    /// The camera's counters (or, for one that keeps none, the frames sent), plus the
    /// frames dropped here for want of a free slot.
    private func counters(sent: Int, dropped: Int) -> CameraFrameCounters {
        var counters = (camera as? FrameCounting)?.frameCounters
            ?? CameraFrameCounters(delivered: sent, leased: 0, copied: sent, dropped: 0, corrupt: 0)
        counters.dropped += dropped
        return counters
    }

    public func deliver(_ chunk: AudioChunk) {}

    public func videoSourceEnded(_ name: String, _ end: SourceEnd) { self.end(end) }

    public func audioSourceEnded(_ name: String, _ end: SourceEnd) {}
}
