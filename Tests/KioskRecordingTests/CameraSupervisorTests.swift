import Foundation
import KioskCore
import KioskSources
import XCTest

/// A camera that delivers `frames` frames, then fails as an unplugged one would.
final class ScriptedCamera: VideoSource, @unchecked Sendable {
    let name = "scripted"
    let format = VideoFormat(size: FrameSize(width: 64, height: 64), pixelFormat: .yuyv, framesPerSecond: 100)
    let frames: Int
    /// Seconds before the first frame (a camera that takes a while to start streaming).
    let firstFrameDelay: Double
    private let pool: BufferPool
    private var thread: Thread?
    private let done = DispatchSemaphore(value: 0)
    private let lock = Lock()
    private var stopRequested = false

    init(frames: Int, firstFrameDelay: Double = 0) {
        self.frames = frames
        self.firstFrameDelay = firstFrameDelay
        pool = BufferPool(bufferCapacity: format.frameByteCount, count: 4)
    }

    func start(into sink: CaptureSink) {
        let thread = Thread { [self] in
            if firstFrameDelay > 0 { Thread.sleep(forTimeInterval: firstFrameDelay) }
            for index in 0..<frames {
                if lock.withLock({ stopRequested }) { sink.videoSourceEnded(name, .stopped); done.signal(); return }
                Thread.sleep(forTimeInterval: 0.01)
                guard let buffer = pool.take() else { continue }
                buffer.byteCount = format.frameByteCount
                sink.deliver(VideoFrame(buffer: buffer, format: format, timestamp: SystemClock().now(), sequence: index))
            }
            sink.videoSourceEnded(name, .failed("camera unplugged (ENODEV)"))
            done.signal()
        }
        self.thread = thread
        thread.start()
    }

    func stop() {
        lock.withLock { stopRequested = true }
        if thread != nil { done.wait(); thread = nil }
    }

    var wasStopped: Bool { lock.withLock { stopRequested } }
}

final class CountingSink: CaptureSink, @unchecked Sendable {
    private let lock = Lock()
    private var count = 0
    private var ends: [SourceEnd] = []
    var frames: Int { lock.withLock { count } }
    var videoEnds: [SourceEnd] { lock.withLock { ends } }
    func deliver(_ frame: VideoFrame) { lock.withLock { count += 1 } }
    func deliver(_ chunk: AudioChunk) {}
    func videoSourceEnded(_ name: String, _ end: SourceEnd) { lock.withLock { ends.append(end) } }
    func audioSourceEnded(_ name: String, _ end: SourceEnd) {}
}

final class CameraSupervisorTests: XCTestCase {
    func testLossIsReportedAndTheCameraIsReopenedUntilItReturns() throws {
        let attempts = AttemptCounter()
        let healthLog = HealthLog()
        let supervisor = CameraSupervisor(camera: ScriptedCamera(frames: 5), retryInterval: 0.05, open: {
            // Gone for two attempts, then back (and it keeps working this time).
            if attempts.next() <= 2 { throw CocoaError(.fileNoSuchFile) }
            return ScriptedCamera(frames: 1_000)
        }, onHealthChange: { healthLog.append($0) })
        let sink = CountingSink()
        try supervisor.start(into: sink)
        let deadline = Date(timeIntervalSinceNow: 5)
        while sink.frames < 20 && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        supervisor.stop()

        XCTAssertGreaterThanOrEqual(sink.frames, 20, "frames flow again after the reopen")
        XCTAssertEqual(attempts.count, 3, "two failed reopens, then success")
        let states = healthLog.states
        XCTAssertEqual(states.first, .running)
        guard states.count >= 3, case .lost(_, let reason) = states[1] else { return XCTFail("\(states)") }
        XCTAssertTrue(reason.contains("ENODEV"), reason)
        XCTAssertEqual(states[2], .running)
        XCTAssertTrue(sink.videoEnds.isEmpty, "a lost camera is not the end of the video for the pipeline")
        XCTAssertTrue(supervisor.health.description.contains("running"))
    }

    /// `format` is read on other threads (status, a recorder being set up) while the
    /// supervisor thread reopens the camera and replaces it: the sanitizer run
    /// (scripts/sanitize thread) catches it if that is not synchronised.
    func testFormatCanBeReadWhileTheCameraIsReopened() throws {
        let attempts = AttemptCounter()
        let supervisor = CameraSupervisor(camera: ScriptedCamera(frames: 2), retryInterval: 0.01, open: {
            _ = attempts.next()
            return ScriptedCamera(frames: 2)
        }, onHealthChange: { _ in })
        let sink = CountingSink()
        try supervisor.start(into: sink)
        let deadline = Date(timeIntervalSinceNow: 5)
        var reads = 0
        while attempts.count < 3 && Date() < deadline {
            XCTAssertEqual(supervisor.format.framesPerSecond, 100)
            reads += 1
        }
        supervisor.stop()
        XCTAssertGreaterThanOrEqual(attempts.count, 3, "the camera was reopened while format was read \(reads) times")
    }

    /// Health stays lost until a reopened camera delivers its first frame. One slow to
    /// start must be waited for, not replaced by yet another: the one replaced would keep
    /// capturing (thread, device, buffers) with nobody left to stop it.
    func testASlowReopenedCameraIsWaitedForNotReplaced() throws {
        let opened = OpenedCameras()
        let supervisor = CameraSupervisor(camera: ScriptedCamera(frames: 2), retryInterval: 0.02, open: {
            opened.add(ScriptedCamera(frames: 1_000, firstFrameDelay: 0.4))
        }, onHealthChange: { _ in })
        let sink = CountingSink()
        try supervisor.start(into: sink)
        let deadline = Date(timeIntervalSinceNow: 5)
        while sink.frames < 5 && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        supervisor.stop()

        XCTAssertGreaterThanOrEqual(sink.frames, 5, "the reopened camera's frames arrive")
        XCTAssertEqual(opened.all.count, 1, "one reopen, waited for, while the camera was slow to start")
        XCTAssertTrue(opened.all.allSatisfy(\.wasStopped), "stop() stops every camera the supervisor opened")
    }
}

final class OpenedCameras: @unchecked Sendable {
    private let lock = Lock()
    private var cameras: [ScriptedCamera] = []
    func add(_ camera: ScriptedCamera) -> ScriptedCamera { lock.withLock { cameras.append(camera) }; return camera }
    var all: [ScriptedCamera] { lock.withLock { cameras } }
}

final class AttemptCounter: @unchecked Sendable {
    private let lock = Lock()
    private var value = 0
    func next() -> Int { lock.withLock { value += 1; return value } }
    var count: Int { lock.withLock { value } }
}

final class HealthLog: @unchecked Sendable {
    private let lock = Lock()
    private var log: [CameraSupervisor.Health] = []
    func append(_ health: CameraSupervisor.Health) { lock.withLock { log.append(health) } }
    var states: [CameraSupervisor.Health] { lock.withLock { log } }
}
