import CV4L2
import Foundation
import Glibc
import KioskCore
import KioskWakeUp
import KioskMedia
import SystemPackage

/// A V4L2 camera (`/dev/videoN`) as a `VideoSource`: the real sibling of the test-pattern
/// camera. Opening negotiates size, rate and pixel format (`negotiation` says why);
/// `start` streams through mmap buffers on a thread of its own.
///
/// A frame whose layout is the driver's buffer byte for byte is handed on in that buffer
/// (leased) and requeued when the graph lets go of it. MJPEG, padded rows, a flagged
/// frame, or one that would leave fewer than `buffersKeptQueued` buffers with the driver
/// is copied into a pooled `MediaBuffer` (MJPEG then decoded to YU12) and its buffer
/// requeued at once, so a slow consumer never starves the camera. Timestamps are the
/// driver's (CLOCK_MONOTONIC) when it stamps monotonically, else the time the frame was
/// dequeued.
///
/// The stream ends with `.failed` when no frame arrives for `noFrameTimeout` seconds
/// ("camera lost: no frame for 5 s") or the device goes away ("camera unplugged (ENODEV)").
public final class V4L2Camera: VideoSource, FrameCounting, Sendable {
    /// The open device (also reachable for `probe`-style questions).
    public let device: V4L2Device
    /// What frames will be delivered: the negotiated raw layout, or YU12 for MJPEG.
    public let format: VideoFormat
    /// Why this format: the negotiation's reason plus what the driver adjusted — for logs.
    public let negotiation: String
    /// The negotiated choice (fourcc, size, rate) before the driver had its say.
    public let choice: CameraFormatChoice
    /// The format the driver set, with its row stride and buffer size.
    public let deviceFormat: V4L2PixelFormat
    /// Seconds without a frame before the camera counts as lost.
    public let noFrameTimeout: Double
    /// Zoom, focus, exposure, white balance, brightness, contrast — where the device has them.
    public let controls: CameraControls
    public var name: String { device.path }

    /// Used by the capture thread only.
    private let converter: CapturedFrameConverter
    private let decodesJPEG: Bool
    private let clock = CaptureClock()
    /// Wakes the capture thread from `poll`: `stop()`, or a lent buffer coming back.
    private let wakeUp: WakeUpEvent
    private struct State {
        var running = false
        var stopRequested = false
        var counters = CameraFrameCounters.zero
    }
    private let state = Locked(State())
    /// The capture thread; `stop()` waits for it (it has reported the end by then).
    private let streaming = ThreadGroup()

    /// Frames handed to the sink.
    public var framesDelivered: Int { state.withLock { $0.counters.delivered } }
    /// Frames dropped because every pooled buffer was still queued for the encoder.
    public var droppedNoBuffer: Int { state.withLock { $0.counters.dropped } }
    /// Frames dropped because they were broken: an undecodable JPEG, a frame the driver
    /// flagged as erroneous, or one shorter than its format needs.
    public var corruptFrames: Int { state.withLock { $0.counters.corrupt } }
    /// Frames handed on in the driver's own buffer (no copy), and frames copied out of it
    /// (MJPEG, padded rows, or too few buffers left with the driver).
    public var framesLeased: Int { state.withLock { $0.counters.leased } }
    public var framesCopied: Int { state.withLock { $0.counters.copied } }

    /// All the counters at one instant, for status and metrics (V4L2 cameras take the
    /// rate they are asked for: nothing is paced out).
    public var frameCounters: CameraFrameCounters {
        state.withLock { $0.counters }
    }

    /// Opens the camera and sets it up for `request`, preferring `request.pixelFormat`
    /// among equally good formats (see `CameraFormatNegotiation`).
    /// - Throws: `V4L2Error` — see `init(path:request:noFrameTimeout:bufferCount:)`.
    public convenience init(path: String, request: VideoFormat, noFrameTimeout: Double = 5, bufferCount: Int = 12) throws(V4L2Error) {
        try self.init(path: path, request: CameraFormatRequest(request), noFrameTimeout: noFrameTimeout, bufferCount: bufferCount)
    }

    /// Opens the camera, checks it captures with streaming I/O, negotiates, and sets the
    /// format and frame rate (reading back what the driver chose).
    /// - Parameters:
    ///   - path: The device node, e.g. "/dev/video0".
    ///   - request: Size, rate and (optionally) preferred fourcc.
    ///   - noFrameTimeout: Seconds without a frame before the stream counts as lost.
    ///   - bufferCount: Pooled frames that may be in flight (queue + encoder) at once.
    /// - Throws: `V4L2Error`: `.noSuchDevice`, `.permissionDenied`, `.busy`,
    ///   `.notAVideoDevice`, `.notACaptureDevice`, `.noUsableFormat` (listing what the
    ///   camera offers), `.unplugged`, or `.system`.
    public init(path: String, request: CameraFormatRequest, noFrameTimeout: Double = 5, bufferCount: Int = 12) throws(V4L2Error) {
        let device = try V4L2Device(path: path)
        try device.requireStreamingCapture()
        let offers = try device.formatOffers(for: request.size, sizesOf: { CameraDelivery(fourcc: $0) != nil })
        let choice: CameraFormatChoice
        do {
            choice = try CameraFormatNegotiation.choose(from: offers, for: request)
        } catch {
            throw V4L2Error(.noUsableFormat, path: path, operation: "choose a format", detail: error.description,
                            hint: "see every format with `kioskcam probe` or `v4l2-ctl -d \(path) --list-formats-ext`")
        }
        let set = try device.setFormat(fourcc: choice.fourcc, size: choice.size)
        guard let delivery = CameraDelivery(fourcc: set.fourcc) else {
            throw V4L2Error(.noUsableFormat, path: path, operation: "VIDIOC_S_FMT",
                            detail: "asked for \(choice.size) \(choice.fourcc), the driver set \(set.fourcc), which kioskcam cannot record",
                            hint: "see every format with `kioskcam probe` or `v4l2-ctl -d \(path) --list-formats-ext`")
        }
        guard set.size.width > 0, set.size.height > 0 else {
            throw V4L2Error(.noUsableFormat, path: path, operation: "VIDIOC_S_FMT", detail: "the driver set an empty size \(set.size)")
        }
        let rate = try device.setFrameRate(choice.frameRate)
        var notes: [String] = []
        if set.fourcc != choice.fourcc || set.size != choice.size { notes.append("the driver set \(set.size) \(set.fourcc) instead") }
        if case .raw(let layout) = delivery, set.bytesPerLine > FramePacking(format: layout, size: set.size, bytesPerLine: 0).planes[0].rowBytes {
            notes.append("rows padded to \(set.bytesPerLine) bytes (removed)")
        }
        if let rate {
            if rate != choice.frameRate { notes.append("the driver runs at \(rate) fps") }
        } else {
            notes.append("the driver does not let the frame rate be set")
        }
        let framesPerSecond = (rate ?? choice.frameRate).roundedFramesPerSecond
        self.device = device
        self.choice = choice
        deviceFormat = set
        format = VideoFormat(size: set.size, pixelFormat: delivery.pixelFormat, framesPerSecond: framesPerSecond)
        negotiation = choice.reason + (notes.isEmpty ? "" : "; " + notes.joined(separator: "; "))
        self.noFrameTimeout = noFrameTimeout > 0 ? noFrameTimeout : 5
        decodesJPEG = delivery == .mjpeg
        do {
            converter = try CapturedFrameConverter(delivery: delivery, size: set.size, bytesPerLine: set.bytesPerLine,
                                                   maximumFrameBytes: set.sizeImage, bufferCount: bufferCount)
        } catch {
            throw V4L2Error(.system, path: path, operation: "open MJPEG decoder", detail: error.description)
        }
        controls = CameraControls(device: device)
        do {
            wakeUp = try WakeUpEvent()
        } catch {
            throw V4L2Error(path: path, operation: "eventfd", errno: error)
        }
    }

    deinit {
        stop()
    }

    // MARK: Streaming

    /// Driver buffers requested; the driver may grant more. Frames are handed on in these
    /// buffers while the graph holds them, so a few more than streaming alone needs.
    static let driverBufferCount = 6
    /// Buffers always left with the driver to fill: below this a frame is copied out and
    /// its buffer given back at once, so a slow consumer never starves the camera.
    static let buffersKeptQueued = 2

    /// Requests and maps the driver's buffers, queues them, starts streaming, and starts
    /// the capture thread delivering to `sink`.
    /// - Throws: `V4L2Error`: `.busy` (another process streams, or already started),
    ///   `.unplugged`, or `.system` (e.g. out of memory for buffers).
    public func start(into sink: CaptureSink) throws(V4L2Error) {
        try state.withLock { (state: inout State) throws(V4L2Error) in
            guard !state.running else {
                throw V4L2Error(.busy, path: device.path, operation: "start", detail: "this camera is already streaming")
            }
            state.running = true
            state.stopRequested = false
        }
        let buffers: MappedBuffers
        do {
            buffers = try MappedBuffers(device: device, count: Self.driverBufferCount, wakeUp: wakeUp)
            for index in buffers.regions.indices { try device.queueBuffer(index) }
            try device.setStreaming(true)
        } catch {
            // MappedBuffers unmaps and frees what it got when it goes out of scope.
            state.withLock { $0.running = false }
            throw error
        }
        wakeUp.drain()
        streaming.start(name: "kioskcam.camera.v4l2") { [self] in
            let end = capture(buffers, into: sink)
            try? device.setStreaming(false)
            buffers.release()
            state.withLock { $0.running = false }
            // Before leaving, so that `stop()` returns only after the sink heard the end.
            sink.videoSourceEnded(name, end)
        }
    }

    /// Stops streaming (STREAMOFF, buffers unmapped and freed) and waits for the capture
    /// thread, which reports `.stopped` to the sink. Does nothing when not streaming;
    /// called from the sink's callback on the capture thread, it only asks.
    public func stop() {
        state.withLock { $0.stopRequested = true }
        wakeUp.signal()
        // Returns at once when nothing streams.
        if !streaming.includesCurrentThread { streaming.wait() }
    }

    /// The capture loop; returns why it ended.
    private func capture(_ buffers: MappedBuffers, into sink: CaptureSink) -> SourceEnd {
        let timeoutNanoseconds = Int64(noFrameTimeout * 1e9)
        var lastFrame = clock.now()
        var brokenSinceLastFrame = 0
        var fds = [pollfd(fd: device.descriptor.rawValue, events: Int16(POLLIN), revents: 0), wakeUp.pollDescriptor]
        while true {
            if state.withLock({ $0.stopRequested }) { return .stopped }
            // Buffers the graph let go of go back to the driver here, on this thread.
            for index in buffers.takeReturned() {
                do { try device.queueBuffer(index) } catch { return Self.end(for: error) }
            }
            let waited = clock.now().nanoseconds(since: lastFrame)
            if waited >= timeoutNanoseconds {
                let broken = brokenSinceLastFrame > 0 ? " (only broken frames arrived)" : ""
                return .failed("camera lost: no frame for \(Self.seconds(noFrameTimeout)) from \(device.path)\(broken); check the cable and `dmesg`")
            }
            let pollMilliseconds = Int32(clamping: (timeoutNanoseconds - waited) / 1_000_000 + 1)
            fds[0].revents = 0
            fds[1].revents = 0
            let ready = poll(&fds, 2, pollMilliseconds)
            if ready < 0 {
                let errno = Errno(rawValue: Glibc.errno)
                if errno == .interrupted { continue }
                return .failed("camera failed: poll: \(errno)")
            }
            if fds[1].revents != 0 {              // stop(), or a buffer let go: both handled at the top
                wakeUp.drain()
                continue
            }
            if ready == 0 { continue }           // timed out: checked at the top
            let revents = Int32(fds[0].revents)
            var gotFrame = false
            var gotUsableFrame = false
            // One buffer per wake-up: POLLIN promises one, and poll returns at once while
            // more are ready. Draining until EAGAIN would make libv4l2 print an error line
            // for every EAGAIN (dozens a second in the journal).
            if revents & Int32(POLLIN) != 0 || revents & Int32(POLLERR) != 0 {
                let result: DequeueResult
                do {
                    result = try device.dequeueBuffer()
                } catch {
                    return Self.end(for: error)
                }
                if case .buffer(let filled) = result {
                    gotFrame = true
                    switch handle(filled, buffers, sink) {
                    case .usable: gotUsableFrame = true
                    case .broken: break
                    case .end(let end): return end
                    }
                }
            }
            // Only usable frames count: a camera sending nothing but broken JPEGs is lost too.
            if gotUsableFrame {
                lastFrame = clock.now()
                brokenSinceLastFrame = 0
            } else if gotFrame {
                brokenSinceLastFrame += 1
            } else if revents & (POLLERR | POLLHUP | POLLNVAL) != 0 {
                // POLLERR without a frame: the queue is empty or the device is going away.
                // Poll would return at once again; pace it and let the no-frame timeout decide.
                if revents & POLLNVAL != 0 { return .failed("camera failed: \(device.path) was closed") }
                usleep(10_000)
            }
        }
    }

    /// What became of one dequeued buffer.
    private enum Handled {
        /// Delivered, or dropped only because the pipeline is behind: the camera works.
        case usable
        /// Flagged, short or undecodable.
        case broken
        /// The buffer could not be given back: the stream is over.
        case end(SourceEnd)
    }

    /// Hands one filled buffer on: by reference when its layout is the frame's (the
    /// driver's buffer goes back when the graph lets go of it), else copied (or decoded)
    /// into the pool and given back at once.
    private func handle(_ filled: v4l2_buffer, _ buffers: MappedBuffers, _ sink: CaptureSink) -> Handled {
        let index = Int(filled.index)
        guard buffers.regions.indices.contains(index) else { return .broken }
        let region = buffers.regions[index]
        let timestamp = clock.timestamp(of: filled)
        // Raw drivers that leave bytesused at 0 mean "all of it"; for JPEG, 0 is an empty frame.
        let used = filled.bytesused > 0 || decodesJPEG ? min(Int(filled.bytesused), region.length) : region.length
        if let packed = converter.packedByteCountWithoutCopy, used >= packed,
           filled.flags & UInt32(V4L2_BUF_FLAG_ERROR) == 0,
           let buffer = buffers.lease(index, byteCount: packed, keepingQueued: Self.buffersKeptQueued) {
            sink.deliver(VideoFrame(buffer: buffer, format: format, timestamp: timestamp, sequence: Int(filled.sequence)))
            state.withLock {
                $0.counters.delivered += 1
                $0.counters.leased += 1
            }
            return .usable
        }
        if !decodesJPEG { state.withLock { $0.counters.copied += 1 } }
        let staged = converter.copyOut(UnsafeRawBufferPointer(start: region.address, count: used),
                                       flaggedError: filled.flags & UInt32(V4L2_BUF_FLAG_ERROR) != 0)
        // The frame is out of the driver's buffer: give it back before any decoding.
        do {
            try device.queueBuffer(index)
        } catch {
            return .end(Self.end(for: error))   // the staged buffer goes back with its last reference
        }
        switch converter.finish(staged) {
        case .success(let buffer):
            sink.deliver(VideoFrame(buffer: buffer, format: format, timestamp: timestamp, sequence: Int(filled.sequence)))
            state.withLock { $0.counters.delivered += 1 }
            return .usable
        case .failure(.noBuffer):
            state.withLock { $0.counters.dropped += 1 }
            return .usable
        case .failure(.corrupt):
            state.withLock { $0.counters.corrupt += 1 }
            return .broken
        }
    }

    /// The sink's words for a failed ioctl.
    static func end(for error: V4L2Error) -> SourceEnd {
        let path = error.subject ?? "the camera"
        switch error.errno.map(Errno.init(rawValue:)) {
        case .operationNotSupportedByDevice?, .noSuchAddressOrDevice?:
            return .failed("camera unplugged (ENODEV): \(path) went away; plug it back in")
        case .ioError?:
            return .failed("camera failed (EIO): \(path) reported an I/O error; replug it and check `dmesg`")
        default:
            return .failed("camera failed: \(error)")
        }
    }

    /// "5 s", "2.5 s".
    package static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }
}

/// CLOCK_MONOTONIC, and V4L2 buffer timestamps on it.
package struct CaptureClock: MonotonicClock {
    package init() {}

    package func now() -> MonotonicInstant {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return MonotonicInstant(nanoseconds: Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec))
    }

    /// The buffer's timestamp when the driver stamps on the monotonic clock (every
    /// modern driver), else now — a wall-clock or unknown stamp would not line up with
    /// the microphone's.
    func timestamp(of buffer: v4l2_buffer) -> MonotonicInstant {
        let kind = buffer.flags & UInt32(V4L2_BUF_FLAG_TIMESTAMP_MASK)
        let seconds = Int64(buffer.timestamp.tv_sec), microseconds = Int64(buffer.timestamp.tv_usec)
        guard let instant = Self.instant(kind: kind, seconds: seconds, microseconds: microseconds, now: now()) else {
            return now()
        }
        return instant
    }

    /// nil unless the stamp is monotonic, non-zero and not in the future.
    static func instant(kind: UInt32, seconds: Int64, microseconds: Int64, now: MonotonicInstant) -> MonotonicInstant? {
        guard kind == UInt32(V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC), seconds > 0 || microseconds > 0 else { return nil }
        let instant = MonotonicInstant(nanoseconds: seconds * 1_000_000_000 + microseconds * 1_000)
        return instant <= now ? instant : nil
    }
}
