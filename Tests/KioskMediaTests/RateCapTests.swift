import Foundation
import KioskCore
@testable import KioskMedia
import XCTest

/// The encoder's rate cap on the scene that broke the pre-event ring: a still picture,
/// then noise. Without a cap libx264 spends what it saved on the still seconds at once.
final class RateCapTests: XCTestCase {
    func testTheCapIsOneAndAHalfTimesTheBitrateOverOneSecond() {
        XCTAssertEqual(EncodingPolicy.rateCap(bitrate: 9_308_160).maximumRate, 13_962_240)
        XCTAssertEqual(EncodingPolicy.rateCap(bitrate: 9_308_160).bufferBits, 9_308_160)
        XCTAssertEqual(EncodingPolicy.rateCap(bitrate: 0).maximumRate, 0, "no bitrate, no cap")
        XCTAssertEqual(EncodingPolicy.rateCap(bitrate: Int.max).maximumRate, Int.max, "no trap on a huge figure")
    }

    func testNoiseAfterAStillSceneStaysUnderTheCap() throws {
        let format = VideoFormat(size: FrameSize(width: 320, height: 240), pixelFormat: .yuv420, framesPerSecond: 30)
        let bitrate = 800_000
        let encoder = try LibavVideoEncoder(settings: VideoTrackSettings(input: format, bitrate: bitrate, keyframeInterval: 30,
                                                                         preset: "ultrafast", tune: "zerolatency"))
        var bytesPerSecond = [Int](repeating: 0, count: 8)
        var frameIndex = 0
        var pixels = [UInt8](repeating: 128, count: format.frameByteCount)
        var seed: UInt64 = 12345
        for second in 0..<8 {
            for _ in 0..<30 {
                if second >= 5 {  // 5 s still, then 3 s of noise
                    for index in 0..<(320 * 240) {
                        seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                        pixels[index] = UInt8(truncatingIfNeeded: seed >> 56)
                    }
                }
                let time = MonotonicInstant(nanoseconds: Int64(frameIndex) * 1_000_000_000 / 30)
                try pixels.withUnsafeBytes { raw in
                    try encoder.encode(copying: raw, format: format, time: time, forceKeyframe: false) { packet in
                        bytesPerSecond[min(7, Int(packet.time.nanoseconds / 1_000_000_000))] += packet.byteCount
                    }
                }
                frameIndex += 1
            }
        }
        try encoder.flush { packet in bytesPerSecond[min(7, Int(packet.time.nanoseconds / 1_000_000_000))] += packet.byteCount }
        let noiseRates = bytesPerSecond[5...].map { $0 * 8 }
        let cap = EncodingPolicy.rateCap(bitrate: bitrate)
        // Within the cap plus what the one-second buffer may hold at the change.
        XCTAssertLessThanOrEqual(noiseRates.max() ?? .max, cap.maximumRate + cap.bufferBits,
                                 "bits per second of noise after a still scene: \(noiseRates), cap \(cap)")
        XCTAssertLessThanOrEqual(noiseRates.dropFirst().max() ?? .max, cap.maximumRate * 11 / 10,
                                 "after the first second, the cap itself: \(noiseRates)")
    }
}
