import Foundation
import KioskCore
import KioskMedia
@testable import KioskRecording
import KioskSources
import KioskTestSupport
import Logging
import XCTest

/// Numbered test-pattern frames (no caption: the number is the only text) at `fps`, in
/// real time, on a thread of its own.
final class NumberedCamera: @unchecked Sendable {
    let format: VideoFormat
    let renderer: TestPatternRenderer
    let pool: BufferPool
    private let lock = Lock()
    private var stopRequested = false
    private var produced = 0
    private var thread: Thread?
    private let done = DispatchSemaphore(value: 0)

    init(format: VideoFormat, buffers: Int = 24) {
        self.format = format
        renderer = TestPatternRenderer(format: format)
        pool = BufferPool(bufferCapacity: format.frameByteCount, count: buffers)
    }

    var framesProduced: Int { lock.withLock { produced } }

    func start(into sink: CaptureSink) {
        let thread = Thread { [self] in
            let clock = SystemClock()
            let start = clock.now()
            var sequence = 0
            while !lock.withLock({ stopRequested }) {
                SystemClock.sleep(until: start.advanced(byNanoseconds: Int64(sequence) * format.frameDurationNanoseconds))
                if let buffer = pool.take() {
                    renderer.render(into: buffer.mutableBytes, sequence: sequence, caption: [])
                    buffer.byteCount = format.frameByteCount
                    sink.deliver(VideoFrame(buffer: buffer, format: format, timestamp: clock.now(), sequence: sequence))
                }
                lock.withLock { produced = sequence + 1 }
                sequence += 1
            }
            done.signal()
        }
        self.thread = thread
        thread.start()
    }

    func stop() {
        lock.withLock { stopRequested = true }
        if thread != nil { done.wait(); thread = nil }
    }
}

/// A packet output that is slow on purpose: it takes a packet every 150 ms on its own
/// thread, behind a GOPQueue, like a stream on a bad network.
final class SlowOutput: PacketOutput, @unchecked Sendable {
    private let lock = Lock()
    private var queue = GOPQueue<EncodedPacket>(byteLimit: 40_000)
    private var stopRequested = false
    private var taken = 0

    init() {
        // The thread holds the output until `stop()`; the output does not hold the thread
        // (that cycle outlived the test: AddressSanitizer's leak check found it).
        Thread.detachNewThread { [self] in
            while !lock.withLock({ stopRequested }) {
                _ = lock.withLock { queue.popFirst() }
                lock.withLock { taken += 1 }
                Thread.sleep(forTimeInterval: 0.15)
            }
        }
    }

    var demand: EncoderDemand { [.video, .audio] }
    var dropped: (gops: Int, packets: Int) { lock.withLock { (queue.droppedGOPs, queue.droppedPackets) } }
    func encoderOpened(_ media: EncodedPacket.Media, parameters: StreamParameters) {}
    func receive(_ packet: EncodedPacket, parameters: StreamParameters) {
        let info = PacketInfo(media: packet.media == .video ? .video : .audio, time: packet.time,
                              isKeyframe: packet.isKeyframe, byteCount: packet.byteCount)
        lock.withLock { _ = queue.append(info, packet) }
    }
    func encoderDrained(_ media: EncodedPacket.Media, endOfInput: Bool) {}
    func encoderFailed(_ media: EncodedPacket.Media, _ error: MediaError) {}
    func stop() { lock.withLock { stopRequested = true } }
}

/// The media graph: one capture, one encode, many outputs, frames by reference.
final class MediaGraphTests: XCTestCase {
    let logger = Logger(label: "test")
    /// 640x480: the burned-in digits are 3x3-pixel dots, which survive encoding.
    let format = VideoFormat(size: FrameSize(width: 640, height: 480), pixelFormat: .yuv420, framesPerSecond: 30)

    private func settings(_ root: String, codec: String = "libx264") -> RecorderSettings {
        RecorderSettings(layout: LibraryLayout(root: root),
                         video: VideoTrackSettings(input: format, codecName: codec, bitrate: 2_000_000, preset: "ultrafast"),
                         audio: AudioTrackSettings(input: AudioFormat(sampleRate: 48_000, channels: 1)),
                         segmentPolicy: SegmentPolicy(maximumSeconds: nil))
    }

    /// The frame numbers of every frame of a file, read back from its decoded pictures.
    private func frameNumbers(_ path: String, _ folder: TemporaryDirectory) throws -> [Int?] {
        let raw = folder.path + "/decoded.gray"
        // passthrough: one picture per frame in the file (a constant-rate output would repeat
        // or drop pictures to fit its guess of the rate).
        try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", path, "-map", "0:v", "-vsync", "passthrough",
                                "-f", "rawvideo", "-pix_fmt", "gray", raw])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: raw))
        let renderer = TestPatternRenderer(format: format)
        let frameBytes = format.size.pixelCount
        return stride(from: 0, to: bytes.count - frameBytes + 1, by: frameBytes).map { offset in
            bytes.withUnsafeBytes { renderer.readFrameNumber(luma: UnsafeRawBufferPointer(rebasing: $0[offset..<(offset + frameBytes)])) }
        }
    }

    /// A captured frame goes to the encoder, the preview and stills as the same buffer:
    /// no byte is copied on the way (YU12 is the encoder's own layout), and the buffer
    /// returns to its pool only when the last of them lets go.
    func testAFrameReachesThreeConsumersWithZeroCopies() throws {
        let folder = TemporaryDirectory()
        let graph = MediaGraph(settings: settings(folder.path + "/media"), previewFramesPerSecond: 30, clock: SystemClock(),
                               logger: logger, onEvent: { _ in })
        defer { graph.shutdown() }
        let pool = BufferPool(bufferCapacity: format.frameByteCount, count: 4)
        let renderer = TestPatternRenderer(format: format)
        let copiedBefore = MediaStatistics.shared.copied
        try graph.video.start()
        let still = StillResultBox()
        graph.stills.request(timeout: 5) { still.set($0) }
        let eventStill = StillResultBox()
        graph.stills.request(timeout: 5, label: "motion") { eventStill.set($0) }
        var seen: UnsafeMutableRawPointer?
        var lastDelivered: UnsafeMutableRawPointer?
        for sequence in 0..<30 {
            let buffer = try XCTUnwrap(pool.take())
            renderer.render(into: buffer.mutableBytes, sequence: sequence, caption: [])
            buffer.byteCount = format.frameByteCount
            if sequence == 0 { seen = buffer.baseAddress }
            lastDelivered = buffer.baseAddress
            graph.deliver(VideoFrame(buffer: buffer, format: format, timestamp: SystemClock().now(), sequence: sequence))
            Thread.sleep(forTimeInterval: 1.0 / 30)
        }
        // The preview holds the newest frame by reference: the very buffer that was captured.
        do {
            let previewed = try XCTUnwrap(XCTUnwrap(graph.preview).takeNewFrame())
            XCTAssertEqual(previewed.buffer.baseAddress, lastDelivered, "the preview's frame is the captured buffer itself")
            XCTAssertLessThan(pool.freeCount, 4, "held while the preview has it")
        }
        XCTAssertNotNil(seen)
        XCTAssertTrue(still.wait(5), "the still was saved")
        XCTAssertTrue(try XCTUnwrap(still.value).hasSuffix(".jpg"))
        XCTAssertTrue(eventStill.wait(5), "the event's still was saved")
        let eventPath = try XCTUnwrap(eventStill.value)
        XCTAssertTrue(eventPath.hasSuffix("-motion.jpg"), "an event's still carries its trigger: \(eventPath)")
        XCTAssertNotEqual(eventPath, try XCTUnwrap(still.value), "a plain still and an event's still are two files")
        XCTAssertEqual(LibraryLayout.eventLabel(ofFileName: String(eventPath.split(separator: "/").last ?? "")), "motion")
        try graph.video.stop()
        XCTAssertEqual(graph.video.waitUntilIdle(timeout: 10), .idle)
        XCTAssertEqual(MediaStatistics.shared.copied.frames, copiedBefore.frames, "no frame was copied between capture and encode")
        XCTAssertEqual(pool.freeCount, 4, "every buffer went back once its last holder let go")
        XCTAssertEqual(graph.video.status.finishedFiles.count, 1)
        let frames = try XCTUnwrap(FFprobe.probe(try XCTUnwrap(graph.video.status.finishedFiles.first)).video).frameCount
        XCTAssertGreaterThan(frames, 25)
    }

    /// A slow output drops whole GOPs and counts them; the recording beside it, fed by the
    /// same encode, loses not one frame; the slow luma subscriber skips frames, counted.
    func testASlowConsumerDropsAndCountsWhileTheFileLosesNothing() throws {
        let folder = TemporaryDirectory()
        let graph = MediaGraph(settings: settings(folder.path + "/media"), previewFramesPerSecond: 5, clock: SystemClock(),
                               logger: logger, onEvent: { _ in })
        let slow = SlowOutput()
        graph.encoder.add(slow)
        let lumaFrames = StillResultBox()
        try XCTUnwrap(graph.luma).subscribe { _ in
            lumaFrames.set(.success("luma"))
            Thread.sleep(forTimeInterval: 0.5)   // far slower than the branch's rate
        }
        let camera = NumberedCamera(format: format)
        camera.start(into: graph)
        try graph.video.start()
        // 4 s of frames at least, and until the slow ones have fallen behind.
        let luma = try XCTUnwrap(graph.luma)
        XCTAssertTrue(waitUntil(60) { camera.framesProduced >= 120 && slow.dropped.gops > 0 && luma.counters.skipped > 0 },
                      "waited for 120 frames, a dropped GOP and a skipped luma frame: \(camera.framesProduced), \(slow.dropped), \(luma.counters)")
        try graph.video.stop()
        XCTAssertEqual(graph.video.waitUntilIdle(timeout: 10), .idle)
        camera.stop()
        slow.stop()
        graph.shutdown()
        XCTAssertGreaterThan(slow.dropped.gops, 0, "the slow output dropped whole GOPs")
        XCTAssertGreaterThan(try XCTUnwrap(graph.luma).counters.skipped, 0, "the slow luma subscriber's frames were skipped and counted")
        XCTAssertEqual(graph.encoder.dropped.droppedVideoFrames, 0, "the encoder kept up")
        let file = try XCTUnwrap(graph.video.status.finishedFiles.first)
        let numbers = try frameNumbers(file, folder)
        XCTAssertFalse(numbers.contains(nil), "every frame's number is readable")
        let read = numbers.compactMap { $0 }
        XCTAssertGreaterThan(read.count, 100)
        XCTAssertEqual(read, Array((read.first ?? 0)...(read.last ?? 0)), "not a frame lost or repeated in the file")
    }

    /// An event clip's start: 2 s before the trigger, from the pre-event ring — at a
    /// keyframe, holding the frames from before the trigger, then on without a gap.
    func testARecordingFromTheRingBeginsAtAKeyframeBeforeTheTrigger() throws {
        let folder = TemporaryDirectory()
        let graph = MediaGraph(settings: settings(folder.path + "/media"), previewFramesPerSecond: 5, clock: SystemClock(),
                               logger: logger, onEvent: { _ in })
        let ring = PreEventRing(seconds: 2, byteLimit: PreEventRing.byteBudget(seconds: 2, bitrate: 2_100_000))
        graph.encoder.add(ring)
        let camera = NumberedCamera(format: format)
        camera.start(into: graph)
        // 4 s of frames at least, and the ring holding its 2 s.
        XCTAssertTrue(waitUntil(60) { camera.framesProduced >= 120 && ring.held.seconds >= 2 },
                      "waited for 120 frames and 2 s in the ring: \(camera.framesProduced), \(ring.held)")
        let triggerFrame = camera.framesProduced
        try graph.video.start(preEvent: (ring, 2))
        Thread.sleep(forTimeInterval: 1.5)
        try graph.video.stop()
        XCTAssertEqual(graph.video.waitUntilIdle(timeout: 10), .idle)
        camera.stop()
        graph.shutdown()
        XCTAssertLessThanOrEqual(ring.held.bytes, PreEventRing.byteBudget(seconds: 2, bitrate: 2_100_000) + 200_000)
        let file = try XCTUnwrap(graph.video.status.finishedFiles.first)
        let numbers = try frameNumbers(file, folder).compactMap { $0 }
        let first = try XCTUnwrap(numbers.first)
        XCTAssertLessThanOrEqual(first, triggerFrame - 60, "begins at least 2 s (60 frames) before the trigger")
        XCTAssertGreaterThanOrEqual(first, triggerFrame - 60 - 31, "at the keyframe at or before that: within one GOP")
        XCTAssertEqual(first % 30, 0, "the encoder's keyframes fall every 30 frames from frame 0: the file starts at one")
        XCTAssertGreaterThan(numbers.last ?? 0, triggerFrame + 20, "and goes on past the trigger")
        XCTAssertEqual(numbers, Array(first...(numbers.last ?? first)), "without a gap or a repeat where the ring meets live")
    }

    /// The null encoder runs the whole graph — capture, one encode, a file, the ring —
    /// with no real encoding: timing and keyframes only.
    func testTheNullEncoderRunsTheWholeGraph() throws {
        let folder = TemporaryDirectory()
        let graph = MediaGraph(settings: settings(folder.path + "/media", codec: "null"), previewFramesPerSecond: 5,
                               clock: SystemClock(), logger: logger, onEvent: { _ in })
        let ring = PreEventRing(seconds: 1, byteLimit: 100_000)
        graph.encoder.add(ring)
        let camera = NumberedCamera(format: format)
        camera.start(into: graph)
        try graph.video.start()
        Thread.sleep(forTimeInterval: 2)
        try graph.video.stop()
        XCTAssertEqual(graph.video.waitUntilIdle(timeout: 10), .idle)
        camera.stop()
        graph.shutdown()
        XCTAssertEqual(graph.encoder.videoEncoderName, "null")
        XCTAssertGreaterThan(ring.held.seconds, 0.5)
        let file = try XCTUnwrap(graph.video.status.finishedFiles.first)
        let packets = try Tool.run("/usr/bin/ffprobe", ["-v", "error", "-select_streams", "v", "-count_packets",
                                                       "-show_entries", "stream=nb_read_packets", "-of", "csv=p=0", file]).stdout
        XCTAssertGreaterThan(Int(packets.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0, 50, "\(packets)")
    }
}

/// A result set once from another thread.
final class StillResultBox: @unchecked Sendable {
    private let lock = Lock()
    private var stored: String?
    private let signal = DispatchSemaphore(value: 0)
    func set(_ result: Result<String, RecorderError>) {
        let first = lock.withLock { () -> Bool in
            defer { if case .success(let text) = result { stored = text } else { stored = "\(result)" } }
            return stored == nil
        }
        if first { signal.signal() }
    }
    var value: String? { lock.withLock { stored } }
    func wait(_ seconds: Double) -> Bool { signal.wait(timeout: .now() + seconds) == .success }
}

/// A recording output used twice in a row (a camera lost and back) starts the second
/// recording as it did the first.
final class RecordingOutputRestartTests: XCTestCase {
    func testStopThenStartAgainRecordsAgain() throws {
        let folder = TemporaryDirectory()
        let format = VideoFormat(size: FrameSize(width: 320, height: 240), pixelFormat: .yuyv, framesPerSecond: 30)
        let recorder = Recorder(settings: RecorderSettings(layout: LibraryLayout(root: folder.path + "/media"),
                                                           video: VideoTrackSettings(input: format, preset: "ultrafast"),
                                                           audio: AudioTrackSettings(input: AudioFormat(sampleRate: 48_000, channels: 1))),
                                clock: SystemClock(), logger: Logger(label: "test"))
        let camera = TestPatternCamera(format: format)
        let microphone = ToneMicrophone(format: AudioFormat(sampleRate: 48_000, channels: 1), frequency: 440)
        camera.start(into: recorder)
        microphone.start(into: recorder)
        defer { camera.stop(); microphone.stop(); recorder.shutdown() }
        for round in 0..<3 {
            try recorder.start()
            let deadline = Date(timeIntervalSinceNow: 5)
            while recorder.status.state != .recording && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
            XCTAssertEqual(recorder.status.state, .recording, "round \(round)")
            Thread.sleep(forTimeInterval: 0.5)
            try recorder.stop()
            XCTAssertEqual(recorder.waitUntilIdle(timeout: 5), .idle, "round \(round)")
            if round == 1 { Thread.sleep(forTimeInterval: 6) }   // long enough for the encoders to close while idle
        }
        XCTAssertEqual(folder.files().filter { $0.hasSuffix(".mp4") }.count, 3)
    }
}

/// Digital zoom in front of the graph: what is recorded and what the preview shows are
/// the centre crop, scaled back up, from the moment it is set.
final class DigitalZoomTests: XCTestCase {
    func testZoomAppliesToTheRecordingAndThePreviewAlike() throws {
        let folder = TemporaryDirectory()
        let size = FrameSize(width: 320, height: 240)
        let format = VideoFormat(size: size, pixelFormat: .yuv420, framesPerSecond: 30)
        let graph = MediaGraph(settings: RecorderSettings(layout: LibraryLayout(root: folder.path + "/media"),
                                                          video: VideoTrackSettings(input: format, bitrate: 1_000_000, preset: "ultrafast"),
                                                          audio: nil),
                               previewFramesPerSecond: 30, clock: SystemClock(), logger: Logger(label: "test"), onEvent: { _ in })
        let zoom = DigitalZoomStage(downstream: graph, maximum: 4, clock: SystemClock())
        // A still scene: black, with a white centre half. Zoomed 2×, only white is left.
        let pool = BufferPool(bufferCapacity: format.frameByteCount, count: 20)
        func deliver(_ sequence: Int) {
            guard let buffer = pool.take() else { return }
            var canvas = YCbCrCanvas(base: buffer.baseAddress, format: format)
            canvas.fill(x: 0, y: 0, width: size.width, height: size.height, .black)
            canvas.fill(x: size.width / 4, y: size.height / 4, width: size.width / 2, height: size.height / 2, .white)
            buffer.byteCount = format.frameByteCount
            zoom.deliver(VideoFrame(buffer: buffer, format: format, timestamp: SystemClock().now(), sequence: sequence))
            Thread.sleep(forTimeInterval: 1.0 / 30)
        }
        try graph.video.start()
        let copiesBefore = MediaStatistics.shared.copied.frames
        for sequence in 0..<30 { deliver(sequence) }
        XCTAssertEqual(MediaStatistics.shared.copied.frames, copiesBefore, "at 1× frames pass by reference")
        XCTAssertLessThan(try XCTUnwrap(graph.preview).takeNewFrame().map { $0.buffer.bytes[0] } ?? 255, 40, "unzoomed: a black corner")
        XCTAssertEqual(zoom.setZoom(2, smoothly: false), 2)
        for sequence in 30..<60 { deliver(sequence) }
        XCTAssertGreaterThan(try XCTUnwrap(graph.preview).takeNewFrame().map { $0.buffer.bytes[0] } ?? 0, 200, "zoomed: the corner is the white centre")
        XCTAssertGreaterThanOrEqual(MediaStatistics.shared.copied.frames - copiesBefore, 29, "zoomed frames are written once each, counted")
        try graph.video.stop()
        XCTAssertEqual(graph.video.waitUntilIdle(timeout: 10), .idle)
        graph.shutdown()
        // The file: black corners first, white corners after the zoom.
        let file = try XCTUnwrap(graph.video.status.finishedFiles.first)
        let raw = folder.path + "/frames.gray"
        try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", file, "-vsync", "passthrough", "-f", "rawvideo", "-pix_fmt", "gray", raw])
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
        let corners = stride(from: 0, to: bytes.count, by: size.pixelCount).map { bytes[$0 + size.width * 4 + 4] }
        XCTAssertGreaterThan(corners.count, 50)
        XCTAssertLessThan(corners.first ?? 255, 60)
        XCTAssertGreaterThan(corners.last ?? 0, 180)
    }
}
