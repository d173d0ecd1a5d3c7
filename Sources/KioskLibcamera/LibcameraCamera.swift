import CLibcamera
import Glibc
import KioskCore
import KioskSources
import KioskV4L2
import KioskWakeUp
import SystemPackage

/// A libcamera camera as a `VideoSource`: a Raspberry Pi camera module (whose ISP,
/// exposure and white balance live in libcamera), or vimc in the HIL guest.
///
/// Opening chooses the stream's format and size by `LibcameraStreamChoice` (the V4L2
/// negotiation's rules over libcamera's names) and configures one VideoRecording stream;
/// libcamera may adjust it, and `format` is what it set. Frames are read in place from
/// libcamera's mapped buffers: a buffer whose bytes already are the frame is handed on by
/// reference and its request queued again when the graph lets go of it; otherwise (row
/// padding, separate planes, or too few buffers left with the camera) it is copied into a
/// pool and given back at once. Both are counted.
///
/// The stream ends with `.failed` when libcamera reports the camera disconnected
/// ("camera unplugged") or no frame arrives for `noFrameTimeout` seconds — as a V4L2
/// camera's, so `CameraSupervisor` reopens it the same way.
///
/// Over 400 lines as one thing: the camera owns libcamera's requests and buffers from
/// configure to release, and the zero-copy lending, the copy pool and the controls all
/// act on those same requests; the choice of stream and controls is pure
/// (`LibcameraStreamChoice`, `LibcameraControlPlan`).
public final class LibcameraCamera: VideoSource, FrameCounting, LibcameraControlling, Sendable {
    public let id: String
    public let model: String
    public let format: VideoFormat
    /// Why this format: the choice's reason plus what libcamera adjusted — for logs.
    public let negotiation: String
    public let noFrameTimeout: Double
    public var name: String { "libcamera \(id)" }

    private let handle: LibcameraHandle
    private let converter: CapturedFrameConverter
    /// Asked for through FrameDurationLimits where the camera has that control.
    private let frameDurationMicroseconds: Int64
    private let clock = CaptureClock()
    private let wakeUp: WakeUpEvent
    private struct State {
        var running = false
        var stopRequested = false
        /// Buffers lent to the graph, and those it let go of since the capture thread last looked.
        var lent = 0
        var returned: [Int] = []
        var streaming = false
        var counters = CameraFrameCounters.zero
        /// Set at start when the camera cannot be told the rate (no FrameDurationLimits).
        var pacer: FramePacer?
    }
    private let state = Locked(State())
    private let streaming = ThreadGroup()
    private let bufferCount: Int


    /// Frames handed to the sink; of those, handed on in libcamera's buffer / copied.
    public var framesDelivered: Int { state.withLock { $0.counters.delivered } }
    public var framesLeased: Int { state.withLock { $0.counters.leased } }
    public var framesCopied: Int { state.withLock { $0.counters.copied } }
    /// Frames dropped because every pooled buffer was still on its way to the encoder.
    public var droppedNoBuffer: Int { state.withLock { $0.counters.dropped } }
    /// Frames libcamera flagged as failed, or shorter than their format.
    public var corruptFrames: Int { state.withLock { $0.counters.corrupt } }
    /// Frames left out because the camera ran faster than `format.framesPerSecond` and
    /// could not be told the rate (no FrameDurationLimits control).
    public var framesPaced: Int { state.withLock { $0.counters.paced } }

    /// The camera's controls and their limits, by libcamera name (for `camera.get`).
    public var controlLimits: [String: LibcameraControlLimits] {
        var limits: [String: LibcameraControlLimits] = [:]
        for control in handle.controls {
            limits[control.name] = LibcameraControlLimits(minimum: control.minimum, maximum: control.maximum,
                                                          defaultValue: control.defaultValue)
        }
        return limits
    }

    /// All the counters at one instant, for status and metrics.
    public var frameCounters: CameraFrameCounters {
        state.withLock { $0.counters }
    }

    /// Buffers always left with the camera: below this a frame is copied out and its
    /// request queued again at once, so a slow consumer never starves the camera.
    static let buffersKeptQueued = 2
    /// How long a failed stream waits for libcamera to report the camera gone before it
    /// is stopped (or, not reported, left running: see `klc_camera_end_failed`).
    static let disconnectWaitMilliseconds: Int32 = 3000

    /// Opens the camera `id` (nil: libcamera's first) and configures its video stream.
    /// - Parameters:
    ///   - manager: libcamera's camera manager.
    ///   - id: libcamera's camera id (`kioskcam probe` lists them); nil for the first.
    ///   - request: Size, rate and preferred fourcc.
    ///   - noFrameTimeout: Seconds without a frame before the camera counts as lost.
    ///   - bufferCount: Pooled frames for copies.
    /// - Throws: `LibcameraError`: `.notFound`, `.busy`, `.invalid` (nothing recordable,
    ///   or the camera rejects the configuration), `.disconnected`, `.system`.
    public init(manager: LibcameraManager, id: String?, request: CameraFormatRequest,
                noFrameTimeout: Double = 5, bufferCount: Int = 12) throws(LibcameraError) {
        let handle = try LibcameraHandle(manager: manager, id: id)
        let offers = try handle.formatOffers()
        let choice: CameraFormatChoice
        do {
            choice = try LibcameraStreamChoice.choose(from: offers, for: request)
        } catch {
            throw LibcameraError(.invalid, subject: "libcamera camera \(handle.id)", call: "choose a format",
                                 detail: error.description,
                                 hint: "see every format with `kioskcam probe` or `cam -c 1 -I`")
        }
        guard let libcameraName = LibcameraStreamChoice.libcameraName(ofFourCC: choice.fourcc) else {
            throw LibcameraError(.invalid, subject: "libcamera camera \(handle.id)", call: "choose a format",
                                 detail: "no libcamera name for \(choice.fourcc)")
        }
        var result = klc_stream_config()
        var adjusted: Int32 = 0
        var error = klc_error()
        guard klc_camera_configure(handle.pointer, libcameraName, UInt32(choice.size.width), UInt32(choice.size.height),
                                   6, &result, &adjusted, &error) == 0 else {
            throw LibcameraError(error, camera: handle.id, call: "configure")
        }
        var formatName = result.format
        let setName = withUnsafeBytes(of: &formatName) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        guard let setFourCC = LibcameraStreamChoice.fourcc(ofLibcameraName: setName),
              let delivery = CameraDelivery(fourcc: setFourCC) else {
            throw LibcameraError(.invalid, subject: "libcamera camera \(handle.id)", call: "configure",
                                 detail: "asked for \(choice.size) \(libcameraName), libcamera set \(setName), which kioskcam cannot record",
                                 hint: "set camera.pixel_format to another format `kioskcam probe` lists")
        }
        guard let size = LibcameraHandle.size(result.width, result.height), size.width % 2 == 0, size.height % 2 == 0 else {
            throw LibcameraError(.invalid, subject: "libcamera camera \(handle.id)", call: "configure",
                                 detail: "libcamera set the size \(result.width)x\(result.height), which H.264 cannot take (it needs even sizes)",
                                 hint: "set camera.size to a size `kioskcam probe` lists")
        }
        var notes: [String] = []
        if adjusted != 0 || size != choice.size || setName != libcameraName {
            notes.append("libcamera set \(size) \(setName)")
        }
        let stride = Int(min(result.stride, 1 << 20))
        if stride > 0, stride > delivery.pixelFormat.planes(for: size)[0].rowBytes { notes.append("rows padded to \(stride) bytes (removed)") }
        do {
            converter = try CapturedFrameConverter(delivery: delivery, size: size, bytesPerLine: stride,
                                                   maximumFrameBytes: Int(min(result.frame_size, 1 << 28)),
                                                   bufferCount: bufferCount)
        } catch {
            throw LibcameraError(.system, subject: "libcamera camera \(handle.id)", call: "open MJPEG decoder", detail: error.description)
        }
        do {
            wakeUp = try WakeUpEvent()
        } catch {
            throw LibcameraError(.system, subject: "libcamera camera \(handle.id)", call: "eventfd", errno: error.rawValue,
                                 systemMessage: error.description)
        }
        self.handle = handle
        self.bufferCount = Int(result.buffer_count)
        self.id = handle.id
        model = handle.model
        format = VideoFormat(size: size, pixelFormat: delivery.pixelFormat, framesPerSecond: request.framesPerSecond)
        negotiation = "\(setName): " + choice.reason + (notes.isEmpty ? "" : "; " + notes.joined(separator: "; "))
        self.noFrameTimeout = noFrameTimeout > 0 ? noFrameTimeout : 5
        frameDurationMicroseconds = 1_000_000 / Int64(max(request.framesPerSecond, 1))
    }

    deinit { stop() }

    /// Applies our camera settings as libcamera controls (`LibcameraControlPlan` says how
    /// the numbers map), for the next frames; at open, and at run time from the daemon.
    /// - Returns: How each setting came out (`line` for the log).
    public func apply(_ request: LibcameraSettingsRequest) -> [LibcameraControlPlan.Outcome] {
        let plan = LibcameraControlPlan(zoom: request.zoom, focus: request.focus, exposure: request.exposure,
                                        whiteBalance: request.whiteBalance, brightness: request.brightness, contrast: request.contrast,
                                        offered: Set(handle.controls.map(\.name)), cropMaximum: handle.scalerCropMaximum,
                                        aspect: format.size)
        var outcomes = plan.outcomes
        for setting in plan.settings {
            do {
                try handle.setControl(setting.name, setting.value)
            } catch {
                outcomes.append(LibcameraControlPlan.Outcome(setting: setting.name, problem: error.description))
            }
        }
        if let crop = plan.crop {
            do {
                try handle.setScalerCrop(crop)
            } catch {
                outcomes.append(LibcameraControlPlan.Outcome(setting: "zoom", problem: error.description))
            }
        }
        return outcomes
    }

    /// Tap-to-focus: autofocus on `point` of the frame through AfWindows (and AfTrigger
    /// unless `continuous`), as `LibcameraFocusPlan` says; the camera's zoom is digital, so
    /// the window is in the whole sensor area.
    /// - Returns: The plan (`missing` non-empty: nothing was asked), and a problem when a
    ///   control write failed.
    public func focus(at point: PicturePoint, continuous: Bool) -> (plan: LibcameraFocusPlan, problem: String?) {
        let plan = LibcameraFocusPlan(point: point, offered: Set(handle.controls.map(\.name)),
                                      cropMaximum: handle.scalerCropMaximum, crop: nil, continuous: continuous)
        guard let window = plan.window else { return (plan, nil) }
        do throws(LibcameraError) {
            // The window first: the mode and trigger go in the same request with it.
            try handle.setAutofocusWindow(window)
            for setting in plan.settings { try handle.setControl(setting.name, setting.value) }
        } catch {
            return (plan, error.description)
        }
        return (plan, nil)
    }

    // MARK: Streaming

    /// Starts the camera (every buffer queued) and the capture thread delivering to `sink`.
    /// - Throws: `LibcameraError` `.busy` (already started), `.disconnected`, `.system`.
    public func start(into sink: CaptureSink) throws(LibcameraError) {
        try state.withLock { (state: inout State) throws(LibcameraError) in
            guard !state.running else {
                throw LibcameraError(.busy, subject: name, call: "start", detail: "this camera is already streaming")
            }
            state.running = true
            state.stopRequested = false
            state.streaming = true
            state.returned.removeAll()
        }
        let pacer = handle.controls.contains { $0.name == "FrameDurationLimits" } ? nil : FramePacer(framesPerSecond: format.framesPerSecond)
        state.withLock { $0.pacer = pacer }
        var error = klc_error()
        guard klc_camera_start(handle.pointer, frameDurationMicroseconds, &error) == 0 else {
            state.withLock {
                $0.running = false
                $0.streaming = false
            }
            throw LibcameraError(error, camera: id, call: "start")
        }
        _ = wakeUp.drain()
        streaming.start(name: "kioskcam.camera.libcamera") { [self] in
            var end = capture(into: sink)
            state.withLock {
                $0.streaming = false
                $0.returned.removeAll()
            }
            if case .failed(let reason) = end {
                if klc_camera_end_failed(handle.pointer, Self.disconnectWaitMilliseconds) == 0 {
                    end = .failed(reason + "; libcamera has not seen it go, so it stays open until its process (the camera helper) ends")
                }
            } else {
                klc_camera_stop(handle.pointer)
            }
            state.withLock { $0.running = false }
            sink.videoSourceEnded(name, end)
        }
    }

    /// Stops the camera and waits for the capture thread, which reports `.stopped`.
    /// Called from the sink's callback on the capture thread, it only asks.
    public func stop() {
        state.withLock { $0.stopRequested = true }
        wakeUp.signal()
        if !streaming.includesCurrentThread { streaming.wait() }
    }

    private func capture(into sink: CaptureSink) -> SourceEnd {
        let timeoutNanoseconds = Int64(noFrameTimeout * 1e9)
        var lastFrame = clock.now()
        var fds = [pollfd(fd: klc_camera_event_fd(handle.pointer), events: Int16(POLLIN), revents: 0), wakeUp.pollDescriptor]
        var error = klc_error()
        while true {
            let (stopRequested, returned) = state.withLock { state -> (Bool, [Int]) in
                defer { state.returned.removeAll(keepingCapacity: true) }
                return (state.stopRequested, state.returned)
            }
            if stopRequested { return .stopped }
            for index in returned where klc_camera_requeue(handle.pointer, Int32(index), &error) != 0 {
                return end(for: LibcameraError(error, camera: id, call: "queueRequest"))
            }
            let waited = clock.now().nanoseconds(since: lastFrame)
            if waited >= timeoutNanoseconds {
                return .failed("camera lost: no frame for \(V4L2Camera.seconds(noFrameTimeout)) from \(name); check the cable and `dmesg`")
            }
            fds[0].revents = 0
            fds[1].revents = 0
            let ready = poll(&fds, 2, Int32(clamping: (timeoutNanoseconds - waited) / 1_000_000 + 1))
            if ready < 0 {
                let errno = Errno(rawValue: Glibc.errno)
                if errno == .interrupted { continue }
                return .failed("camera failed: poll: \(errno)")
            }
            if fds[1].revents != 0 { _ = wakeUp.drain() }
            guard fds[0].revents != 0 else { continue }
            // Every completed request, then back to the top (returned buffers, stop).
            while true {
                var frame = klc_frame()
                let got = klc_camera_dequeue(handle.pointer, &frame, &error)
                if got < 0 { return end(for: LibcameraError(error, camera: id, call: "dequeue")) }
                if got == 0 { break }
                switch take(frame, sink) {
                case .usable: lastFrame = clock.now()
                case .broken: break
                case .end(let end): return end
                }
            }
        }
    }

    private enum Handled {
        case usable
        case broken
        case end(SourceEnd)
    }

    /// Hands one completed buffer on: by reference when it already is the frame, else
    /// copied into the pool and queued again at once.
    private func take(_ frame: klc_frame, _ sink: CaptureSink) -> Handled {
        let index = Int(frame.index)
        if frame.status == 2 {
            // Cancelled: libcamera gave up on the request (stopping, or a queue that failed
            // on a device going away). Not queued again — that could spin against a dead
            // device; the no-frame timeout ends a stream that runs out of buffers.
            state.withLock { $0.counters.corrupt += 1 }
            return .broken
        }
        let timestamp = Self.timestamp(frame.timestamp_ns, now: clock.now())
        let paced = state.withLock { state -> Bool in
            guard frame.status == 0, state.pacer?.admits(timestamp) == false else { return false }
            state.counters.paced += 1
            return true
        }
        if paced {
            var error = klc_error()
            if klc_camera_requeue(handle.pointer, frame.index, &error) != 0 {
                return .end(end(for: LibcameraError(error, camera: id, call: "queueRequest")))
            }
            return .usable
        }
        let planes = Self.planes(of: frame)
        if frame.status == 0, frame.contiguous != 0, let span = Self.span(of: planes),
           let packed = converter.packedByteCountWithoutCopy, span.count >= packed,
           let base = span.baseAddress, let buffer = lease(index, base, packed) {
            sink.deliver(VideoFrame(buffer: buffer, format: format, timestamp: timestamp, sequence: Int(frame.sequence)))
            state.withLock {
                $0.counters.delivered += 1
                $0.counters.leased += 1
            }
            return .usable
        }
        let staged: CapturedFrameConverter.Staged
        if frame.contiguous != 0, let span = Self.span(of: planes) {
            staged = converter.copyOut(span, flaggedError: frame.status != 0)
        } else {
            // Planes in separate mappings: gathered into one span first.
            let total = planes.reduce(0) { $0 + $1.count }
            let gathered = UnsafeMutableRawBufferPointer.allocate(byteCount: max(total, 1), alignment: 64)
            defer { gathered.deallocate() }
            var offset = 0
            for plane in planes {
                if let source = plane.baseAddress, let destination = gathered.baseAddress, plane.count > 0 {
                    (destination + offset).copyMemory(from: source, byteCount: plane.count)
                }
                offset += plane.count
            }
            staged = converter.copyOut(UnsafeRawBufferPointer(start: gathered.baseAddress, count: total),
                                       flaggedError: frame.status != 0)
        }
        var error = klc_error()
        if klc_camera_requeue(handle.pointer, frame.index, &error) != 0 {
            return .end(end(for: LibcameraError(error, camera: id, call: "queueRequest")))
        }
        if frame.status != 0 {
            state.withLock { $0.counters.corrupt += 1 }
            return .broken
        }
        state.withLock { $0.counters.copied += 1 }
        switch converter.finish(staged) {
        case .success(let buffer):
            sink.deliver(VideoFrame(buffer: buffer, format: format, timestamp: timestamp, sequence: Int(frame.sequence)))
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

    /// Buffer `index` as a frame's buffer, by reference, or nil when fewer than
    /// `buffersKeptQueued` others would be left with the camera. The lease holds the
    /// handle (so the mapping outlives the stream while a frame is read); when the last
    /// holder lets go, the index goes back to the capture thread to be queued again.
    private func lease(_ index: Int, _ base: UnsafeRawPointer, _ byteCount: Int) -> MediaBuffer? {
        let count = bufferCount
        let granted = state.withLock { state -> Bool in
            guard state.streaming, count - (state.lent + 1) >= Self.buffersKeptQueued else { return false }
            state.lent += 1
            return true
        }
        guard granted else { return nil }
        return MediaBuffer(wrapping: UnsafeMutableRawPointer(mutating: base), byteCount: byteCount) { [state, wakeUp, handle] in
            _ = handle   // the mapping stays until the last lease is let go
            state.withLock { state in
                state.lent -= 1
                if state.streaming { state.returned.append(index) }
            }
            wakeUp.signal()
        }
    }

    /// The frame's planes as the camera filled them.
    static func planes(of frame: klc_frame) -> [UnsafeRawBufferPointer] {
        let count = min(max(Int(frame.plane_count), 0), Int(KLC_MAX_PLANES))
        var pointers = frame.planes, used = frame.bytes_used
        let bases = withUnsafeBytes(of: &pointers) { Array($0.bindMemory(to: UnsafePointer<UInt8>?.self).prefix(count)) }
        let lengths = withUnsafeBytes(of: &used) { Array($0.bindMemory(to: UInt32.self).prefix(count)) }
        return zip(bases, lengths).map { UnsafeRawBufferPointer(start: $0.map(UnsafeRawPointer.init), count: Int($1)) }
    }

    /// Contiguous planes as one span, from the first plane's start to the last's used end.
    static func span(of planes: [UnsafeRawBufferPointer]) -> UnsafeRawBufferPointer? {
        guard let first = planes.first?.baseAddress, let last = planes.last, let lastBase = last.baseAddress,
              lastBase >= first else { return nil }
        return UnsafeRawBufferPointer(start: first, count: (lastBase - first) + last.count)
    }

    /// libcamera's timestamp (CLOCK_MONOTONIC ns), unless it is 0 or in the future.
    static func timestamp(_ nanoseconds: UInt64, now: MonotonicInstant) -> MonotonicInstant {
        guard nanoseconds > 0, nanoseconds <= UInt64(Int64.max) else { return now }
        let instant = MonotonicInstant(nanoseconds: Int64(nanoseconds))
        return instant <= now ? instant : now
    }

    /// The sink's words for a failed step.
    func end(for error: LibcameraError) -> SourceEnd {
        switch error.code {
        case .disconnected, .notFound:
            .failed("camera unplugged: \(name) was disconnected; plug it back in")
        default:
            .failed("camera failed: \(error)")
        }
    }
}
