import Foundation
import Glibc
import KioskCore
import KioskLibcamera
import KioskSources
import KioskTestSupport
import XCTest

/// The camera helper process (`kioskcam-camera`) against the real program: the
/// test pattern drives the same channel, shared slots and supervisor path that the
/// libcamera camera takes in the HIL guest (scripts/hil/scenarios/libcamera.sh, where
/// vimc is unbound and bound again under the daemon); here libcamera itself only gets as
/// far as finding no camera, as this machine has none.
final class CameraHelperTests: XCTestCase {
    /// Keeps the frames it is given (up to `keep`, to hold slots on purpose) and how the
    /// camera ended.
    final class Collector: CaptureSink, @unchecked Sendable {
        struct Seen {
            var frames = 0
            var byteCounts: Set<Int> = []
            var timestamps: [Int64] = []
            var nonZero = 0
            var ends: [SourceEnd] = []
        }
        let seen = Locked(Seen())
        /// Frames held, and how many more to hold.
        private let held: Locked<(frames: [VideoFrame], keep: Int)>

        init(keep: Int = 0) { held = Locked(([], keep)) }

        func deliver(_ frame: VideoFrame) {
            let bytes = frame.buffer.bytes
            let nonZero = bytes.contains { $0 != 0 }
            seen.withLock {
                $0.frames += 1
                $0.byteCounts.insert(bytes.count)
                $0.timestamps.append(frame.timestamp.nanoseconds)
                if nonZero { $0.nonZero += 1 }
            }
            held.withLock { if $0.frames.count < $0.keep { $0.frames.append(frame) } }
        }
        func deliver(_ chunk: AudioChunk) {}
        func videoSourceEnded(_ name: String, _ end: SourceEnd) { seen.withLock { $0.ends.append(end) } }
        func audioSourceEnded(_ name: String, _ end: SourceEnd) {}
        var heldFrames: [VideoFrame] { held.withLock { $0.frames } }
        /// Lets go of the frames held, and holds no more.
        func letGo() { held.withLock { $0 = ([], 0) } }
        var frames: Int { seen.withLock { $0.frames } }
        var ends: [SourceEnd] { seen.withLock { $0.ends } }
    }

    static func testPatternHelper(slots: Int = 8) throws -> HelperCamera {
        try HelperCamera(program: Package.cameraHelperBinary,
                         arguments: ["--source", "test-pattern", "--size", "320x240", "--fps", "15",
                                     "--slots", String(slots)])
    }

    func isRunning(_ pid: Int32) -> Bool {
        // A zombie still answers kill(0); its state in /proc says it is gone.
        guard kill(pid, 0) == 0, let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return false }
        return !stat.contains(") Z ")
    }

    /// Frames arrive in the helper's shared memory with the format it opened, in order
    /// of time, and `stop` ends the stream as stopped and the helper with it.
    func testFramesComeThroughSharedMemoryAndStopEndsTheHelper() throws {
        let camera = try Self.testPatternHelper()
        XCTAssertEqual(camera.format, VideoFormat(size: FrameSize(width: 320, height: 240), pixelFormat: .yuv420, framesPerSecond: 15))
        XCTAssertEqual(camera.name, "test pattern")
        let pid = camera.pid
        XCTAssertTrue(isRunning(pid))
        let sink = Collector()
        try camera.start(into: sink)
        XCTAssertTrue(waitUntil(30) { sink.frames >= 10 }, "frames: \(sink.frames), ends: \(sink.ends)")
        camera.stop()
        XCTAssertEqual(sink.ends, [.stopped])
        let seen = sink.seen.withLock { $0 }
        XCTAssertEqual(seen.byteCounts, [320 * 240 * 3 / 2])
        XCTAssertEqual(seen.nonZero, seen.frames, "every frame has the pattern's bytes")
        XCTAssertEqual(seen.timestamps, seen.timestamps.sorted())
        XCTAssertGreaterThanOrEqual(camera.frameCounters.delivered, 10)
        XCTAssertTrue(waitUntil(10) { !self.isRunning(pid) }, "the helper \(pid) ended with the stream")
    }

    /// A frame the graph still holds stays readable after its camera is stopped and gone
    /// (the shared mapping lives as long as the last frame in it).
    func testAFrameOutlivesItsCamera() throws {
        var camera: HelperCamera? = try Self.testPatternHelper()
        let sink = Collector(keep: 1)
        try camera?.start(into: sink)
        XCTAssertTrue(waitUntil(30) { sink.frames >= 2 })
        camera?.stop()
        weak let gone = camera
        camera = nil
        XCTAssertTrue(waitUntil(5) { gone == nil }, "the camera itself is released (its reading thread let go)")
        let frame = try XCTUnwrap(sink.heldFrames.first)
        XCTAssertEqual(frame.buffer.bytes.count, 320 * 240 * 3 / 2)
        XCTAssertTrue(frame.buffer.bytes.contains { $0 != 0 }, "still the pattern's bytes")
    }

    /// A helper that dies (SIGKILL here; libcamera's abort in the field) ends the stream
    /// as failed, saying how; the daemon itself goes on.
    func testAHelperThatDiesEndsTheStreamAsFailed() throws {
        let camera = try Self.testPatternHelper()
        let sink = Collector()
        try camera.start(into: sink)
        XCTAssertTrue(waitUntil(30) { sink.frames >= 3 })
        kill(camera.pid, SIGKILL)
        XCTAssertTrue(waitUntil(10) { !sink.ends.isEmpty })
        guard case .failed(let reason)? = sink.ends.first else { return XCTFail("ended: \(sink.ends)") }
        XCTAssertTrue(reason.contains("helper process ended (killed by signal 9)"), reason)
        camera.stop()
        XCTAssertEqual(sink.ends.count, 1)
    }

    /// Under the supervisor, a killed helper is replaced by a fresh one and frames flow again.
    func testTheSupervisorOpensAFreshHelper() throws {
        let first = try Self.testPatternHelper()
        let health = Locked<[CameraSupervisor.Health]>([])
        let supervisor = CameraSupervisor(camera: first, retryInterval: 0.2, open: { try CameraHelperTests.testPatternHelper() }) { state in
            health.withLock { $0.append(state) }
        }
        let sink = Collector()
        try supervisor.start(into: sink)
        XCTAssertTrue(waitUntil(30) { sink.frames >= 3 })
        kill(first.pid, SIGKILL)
        XCTAssertTrue(waitUntil(30) { health.withLock { $0.contains { if case .lost = $0 { true } else { false } } } }, "\(health.withLock { $0 })")
        let before = sink.frames
        XCTAssertTrue(waitUntil(30) { sink.frames >= before + 10 }, "frames after the new helper: \(sink.frames - before)")
        let second = try XCTUnwrap(supervisor.current as? HelperCamera)
        XCTAssertNotEqual(second.pid, first.pid)
        XCTAssertEqual(health.withLock { $0.last }, .running)
        supervisor.stop()
        XCTAssertTrue(waitUntil(10) { !self.isRunning(second.pid) })
    }

    /// The graph holding every slot: the helper drops frames and counts them rather than
    /// overwrite one in use; let go, and frames flow again.
    func testAllSlotsHeldDropsAndCounts() throws {
        let camera = try Self.testPatternHelper(slots: 3)
        let sink = Collector(keep: 3)
        try camera.start(into: sink)
        XCTAssertTrue(waitUntil(30) { camera.frameCounters.dropped >= 3 }, "\(camera.frameCounters)")
        XCTAssertEqual(sink.frames, 3, "no frame while every slot is held")
        sink.letGo()
        XCTAssertTrue(waitUntil(30) { sink.frames >= 8 }, "frames after letting go: \(sink.frames)")
        camera.stop()
    }

    /// A helper that cannot open its camera: its words reach the caller, it is gone.
    func testOpenFailuresSayWhy() throws {
        XCTAssertThrowsError(try HelperCamera(program: Package.cameraHelperBinary,
                                              arguments: ["--source", "test-pattern", "--size", "big", "--fps", "15"])) {
            XCTAssertTrue("\($0)".contains("bad --size"), "\($0)")
        }
        // Real libcamera, which lists no camera on this machine.
        XCTAssertThrowsError(try LibcameraHelperCamera(program: Package.cameraHelperBinary, id: "no/such/camera",
                                                       request: CameraFormatRequest(size: FrameSize(width: 320, height: 240), framesPerSecond: 15),
                                                       noFrameTimeout: 5)) {
            XCTAssertTrue("\($0)".contains("no/such/camera") && "\($0)".contains("probe"), "\($0)")
        }
        XCTAssertThrowsError(try HelperCamera(program: "/nonexistent/kioskcam-camera", arguments: [])) {
            XCTAssertTrue("\($0)".contains("/nonexistent/kioskcam-camera"), "\($0)")
        }
    }

    /// libcamera's cameras listed by the helper, as libcamera in this process lists them;
    /// a helper that is missing, fails, or hangs is an error that says so, in bounded time.
    func testTheHelperListsLibcamerasCameras() throws {
        let listing = try LibcameraListing.ask(program: Package.cameraHelperBinary)
        XCTAssertNil(listing.error)
        XCTAssertEqual(listing.version, LibcameraManager.version)
        XCTAssertEqual(listing.cameras.map(\.id), try LibcameraManager().cameraIDs)
        let described = try LibcameraListing.ask(program: Package.cameraHelperBinary, describe: true)
        XCTAssertEqual(described.cameras.map(\.id), listing.cameras.map(\.id))

        XCTAssertThrowsError(try LibcameraListing.ask(program: "/nonexistent/kioskcam-camera")) {
            XCTAssertTrue("\($0)".contains("/nonexistent/kioskcam-camera") && "\($0)".contains("beside kioskcam"), "\($0)")
        }
        let folder = TemporaryDirectory()
        let failing = folder.path + "/failing", hanging = folder.path + "/hanging"
        try "#!/bin/sh\necho '{\"version\":'\nexit 3\n".write(toFile: failing, atomically: true, encoding: .utf8)
        try "#!/bin/sh\nexec sleep 30\n".write(toFile: hanging, atomically: true, encoding: .utf8)
        chmod(failing, 0o755)
        chmod(hanging, 0o755)
        XCTAssertThrowsError(try LibcameraListing.ask(program: failing)) {
            XCTAssertTrue("\($0)".contains("ended (exit status 3) without listing"), "\($0)")
        }
        let started = Date()
        XCTAssertThrowsError(try LibcameraListing.ask(program: hanging, timeout: 1)) {
            XCTAssertTrue("\($0)".contains("did not list libcamera's cameras within 1 s"), "\($0)")
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 15, "the hanging helper was not given up on")
    }

    /// The channel: a message with a descriptor attached arrives whole with a working
    /// descriptor; what is not a message is refused; a closed end is an error.
    func testTheChannelPassesMessagesAndDescriptors() throws {
        let (a, b) = try CameraHelperChannel.pair()
        let (slots, descriptor) = try SharedFrameSlots.create(slotBytes: 64, slotCount: 2)
        slots.slot(1)?.storeBytes(of: 0x5A, as: UInt8.self)
        let opened = CameraHelperOpened(name: "x", format: VideoFormat(size: FrameSize(width: 4, height: 4), pixelFormat: .yuv420, framesPerSecond: 1),
                                        slotBytes: 64, slotCount: 2, details: Data([1, 2, 3]))
        XCTAssertTrue(a.send(.opened(opened), passing: descriptor))
        close(descriptor)
        let (message, attached) = try XCTUnwrap(try b.receive(timeout: 5))
        XCTAssertEqual(message, .opened(opened))
        let fd = try XCTUnwrap(attached)
        let mapped = try SharedFrameSlots(descriptor: fd, slotBytes: 64, slotCount: 2)
        close(fd)
        XCTAssertEqual(mapped.slot(1)?.load(as: UInt8.self), 0x5A)
        XCTAssertNil(mapped.slot(2))
        XCTAssertThrowsError(try SharedFrameSlots(descriptor: fd, slotBytes: 64, slotCount: 2), "a closed descriptor")

        XCTAssertEqual(send(raw: Array("{\"frame\":".utf8), on: a), true)
        XCTAssertThrowsError(try b.receive(timeout: 5)) { XCTAssertTrue("\($0)".contains("not one"), "\($0)") }
        XCTAssertNil(try b.receive(timeout: 0.05), "nothing waiting")
        _ = consume a
        XCTAssertThrowsError(try b.receive(timeout: 5)) { XCTAssertTrue("\($0)".contains("closed"), "\($0)") }
    }

    /// The per-frame messages are fixed little-endian fields; a torn one, or one with a
    /// slot or count out of range, is refused rather than read; the rest are JSON.
    func testMessagesEncodeAndTornOnesAreRefused() throws {
        let counters = CameraFrameCounters(delivered: 9, leased: 0, copied: 9, paced: 1, dropped: 2, corrupt: 0)
        let messages: [CameraHelperMessage] = [
            .frame(CameraHelperFrame(slot: 3, byteCount: 115_200, timestampNanoseconds: 123_456_789_000, sequence: 77, counters: counters)),
            .release(slot: 7), .counters(counters), .start, .stop, .call(id: 4, payload: Data([0, 1])), .ended(.failed("camera lost")),
        ]
        for message in messages {
            let bytes = try XCTUnwrap(message.encoded())
            XCTAssertEqual(bytes.withUnsafeBytes { CameraHelperMessage.decode($0) }, message)
        }
        let frame = try XCTUnwrap(messages[0].encoded())
        XCTAssertEqual(frame.count, 1 + 10 * 8, "a tag and ten fields")
        XCTAssertNil(Array(frame.dropLast()).withUnsafeBytes { CameraHelperMessage.decode($0) }, "torn")
        var negativeSlot = frame
        negativeSlot.replaceSubrange(1..<9, with: withUnsafeBytes(of: Int64(-1).littleEndian, Array.init))
        XCTAssertNil(negativeSlot.withUnsafeBytes { CameraHelperMessage.decode($0) }, "slot -1")
        var hugeCount = frame
        hugeCount.replaceSubrange(9..<17, with: withUnsafeBytes(of: Int64.max.littleEndian, Array.init))
        XCTAssertNil(hugeCount.withUnsafeBytes { CameraHelperMessage.decode($0) }, "a byte count past Int32")
        XCTAssertNil([UInt8]().withUnsafeBytes { CameraHelperMessage.decode($0) })
        XCTAssertNil(Array("{\"start\":".utf8).withUnsafeBytes { CameraHelperMessage.decode($0) })
        // The fuzzer's seeds are messages too.
        let corpus = Package.root() + "/Fuzz/corpus/FuzzCameraHelper"
        for name in try FileManager.default.contentsOfDirectory(atPath: corpus) {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: corpus + "/" + name))
            XCTAssertNotNil(bytes.withUnsafeBytes { CameraHelperMessage.decode($0) }, name)
        }
    }

    /// The helper's opened format is checked before any arithmetic: a side or a rate no
    /// camera has is refused (it reached `frameByteCount` and the encoder's Int32 fields).
    func testAnOpenedFormatNoCameraHasIsRefused() {
        let good = VideoFormat(size: FrameSize(width: 1280, height: 720), pixelFormat: .yuyv, framesPerSecond: 30)
        let opened = CameraHelperOpened(name: "x", format: good, slotBytes: 1 << 21, slotCount: 4, details: Data())
        XCTAssertEqual(opened.format, good)
        for (width, height, rate) in [(Int.max, 720, 30), (1280, 1 << 40, 30), (3_000_000_000, 0, 30), (0, 720, 30),
                                      (1280, 720, 0), (1280, 720, Int(Int32.max) + 1), (-2, 720, 30)] {
            var bad = opened
            (bad.width, bad.height, bad.framesPerSecond) = (width, height, rate)
            XCTAssertNil(bad.format, "\(width)x\(height) at \(rate) fps")
        }
    }

    private func send(raw bytes: [UInt8], on channel: CameraHelperChannel) -> Bool {
        bytes.withUnsafeBytes { Glibc.send(channel.descriptor, $0.baseAddress, $0.count, 0) == $0.count }
    }
}
