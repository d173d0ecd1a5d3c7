import KioskCore
import XCTest

/// The output queue that drops whole GOPs, and the pre-event ring.
final class PacketBuffersTests: XCTestCase {
    private func at(_ milliseconds: Int64) -> MonotonicInstant { MonotonicInstant(nanoseconds: milliseconds * 1_000_000) }

    /// 30 fps video with a keyframe every `gop` frames (keyframes 1000 bytes, others 100)
    /// and a 100-byte AAC packet every ~21 ms, in time order.
    private func stream(seconds: Double, gop: Int = 30) -> [PacketInfo] {
        var packets: [PacketInfo] = []
        let frames = Int(seconds * 30)
        var audioTime: Int64 = 0
        for frame in 0..<frames {
            let time = Int64(frame) * 1000 / 30
            while audioTime <= time {
                packets.append(PacketInfo(media: .audio, time: at(audioTime), isKeyframe: true, byteCount: 100))
                audioTime += 21
            }
            let key = frame % gop == 0
            packets.append(PacketInfo(media: .video, time: at(time), isKeyframe: key, byteCount: key ? 1000 : 100))
        }
        return packets
    }

    func testAQueueWithRoomDropsNothing() {
        var queue = GOPQueue<Int>(byteLimit: 1_000_000)
        for (index, info) in stream(seconds: 3).enumerated() { XCTAssertEqual(queue.append(info, index), 0) }
        XCTAssertEqual(queue.droppedGOPs, 0)
        var last = -1
        while let item = queue.popFirst() {
            XCTAssertEqual(item.payload, last + 1, "in order")
            last = item.payload
        }
    }

    /// A stalled output: the queue keeps the newest GOPs, each whole, and what it hands
    /// on starts at a keyframe.
    func testAFullQueueDropsWholeGOPsFromTheOldest() {
        var queue = GOPQueue<Int>(byteLimit: 30_000)
        let packets = stream(seconds: 10)
        for (index, info) in packets.enumerated() { queue.append(info, index) }
        XCTAssertGreaterThan(queue.droppedGOPs, 5)
        XCTAssertLessThanOrEqual(queue.bytes, 30_000)
        var first: PacketInfo?
        var videoSeen = 0
        while let item = queue.popFirst() {
            if item.info.media == .video {
                if first == nil { first = item.info }
                videoSeen += 1
            }
        }
        XCTAssertEqual(first?.isKeyframe, true, "what remains starts at a keyframe")
        XCTAssertEqual(videoSeen % 30, 0, "whole GOPs only: \(videoSeen) frames")
        XCTAssertGreaterThan(queue.droppedPackets, queue.droppedGOPs * 30, "every dropped packet is counted")
    }

    /// After a drop that took the GOP a frame belongs to, video waits for the next keyframe.
    func testAfterDroppingAFramesGOPVideoWaitsForAKeyframe() {
        var queue = GOPQueue<Int>(byteLimit: 1_000)
        queue.append(PacketInfo(media: .video, time: at(0), isKeyframe: true, byteCount: 900), 0)
        XCTAssertEqual(queue.append(PacketInfo(media: .video, time: at(33), isKeyframe: false, byteCount: 900), 1), 2,
                       "no room: its own GOP goes, and so does the frame")
        XCTAssertTrue(queue.isEmpty)
        queue.append(PacketInfo(media: .video, time: at(66), isKeyframe: false, byteCount: 10), 2)
        queue.append(PacketInfo(media: .audio, time: at(70), isKeyframe: true, byteCount: 10), 3)
        XCTAssertEqual(queue.count, 1, "a P frame waits for a keyframe; sound does not")
        queue.append(PacketInfo(media: .video, time: at(99), isKeyframe: true, byteCount: 10), 4)
        XCTAssertEqual(queue.popFirst()?.payload, 3)
        XCTAssertEqual(queue.popFirst()?.payload, 4)
        XCTAssertEqual(queue.droppedPackets, 3)
        XCTAssertEqual(queue.droppedGOPs, 1)
    }

    /// The ring keeps at least `seconds` (budget allowing), starting at a keyframe.
    func testTheRingHoldsTheLastSecondsFromAKeyframe() {
        var ring = PacketRing<Int>(seconds: 5, byteLimit: 1_000_000)
        for (index, info) in stream(seconds: 20).enumerated() { ring.append(info, index) }
        XCTAssertGreaterThanOrEqual(ring.heldSeconds, 5)
        XCTAssertLessThan(ring.heldSeconds, 6.1, "no more than one GOP beyond the span")
        // A trigger at 19.5 s with 5 s before it starts at the keyframe at or before 14.5 s: 14.0 s.
        let clip = ring.packets(from: at(14_500))
        XCTAssertEqual(clip.first?.info.time, at(14_000))
        XCTAssertEqual(clip.first?.info.isKeyframe, true)
        XCTAssertTrue(clip.filter { $0.info.media == .audio }.allSatisfy { $0.info.time >= at(14_000) })
    }

    /// As the encoder delivers them: each picture, then the sound up to it, stamped up to
    /// 40 ms earlier. Once full, the span held never reads under `seconds`.
    func testTheRingsSpanHoldsWhenSoundArrivesStampedBeforeThePicture() {
        var ring = PacketRing<Int>(seconds: 1, byteLimit: 1_000_000)
        var shortest = Double.infinity
        var full = false
        for frame in 0..<300 {
            let time = Int64(frame) * 1000 / 30
            ring.append(PacketInfo(media: .video, time: at(time), isKeyframe: frame % 15 == 0, byteCount: 100), frame)
            ring.append(PacketInfo(media: .audio, time: at(max(0, time - 40)), isKeyframe: true, byteCount: 10), frame)
            full = full || ring.heldSeconds >= 1
            if full { shortest = min(shortest, ring.heldSeconds) }
        }
        XCTAssertTrue(full)
        XCTAssertGreaterThanOrEqual(shortest, 1, "the span read under pre_seconds")
        ring.removeAll()
        XCTAssertEqual(ring.heldSeconds, 0)
    }

    func testTheRingKeepsToItsByteBudget() {
        var ring = PacketRing<Int>(seconds: 60, byteLimit: 8_000)
        for (index, info) in stream(seconds: 20).enumerated() { ring.append(info, index) }
        XCTAssertLessThanOrEqual(ring.bytes, 8_000 + 4_000, "within the budget plus the GOP being built")
        XCTAssertEqual(ring.packets(from: at(0)).first?.info.isKeyframe, true)
        XCTAssertLessThan(ring.heldSeconds, 60)
    }

    func testTheRingIgnoresPacketsBeforeTheFirstKeyframe() {
        var ring = PacketRing<Int>(seconds: 5, byteLimit: 100_000)
        ring.append(PacketInfo(media: .audio, time: at(0), isKeyframe: true, byteCount: 10), 0)
        ring.append(PacketInfo(media: .video, time: at(10), isKeyframe: false, byteCount: 10), 1)
        XCTAssertEqual(ring.count, 0)
        ring.append(PacketInfo(media: .video, time: at(20), isKeyframe: true, byteCount: 10), 2)
        XCTAssertEqual(ring.packets(from: at(0)).map(\.payload), [2])
    }
}
