import Foundation
import XCTest
@testable import KioskCore

/// A flag that one thread sets and another reads.
private final class Flag: @unchecked Sendable {
    private let lock = Lock()
    private var raised = false
    func raise() { lock.withLock { raised = true } }
    var isRaised: Bool { lock.withLock { raised } }
}

/// Where a background thread leaves what it got.
private final class Box<Value>: @unchecked Sendable {
    private let lock = Lock()
    private var stored: Value?
    func set(_ value: Value?) { lock.withLock { stored = value } }
    var value: Value? { lock.withLock { stored } }
}

/// Describes an item as "v<sequence>" or "a<milliseconds>".
private func label(_ item: CaptureItem?) -> String {
    switch item {
    case .video(let frame)?: "v\(frame.sequence)"
    case .audio(let chunk)?: "a\(chunk.timestamp.nanoseconds / 1_000_000)"
    case nil: "nil"
    }
}

final class CaptureQueueTests: XCTestCase {
    private let videoFormat = VideoFormat(size: FrameSize(width: 16, height: 16), pixelFormat: .yuyv, framesPerSecond: 30)
    private let audioFormat = AudioFormat(sampleRate: 48_000, channels: 1)
    private var queues: [CaptureQueue] = []

    override func tearDown() {
        // Release any producer still blocked, so a failing test cannot hang the run.
        for queue in queues { queue.close() }
        queues = []
        super.tearDown()
    }

    private func makeQueue(video: Int, audio: Int, overflow: CaptureQueue.OverflowPolicy = .dropOldest,
                           expectsVideo: Bool = true, expectsAudio: Bool = true) -> CaptureQueue {
        let queue = CaptureQueue(videoCapacity: video, audioCapacity: audio, overflow: overflow,
                                 expectsVideo: expectsVideo, expectsAudio: expectsAudio)
        queues.append(queue)
        return queue
    }

    private func frame(_ sequence: Int, at milliseconds: Int64, from pool: BufferPool? = nil) -> VideoFrame {
        let buffer = pool?.take() ?? MediaBuffer(capacity: 8)
        return VideoFrame(buffer: buffer, format: videoFormat,
                          timestamp: MonotonicInstant(nanoseconds: milliseconds * 1_000_000), sequence: sequence)
    }

    private func chunk(at milliseconds: Int64, from pool: BufferPool? = nil) -> AudioChunk {
        let buffer = pool?.take() ?? MediaBuffer(capacity: 8)
        return AudioChunk(buffer: buffer, format: audioFormat, timestamp: MonotonicInstant(nanoseconds: milliseconds * 1_000_000))
    }

    // MARK: Order

    func testVideoLaneIsFIFO() {
        let queue = makeQueue(video: 8, audio: 8)
        for n in 0..<5 { queue.push(frame(n, at: Int64(n) * 33)) }
        XCTAssertEqual(queue.depth.video, 5)
        XCTAssertEqual((0..<5).map { _ in label(queue.tryPop()) }, ["v0", "v1", "v2", "v3", "v4"])
        XCTAssertNil(queue.tryPop())
    }

    func testAudioLaneIsFIFO() {
        let queue = makeQueue(video: 8, audio: 8)
        for ms: Int64 in [0, 10, 20, 30] { queue.push(chunk(at: ms)) }
        XCTAssertEqual(queue.depth.audio, 4)
        XCTAssertEqual((0..<4).map { _ in label(queue.tryPop()) }, ["a0", "a10", "a20", "a30"])
        XCTAssertNil(queue.tryPop())
    }

    func testLanesAreMergedInTimestampOrder() {
        let queue = makeQueue(video: 8, audio: 8)
        // Pushed lane by lane, not in time order.
        queue.push(frame(0, at: 0))
        queue.push(frame(1, at: 33))
        queue.push(frame(2, at: 66))
        queue.push(chunk(at: 5))
        queue.push(chunk(at: 25))
        queue.push(chunk(at: 45))
        queue.push(chunk(at: 100))
        var order: [String] = []
        while let item = queue.tryPop() { order.append(label(item)) }
        XCTAssertEqual(order, ["v0", "a5", "a25", "v1", "a45", "v2", "a100"])
    }

    func testEqualTimestampsGiveVideoFirst() {
        let queue = makeQueue(video: 4, audio: 4)
        queue.push(chunk(at: 10))
        queue.push(frame(7, at: 10))
        XCTAssertEqual(label(queue.tryPop()), "v7")
        XCTAssertEqual(label(queue.tryPop()), "a10")
    }

    func testPopReturnsTheItemsTimestamp() {
        let queue = makeQueue(video: 2, audio: 2)
        queue.push(frame(1, at: 40))
        XCTAssertEqual(queue.tryPop()?.timestamp, MonotonicInstant(nanoseconds: 40_000_000))
    }

    // MARK: Overflow

    func testDropOldestWhenFullCountsAndRecycles() {
        let pool = BufferPool(bufferCapacity: 64, count: 6)
        let queue = makeQueue(video: 3, audio: 2)
        for n in 0..<5 { queue.push(frame(n, at: Int64(n), from: pool)) }
        XCTAssertEqual(queue.depth.video, 3)
        XCTAssertEqual(queue.snapshot.droppedVideoFrames, 2)
        XCTAssertEqual(queue.snapshot.maxVideoDepth, 3)
        // The two dropped frames went back to the pool: 6 − 5 taken + 2 returned.
        XCTAssertEqual(pool.freeCount, 3)
        // The oldest were dropped, the newest kept.
        XCTAssertEqual([label(queue.tryPop()), label(queue.tryPop()), label(queue.tryPop())], ["v2", "v3", "v4"])

        for ms: Int64 in [0, 1, 2, 3] { queue.push(chunk(at: ms, from: pool)) }
        XCTAssertEqual(queue.depth.audio, 2)
        XCTAssertEqual(queue.snapshot.droppedAudioChunks, 2)
        XCTAssertEqual(queue.snapshot.droppedVideoFrames, 2)
        XCTAssertEqual([label(queue.tryPop()), label(queue.tryPop())], ["a2", "a3"])
    }

    func testABurstOfOneLaneDoesNotPushOutTheOther() {
        let queue = makeQueue(video: 2, audio: 2)
        queue.push(chunk(at: 0))
        for n in 0..<50 { queue.push(frame(n, at: Int64(n))) }
        XCTAssertEqual(queue.depth.audio, 1)
        XCTAssertEqual(queue.snapshot.droppedAudioChunks, 0)
        XCTAssertEqual(queue.snapshot.droppedVideoFrames, 48)
    }

    func testMemoryIsBounded() {
        // Nine buffers are enough for any number of frames: eight queued, one in hand.
        let pool = BufferPool(bufferCapacity: 32, count: 9)
        let queue = makeQueue(video: 8, audio: 8)
        for n in 0..<10_000 {
            guard let buffer = pool.take() else {
                XCTFail("pool ran dry at frame \(n): dropped frames were not recycled")
                return
            }
            queue.push(VideoFrame(buffer: buffer, format: videoFormat,
                                  timestamp: MonotonicInstant(nanoseconds: Int64(n)), sequence: n))
        }
        XCTAssertEqual(queue.depth.video, 8)
        XCTAssertEqual(queue.snapshot.droppedVideoFrames, 9_992)
        XCTAssertEqual(queue.snapshot.maxVideoDepth, 8)
        XCTAssertEqual(pool.freeCount, 1)
        do {
            let oldest = queue.tryPop()
            XCTAssertEqual(label(oldest), "v9992")
        }
        XCTAssertEqual(pool.freeCount, 2)
        queue.drain()
        XCTAssertEqual(pool.freeCount, 9)
    }

    // MARK: Waiting

    func testPopTimesOutWithNil() {
        let queue = makeQueue(video: 2, audio: 2)
        let began = Date()
        XCTAssertNil(queue.pop(timeout: 0.05))
        let elapsed = Date().timeIntervalSince(began)
        XCTAssertGreaterThanOrEqual(elapsed, 0.04)
        XCTAssertLessThan(elapsed, 2)
    }

    func testPopReturnsImmediatelyWhenAnItemIsQueued() {
        let queue = makeQueue(video: 2, audio: 2)
        queue.push(frame(3, at: 0))
        let began = Date()
        XCTAssertEqual(label(queue.pop(timeout: 5)), "v3")
        XCTAssertLessThan(Date().timeIntervalSince(began), 1)
    }

    func testPopWakesWhenAProducerPushes() {
        let queue = makeQueue(video: 2, audio: 2)
        let done = DispatchSemaphore(value: 0)
        let result = Box<String>()
        let thread = Thread {
            result.set(label(queue.pop(timeout: 5)))
            done.signal()
        }
        thread.start()
        Thread.sleep(forTimeInterval: 0.05)
        queue.push(frame(9, at: 0))
        XCTAssertEqual(done.wait(timeout: .now() + 2), .success, "the consumer did not wake on push")
        XCTAssertEqual(result.value, "v9")
    }

    func testCloseWakesAWaitingConsumer() {
        let queue = makeQueue(video: 2, audio: 2)
        let done = DispatchSemaphore(value: 0)
        let result = Box<String>()
        let thread = Thread {
            result.set(label(queue.pop(timeout: 30)))
            done.signal()
        }
        thread.start()
        Thread.sleep(forTimeInterval: 0.05)
        let closedAt = Date()
        queue.close()
        XCTAssertEqual(done.wait(timeout: .now() + 2), .success, "close() did not wake the consumer")
        XCTAssertLessThan(Date().timeIntervalSince(closedAt), 2)
        XCTAssertEqual(result.value, "nil")
    }

    func testClosedQueueDrainsThenReturnsNilAndRefusesNewItems() {
        let pool = BufferPool(bufferCapacity: 16, count: 4)
        let queue = makeQueue(video: 4, audio: 4)
        queue.push(frame(0, at: 0, from: pool))
        queue.push(chunk(at: 1, from: pool))
        queue.close()
        // Pushing after close recycles the buffer instead of queueing it.
        queue.push(frame(5, at: 2, from: pool))
        queue.push(chunk(at: 3, from: pool))
        XCTAssertEqual(queue.depth.video, 1)
        XCTAssertEqual(queue.depth.audio, 1)
        XCTAssertEqual(pool.freeCount, 2)
        XCTAssertEqual(label(queue.pop(timeout: 1)), "v0")
        XCTAssertEqual(label(queue.pop(timeout: 1)), "a1")
        let began = Date()
        XCTAssertNil(queue.pop(timeout: 5))
        XCTAssertLessThan(Date().timeIntervalSince(began), 1, "a closed, empty queue must not wait")
    }

    func testDrainRecyclesEverything() {
        let pool = BufferPool(bufferCapacity: 16, count: 5)
        let queue = makeQueue(video: 4, audio: 4)
        for n in 0..<3 { queue.push(frame(n, at: Int64(n), from: pool)) }
        for ms: Int64 in [0, 1] { queue.push(chunk(at: ms, from: pool)) }
        XCTAssertEqual(pool.freeCount, 0)
        queue.drain()
        XCTAssertEqual(pool.freeCount, 5)
        XCTAssertEqual(queue.depth.video, 0)
        XCTAssertEqual(queue.depth.audio, 0)
        XCTAssertNil(queue.tryPop())
    }

    func testBlockPolicyMakesTheProducerWaitForTheConsumer() {
        // No audio source: strict merging does not wait for one.
        let queue = makeQueue(video: 1, audio: 1, overflow: .block, expectsAudio: false)
        XCTAssertEqual(queue.overflow, .block)
        queue.push(frame(0, at: 0))
        let pushed = Flag()
        let done = DispatchSemaphore(value: 0)
        let second = frame(1, at: 33)
        let thread = Thread {
            queue.push(second)
            pushed.raise()
            done.signal()
        }
        thread.start()
        // The producer must still be waiting: the lane is full and nothing was dropped.
        XCTAssertEqual(done.wait(timeout: .now() + 0.2), .timedOut, "push on a full .block queue returned")
        XCTAssertFalse(pushed.isRaised)
        XCTAssertEqual(queue.depth.video, 1)
        XCTAssertEqual(queue.snapshot.droppedVideoFrames, 0)

        XCTAssertEqual(label(queue.pop(timeout: 1)), "v0")
        XCTAssertEqual(done.wait(timeout: .now() + 2), .success, "the producer was not released by pop")
        XCTAssertTrue(pushed.isRaised)
        XCTAssertEqual(label(queue.pop(timeout: 1)), "v1")
        XCTAssertEqual(queue.snapshot.droppedVideoFrames, 0)
    }

    func testBlockPolicyAppliesToAudioAndCloseReleasesTheProducer() {
        let pool = BufferPool(bufferCapacity: 16, count: 2)
        let queue = makeQueue(video: 1, audio: 1, overflow: .block, expectsVideo: false)
        queue.push(chunk(at: 0, from: pool))
        let done = DispatchSemaphore(value: 0)
        let handOver = HandOver(chunk(at: 10, from: pool))   // so that only the queue could keep it
        let thread = Thread {
            if let chunk = handOver.take() { queue.push(chunk) }
            done.signal()
        }
        thread.start()
        XCTAssertEqual(done.wait(timeout: .now() + 0.2), .timedOut, "push on a full .block audio lane returned")
        queue.close()
        XCTAssertEqual(done.wait(timeout: .now() + 2), .success, "close() did not release the blocked producer")
        // The refused chunk went back to the pool, the queued one is still there.
        XCTAssertEqual(pool.freeCount, 1)
        XCTAssertEqual(queue.depth.audio, 1)
        XCTAssertEqual(queue.snapshot.droppedAudioChunks, 0)
    }

    // MARK: Strict merging for replay (.block)

    func testBlockPolicyHandsOutAnItemOnlyOnceTheOtherLaneIsKnown() {
        let queue = makeQueue(video: 4, audio: 4, overflow: .block)
        queue.push(frame(0, at: 0))
        // Audio might still bring something earlier than the frame.
        XCTAssertNil(queue.tryPop())
        XCTAssertNil(queue.pop(timeout: 0.05))
        XCTAssertEqual(queue.depth.video, 1)
        queue.push(chunk(at: 10))
        XCTAssertEqual(label(queue.tryPop()), "v0")
        // Now the video lane is empty and the camera has not finished: the chunk waits.
        XCTAssertNil(queue.tryPop())
        queue.push(frame(1, at: 33))
        XCTAssertEqual(label(queue.tryPop()), "a10")
        XCTAssertNil(queue.tryPop())
        queue.finishAudio()
        XCTAssertEqual(label(queue.tryPop()), "v1")
        XCTAssertNil(queue.tryPop())
    }

    func testBlockPolicyMergesAFastLaneInTimeOrder() {
        // An audio file read much faster than the video: all of its chunks arrive first.
        let queue = makeQueue(video: 8, audio: 8, overflow: .block)
        for ms: Int64 in [0, 20, 40, 60, 80] { queue.push(chunk(at: ms)) }
        XCTAssertNil(queue.tryPop(), "audio ran ahead of a video lane that has not delivered")
        queue.push(frame(0, at: 0))
        queue.push(frame(1, at: 50))
        var order: [String] = []
        while let item = queue.tryPop() { order.append(label(item)) }
        XCTAssertEqual(order, ["v0", "a0", "a20", "a40", "v1"])
        queue.finishVideo()
        while let item = queue.tryPop() { order.append(label(item)) }
        XCTAssertEqual(order, ["v0", "a0", "a20", "a40", "v1", "a60", "a80"])
    }

    func testDropOldestDoesNotWaitForTheOtherLane() {
        let queue = makeQueue(video: 4, audio: 4)
        queue.push(chunk(at: 50))
        XCTAssertEqual(label(queue.tryPop()), "a50")
    }

    func testFinishWakesAWaitingConsumer() {
        let queue = makeQueue(video: 4, audio: 4, overflow: .block)
        queue.push(frame(4, at: 0))
        let done = DispatchSemaphore(value: 0)
        let result = Box<String>()
        let thread = Thread {
            result.set(label(queue.pop(timeout: 10)))
            done.signal()
        }
        thread.start()
        XCTAssertEqual(done.wait(timeout: .now() + 0.1), .timedOut, "pop handed out video before audio was known")
        queue.finishAudio()
        XCTAssertEqual(done.wait(timeout: .now() + 2), .success, "finishAudio() did not wake the consumer")
        XCTAssertEqual(result.value, "v4")
    }

    func testDoneFlags() {
        let queue = makeQueue(video: 4, audio: 4, overflow: .block)
        XCTAssertFalse(queue.isVideoDone)
        XCTAssertFalse(queue.isAudioDone)
        queue.push(frame(0, at: 0))
        queue.finishVideo()
        XCTAssertFalse(queue.isVideoDone, "finished, but a frame is still queued")
        XCTAssertFalse(queue.isAudioDone)
        queue.finishAudio()
        XCTAssertTrue(queue.isAudioDone)
        XCTAssertEqual(label(queue.tryPop()), "v0")
        XCTAssertTrue(queue.isVideoDone)

        let videoOnly = makeQueue(video: 2, audio: 2, overflow: .block, expectsAudio: false)
        XCTAssertTrue(videoOnly.isAudioDone)
        XCTAssertFalse(videoOnly.isVideoDone)
        let audioOnly = makeQueue(video: 2, audio: 2, overflow: .block, expectsVideo: false)
        XCTAssertTrue(audioOnly.isVideoDone)
        audioOnly.push(chunk(at: 0))
        XCTAssertEqual(label(audioOnly.tryPop()), "a0")
    }

    func testCloseReleasesItemsStrictMergingWouldHold() {
        let queue = makeQueue(video: 4, audio: 4, overflow: .block)
        queue.push(frame(2, at: 0))
        XCTAssertNil(queue.tryPop())
        queue.close()
        XCTAssertEqual(label(queue.pop(timeout: 1)), "v2")
        let began = Date()
        XCTAssertNil(queue.pop(timeout: 5))
        XCTAssertLessThan(Date().timeIntervalSince(began), 1)
    }

    // MARK: BufferPool

    func testPoolTakeUntilExhausted() {
        let pool = BufferPool(bufferCapacity: 100, count: 3)
        XCTAssertEqual(pool.bufferCount, 3)
        XCTAssertEqual(pool.bufferCapacity, 100)
        XCTAssertEqual(pool.freeCount, 3)
        var taken: [MediaBuffer] = []
        for expectedFree in [2, 1, 0] {
            guard let buffer = pool.take() else { return XCTFail("pool exhausted early") }
            XCTAssertEqual(buffer.capacity, 100)
            XCTAssertEqual(pool.freeCount, expectedFree)
            taken.append(buffer)
        }
        XCTAssertEqual(Set(taken.map(\.baseAddress)).count, 3, "the pool handed out one block twice")
        XCTAssertNil(pool.take())
        XCTAssertNil(pool.take())
        let address = taken[1].baseAddress
        taken.remove(at: 1)   // its last holder lets go
        XCTAssertEqual(pool.freeCount, 1)
        let again = pool.take()
        XCTAssertEqual(again?.baseAddress, address)
        XCTAssertNil(pool.take())
    }

    /// A frame shared by several consumers goes back to the pool once, when the last lets go.
    func testASharedBufferReturnsOnceWhenTheLastHolderLetsGo() {
        let pool = BufferPool(bufferCapacity: 10, count: 2)
        var first: MediaBuffer? = pool.take()
        var second = first   // the encoder and the preview hold the same frame
        XCTAssertEqual(pool.freeCount, 1)
        first = nil
        XCTAssertEqual(pool.freeCount, 1, "still held by the other consumer")
        XCTAssertNotNil(second)
        second = nil
        XCTAssertEqual(pool.freeCount, 2)
        let a = pool.take(), b = pool.take()
        XCTAssertNotNil(a)
        XCTAssertNotNil(b)
        XCTAssertNotEqual(a?.baseAddress, b?.baseAddress, "one block never goes to two owners")
        XCTAssertNil(pool.take())
    }

    func testTakeResetsByteCount() {
        let pool = BufferPool(bufferCapacity: 10, count: 1)
        do {
            let buffer = pool.take()!
            buffer.byteCount = 7
            XCTAssertEqual(buffer.bytes.count, 7)
            XCTAssertEqual(buffer.mutableBytes.count, 10)
        }
        XCTAssertEqual(pool.take()?.byteCount, 0)
    }

    func testABufferWithoutAPoolFreesItsOwnMemory() {
        let pool = BufferPool(bufferCapacity: 10, count: 1)
        let held = pool.take()
        do { _ = MediaBuffer(capacity: 10) }
        XCTAssertEqual(pool.freeCount, 0)
        XCTAssertNotNil(held)
    }

    /// A driver's buffer handed over as it is: the driver hears when it is free again.
    func testAWrappedBufferTellsItsOwnerWhenReleased() {
        let memory = UnsafeMutableRawPointer.allocate(byteCount: 16, alignment: 16)
        defer { memory.deallocate() }
        let released = ReleaseCounter()
        var buffer: MediaBuffer? = MediaBuffer(wrapping: memory, byteCount: 16) { released.add() }
        let copy = buffer
        buffer = nil
        XCTAssertEqual(released.count, 0)
        _ = copy
        XCTAssertEqual(copy?.byteCount, 16)
    }

    /// The encoder behind on both lanes: a second of sound always has the older head, and
    /// oldest-first would never hand out a frame. Full on both, the lanes take turns;
    /// otherwise (and always for a replay) the order is by time.
    func testWhenBothLanesAreFullTheyTakeTurnsSoVideoIsNotStarved() {
        let queue = makeQueue(video: 3, audio: 6)
        for index in 0..<6 { queue.push(chunk(at: Int64(index) * 20)) }           // 0…100 ms
        for index in 0..<3 { queue.push(frame(index, at: 500 + Int64(index) * 33)) }  // 500…566 ms
        // The camera and the microphone keep the lanes full while the encoder takes one item.
        var taken: [String] = []
        taken.append(label(queue.tryPop()))
        queue.push(frame(3, at: 600))
        taken.append(label(queue.tryPop()))
        queue.push(chunk(at: 120))
        taken.append(label(queue.tryPop()))
        XCTAssertEqual(taken, ["v0", "a0", "v1"], "both full: turns, although every sound chunk is older")
        XCTAssertEqual(label(queue.tryPop()), "a20", "the video lane no longer full: oldest first again")
        let replay = makeQueue(video: 2, audio: 2, overflow: .block)
        replay.push(chunk(at: 0))
        replay.push(chunk(at: 20))
        replay.push(frame(0, at: 500))
        replay.push(frame(1, at: 533))
        replay.finishAudio()
        XCTAssertEqual((0..<4).map { _ in label(replay.tryPop()) }, ["a0", "a20", "v0", "v1"], "a replay is strictly by time, full lanes or not")
        XCTAssertEqual(queue.snapshot.droppedVideoFrames, 0)
    }
}

private final class ReleaseCounter: @unchecked Sendable {
    private let lock = Lock()
    private var value = 0
    var count: Int { lock.withLock { value } }
    func add() { lock.withLock { value += 1 } }
}

/// Passes a value to another thread exactly once, keeping no reference behind.
private final class HandOver<Value>: @unchecked Sendable {
    private let lock = Lock()
    private var value: Value?
    init(_ value: Value) { self.value = value }
    func take() -> Value? { lock.withLock { defer { value = nil }; return value } }
}
