import Foundation
@testable import KioskAppliance
import KioskCore
import KioskSources
import KioskTestSupport
import Logging
import XCTest

/// A camera that delivers frames until it is unplugged, and can be plugged in again: the
/// supervisor reopens it through `open()`, which fails while it is out.
final class PluggableCamera: VideoSource, @unchecked Sendable {
    let name = "pluggable"
    let format = VideoFormat(size: FrameSize(width: 64, height: 64), pixelFormat: .yuyv, framesPerSecond: 30)
    private let pool: BufferPool
    private let lock = Lock()
    private var stopRequested = false
    private var unplugged = false
    private var thread: Thread?
    private let done = DispatchSemaphore(value: 0)
    private let socket: Socket

    /// The "USB port": shared by every camera object the supervisor opens.
    final class Socket: @unchecked Sendable {
        private let lock = Lock()
        private var present = true
        var isPlugged: Bool { lock.withLock { present } }
        func set(_ plugged: Bool) { lock.withLock { present = plugged } }
    }

    init(socket: Socket) {
        self.socket = socket
        pool = BufferPool(bufferCapacity: format.frameByteCount, count: 4)
    }

    func start(into sink: CaptureSink) throws {
        guard socket.isPlugged else { throw ApplianceError("no such device") }
        let thread = Thread { [self] in
            var index = 0
            while true {
                if lock.withLock({ stopRequested }) { sink.videoSourceEnded(name, .stopped); break }
                if !socket.isPlugged { sink.videoSourceEnded(name, .failed("camera unplugged (ENODEV)")); break }
                Thread.sleep(forTimeInterval: 1.0 / 30)
                guard let buffer = pool.take() else { continue }
                buffer.byteCount = format.frameByteCount
                memset(buffer.baseAddress, 0x80, format.frameByteCount)
                sink.deliver(VideoFrame(buffer: buffer, format: format, timestamp: SystemClock().now(), sequence: index))
                index += 1
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

/// The one owner of recordings, in process, with real recorders and files: whoever asks
/// and however fast, there is never more than one recording.
final class RecordingOwnerTests: XCTestCase {
    let logger = Logger(label: "test")

    private func makeAppliance(_ folder: TemporaryDirectory, socket: PluggableCamera.Socket) throws -> (Appliance, CameraSupervisor) {
        var configuration = Configuration()
        configuration.storage.mediaRoot = folder.path + "/media"
        configuration.encoder.preset = "ultrafast"
        let first = PluggableCamera(socket: socket)
        let supervisor = CameraSupervisor(camera: first, retryInterval: 0.1, open: { PluggableCamera(socket: socket) },
                                          onHealthChange: { _ in })
        let microphone = ToneMicrophone(format: AudioFormat(sampleRate: 48_000, channels: 1), frequency: 440)
        let appliance = try Appliance(configuration: configuration, camera: supervisor, microphone: microphone,
                                      version: "test", deviceID: nil, logger: logger)
        try appliance.startSources()
        return (appliance, supervisor)
    }

    /// Requests from four threads at once, each of every kind: a sampler never sees both
    /// recorders busy, and every refusal names the rule.
    func testConcurrentRequestsNeverMakeTwoRecordings() throws {
        let folder = TemporaryDirectory()
        let (appliance, _) = try makeAppliance(folder, socket: PluggableCamera.Socket())
        defer { appliance.stopSources(); appliance.finishRecording() }
        let owner = appliance.owner
        let stop = Flag()
        let overlaps = Counter()
        let sampler = Thread {
            while !stop.isSet {
                let states = owner.statesUnderDecisionLock()
                if states.video != .idle && states.audio != nil && states.audio != .idle { overlaps.add() }
            }
        }
        sampler.start()
        let requests: [RecordingRequest] = [.start(.video), .start(.audio), .stop, .toggle(.video), .toggle(.audio)]
        let started = Counter()
        let unexpected = Messages()
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for step in 0..<60 {
                let request = requests[(worker + step) % requests.count]
                do {
                    if case .start = try appliance.record(request) { started.add() }
                } catch {
                    let text = "\(error)"
                    if !["already recording", "not recording", "still", "already stopping", "being finished"].contains(where: text.contains) {
                        unexpected.append(text)
                    }
                }
                Thread.sleep(forTimeInterval: 0.005)
            }
        }
        _ = try? appliance.record(.stop)
        XCTAssertTrue(appliance.waitUntilIdle(timeout: 15))
        stop.set()
        XCTAssertEqual(overlaps.value, 0, "both recorders were busy at once")
        XCTAssertGreaterThan(started.value, 0)
        XCTAssertEqual(unexpected.all, [])
    }

    /// The defect: with the camera lost, every still waited (and held the command queue)
    /// for 10 s. Now it fails at once, saying why; with the camera back it works again.
    func testStillsFailAtOnceWhileTheCameraIsLost() throws {
        let folder = TemporaryDirectory()
        let socket = PluggableCamera.Socket()
        let (appliance, supervisor) = try makeAppliance(folder, socket: socket)
        defer { appliance.stopSources(); appliance.finishRecording() }
        XCTAssertTrue(waitUntil(5, interval: 0.01) { supervisor.health == .running })
        let photo = try appliance.takeSnapshot()
        XCTAssertTrue(photo.hasSuffix(".jpg") && FileManager.default.fileExists(atPath: photo), photo)

        socket.set(false)
        XCTAssertTrue(waitUntil(5, interval: 0.01) { if case .lost = supervisor.health { true } else { false } })
        let asked = Date()
        for _ in 0..<20 {
            XCTAssertThrowsError(try appliance.takeSnapshot()) { error in
                XCTAssertTrue("\(error)".contains("no picture from the camera (camera lost since"), "\(error)")
            }
        }
        XCTAssertLessThan(Date().timeIntervalSince(asked), 1, "20 stills answered at once, none waited")

        socket.set(true)
        XCTAssertTrue(waitUntil(5, interval: 0.01) { supervisor.health == .running })
        Thread.sleep(forTimeInterval: 1.1)   // stills are named by the second
        XCTAssertNoThrow(try appliance.takeSnapshot(), "stills work again once the camera is back")
    }

    /// Camera loss ends a video recording and its return resumes it — through the owner,
    /// so a sound-only recording started meanwhile is not joined by a second one.
    func testCameraReturnDoesNotStartASecondRecording() throws {
        let folder = TemporaryDirectory()
        let socket = PluggableCamera.Socket()
        let (appliance, supervisor) = try makeAppliance(folder, socket: socket)
        defer { appliance.stopSources(); appliance.finishRecording() }
        XCTAssertTrue(waitUntil(5, interval: 0.01) { supervisor.health == .running })
        try appliance.record(.start(.video))
        XCTAssertTrue(waitUntil(5, interval: 0.01) { appliance.activity == RecordingActivity(kind: .video, state: .recording) })
        Thread.sleep(forTimeInterval: 0.5)

        socket.set(false)
        XCTAssertTrue(waitUntil(5, interval: 0.01) {
            appliance.superviseCamera()
            return appliance.activity.state == .idle
        }, "the lost camera's recording is finished")
        try appliance.record(.start(.audio))
        XCTAssertTrue(waitUntil(5, interval: 0.01) { appliance.activity == RecordingActivity(kind: .audio, state: .recording) })

        socket.set(true)
        XCTAssertTrue(waitUntil(5, interval: 0.01) { supervisor.health == .running })
        for _ in 0..<10 {
            appliance.superviseCamera()
            Thread.sleep(forTimeInterval: 0.05)
        }
        XCTAssertEqual(appliance.activity, RecordingActivity(kind: .audio, state: .recording), "no video recording joined it")
        try appliance.record(.stop)
        XCTAssertTrue(appliance.waitUntilIdle(timeout: 10))
        let files = folder.files().filter { !$0.contains(".incoming") }
        XCTAssertEqual(files.filter { $0.hasSuffix(".mp4") }.count, 1, "\(files)")
        XCTAssertEqual(files.filter { $0.hasSuffix(".m4a") }.count, 1, "\(files)")
    }
}

private final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}

private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var value: Int { lock.withLock { count } }
    func add() { lock.withLock { count += 1 } }
}

private final class Messages: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String] = []
    var all: [String] { lock.withLock { stored } }
    func append(_ text: String) { lock.withLock { stored.append(text) } }
}
