import Foundation
import KioskCore
import KioskSources
import KioskTestSupport
import XCTest

/// The raw-file camera hands out frames as views of the mapped file: the bytes of each
/// frame, in order, without a copy, and never more frames at once than it has buffers.
final class RawFileCameraTests: XCTestCase {
    private let format = VideoFormat(size: FrameSize(width: 64, height: 48), pixelFormat: .yuyv, framesPerSecond: 30)

    /// Frame `index` filled with bytes that say which frame and which offset they are.
    private func frameBytes(_ index: Int) -> [UInt8] {
        (0..<format.frameByteCount).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ index &* 31) }
    }

    private func writeFile(frames: Int, trailingBytes: Int = 0, folder: TemporaryDirectory) throws -> String {
        var data = Data()
        for index in 0..<frames { data.append(contentsOf: frameBytes(index)) }
        data.append(contentsOf: [UInt8](repeating: 0xEE, count: trailingBytes))
        let path = folder.path + "/frames.yuyv"
        try data.write(to: URL(fileURLWithPath: path))
        return path
    }

    func testEveryWholeFrameArrivesInOrderAsAViewOfTheFile() throws {
        let folder = TemporaryDirectory()
        let path = try writeFile(frames: 9, trailingBytes: 100, folder: folder)
        let camera = try RawFileCamera(path: path, format: format, realtime: false, bufferCount: 4)
        let sink = CollectingSink(copyAndRelease: true)
        camera.start(into: sink)
        XCTAssertEqual(sink.ended.wait(timeout: .now() + 10), .success)
        camera.stop()
        XCTAssertEqual(sink.end, .endOfInput, "the half frame at the end is not a frame")
        XCTAssertEqual(sink.frames.count, 9)
        for (index, bytes) in sink.frames.enumerated() {
            XCTAssertEqual(bytes, frameBytes(index), "frame \(index)")
        }
        XCTAssertEqual(sink.sequences, Array(0..<9))
        // Views of one mapping: frame n starts n frames after frame 0, so nothing was
        // copied into a buffer of its own.
        let offsets = sink.addresses.map { $0 - sink.addresses[0] }
        XCTAssertEqual(offsets, (0..<9).map { $0 * format.frameByteCount })
    }

    /// As fast as possible, a replay has two frames out by default, not a camera's
    /// twelve: more would only sit resident in a full queue (scripts/bench's `record`).
    func testNoMoreFramesOutThanBuffersUntilTheyAreLetGo() throws {
        XCTAssertEqual(RawFileCamera.defaultBufferCount(realtime: false), 2)
        XCTAssertEqual(RawFileCamera.defaultBufferCount(realtime: true), 12)
        let folder = TemporaryDirectory()
        let path = try writeFile(frames: 10, folder: folder)
        let camera = try RawFileCamera(path: path, format: format, realtime: false)
        let sink = CollectingSink(copyAndRelease: false)
        camera.start(into: sink)
        // A sink that keeps every frame: replay waits (it never drops) at two, and stays.
        XCTAssertTrue(waitUntil(30, interval: 0.02) { sink.heldCount == 2 }, "waited for 2 frames held: \(sink.heldCount)")
        Thread.sleep(forTimeInterval: 0.3)
        XCTAssertEqual(sink.heldCount, 2)
        XCTAssertEqual(sink.ended.wait(timeout: .now()), .timedOut)
        sink.releaseHeldAndStopHolding()
        XCTAssertEqual(sink.ended.wait(timeout: .now() + 10), .success, "letting go lets replay go on to the end")
        camera.stop()
        XCTAssertEqual(sink.sequences, Array(0..<10))
    }

    func testAFileShorterThanOneFrameIsRefusedWithTheFix() throws {
        let folder = TemporaryDirectory()
        let path = folder.path + "/short.yuyv"
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: path))
        XCTAssertThrowsError(try RawFileCamera(path: path, format: format, realtime: false)) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("less than one"), text)
            XCTAssertTrue(text.contains("--size"), text)
        }
    }
}

/// Collects what a camera delivers; either copies each frame and lets it go at once,
/// or holds every frame until told to let go.
private final class CollectingSink: CaptureSink, @unchecked Sendable {
    let ended = DispatchSemaphore(value: 0)
    private let lock = Lock()
    // Guarded by `lock`.
    private var copyAndRelease: Bool
    private var held: [VideoFrame] = []
    private var collected: [[UInt8]] = []
    private var sequenceNumbers: [Int] = []
    private var baseAddresses: [Int] = []
    private var sourceEnd: SourceEnd?

    init(copyAndRelease: Bool) { self.copyAndRelease = copyAndRelease }

    var frames: [[UInt8]] { lock.withLock { collected } }
    var sequences: [Int] { lock.withLock { sequenceNumbers } }
    var addresses: [Int] { lock.withLock { baseAddresses } }
    var heldCount: Int { lock.withLock { held.count } }
    var end: SourceEnd? { lock.withLock { sourceEnd } }

    /// Lets go of every held frame, and of each later one as it comes.
    func releaseHeldAndStopHolding() {
        lock.withLock {
            held.removeAll()
            copyAndRelease = true
        }
    }

    func deliver(_ frame: VideoFrame) {
        lock.withLock {
            sequenceNumbers.append(frame.sequence)
            baseAddresses.append(Int(bitPattern: frame.buffer.baseAddress))
            if copyAndRelease {
                collected.append(Array(frame.buffer.bytes))
            } else {
                held.append(frame)
            }
        }
        frame.buffer.doneReading()
    }

    func deliver(_ chunk: AudioChunk) {}
    func videoSourceEnded(_ name: String, _ end: SourceEnd) {
        lock.withLock { sourceEnd = end }
        ended.signal()
    }
    func audioSourceEnded(_ name: String, _ end: SourceEnd) {}
}
