import Foundation
import KioskCore
import KioskSources
import XCTest

/// A camera that delivers `frames` frames, then fails as an unplugged one would.
final class ScriptedCamera: VideoSource, @unchecked Sendable {
    let name = "scripted"
    let format = VideoFormat(size: FrameSize(width: 64, height: 64), pixelFormat: .yuyv, framesPerSecond: 100)
    let frames: Int
    private let pool: BufferPool
    private var thread: Thread?
    private let done = DispatchSemaphore(value: 0)
    private let lock = Lock()
    private var stopRequested = false

    init(frames: Int) {
        self.frames = frames
        pool = BufferPool(bufferCapacity: format.frameByteCount, count: 4)
    }

    func start(into sink: CaptureSink) {
        let thread = Thread { [self] in
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
}

final class CountingSink: CaptureSink, @unchecked Sendable {
    private let lock = Lock()
    private var count = 0
    private var ends: [SourceEnd] = []
    var frames: Int { lock.withLock { count } }
    var videoEnds: [SourceEnd] { lock.withLock { ends } }
    func deliver(_ frame: VideoFrame) { lock.withLock { count += 1 }; frame.buffer.recycle() }
    func deliver(_ chunk: AudioChunk) { chunk.buffer.recycle() }
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
