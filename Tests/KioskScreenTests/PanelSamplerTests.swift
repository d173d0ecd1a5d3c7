import Foundation
import KioskCore
@testable import KioskFramebuffer
@testable import KioskScreen
import XCTest

final class PanelSamplerTests: XCTestCase {
    private let clock = ProcessMonotonicClock()

    /// Paints `rect` of `framebuffer` in one packed pixel value.
    private func paint(_ framebuffer: Framebuffer, _ rect: ScreenRect, xrgb: UInt32) {
        let plane = framebuffer.plane
        let packed = PixelPacker(framebuffer.format).pack(xrgb)
        for y in rect.y..<rect.maxY {
            for x in rect.x..<rect.maxX {
                let pixel = plane.base + y * plane.stride + x * framebuffer.format.bytesPerPixel
                if framebuffer.format.bytesPerPixel == 2 {
                    pixel.storeBytes(of: UInt16(truncatingIfNeeded: packed), as: UInt16.self)
                } else {
                    pixel.storeBytes(of: packed, as: UInt32.self)
                }
            }
        }
    }

    func testAFlashIsSeenWithinAFewMillisecondsOfBeingDrawnInEveryLayout() throws {
        for format in [FramebufferPixelFormat.xrgb8888, .rgb565, .bgr565] {
            let framebuffer = Framebuffer.memory(size: ScreenSize(width: 320, height: 240), format: format, stride: 704)
            defer { framebuffer.close() }
            let patch = ScreenRect(x: 150, y: 110, width: 16, height: 16)
            let sampler = try PanelSampler(framebuffer: framebuffer, patch: patch, samplesPerSecond: 500, capacity: 10_000, clock: clock)
            sampler.start()
            Thread.sleep(forTimeInterval: 0.3)
            let drawn = clock.now()
            paint(framebuffer, patch, xrgb: 0xFFFFFF)
            Thread.sleep(forTimeInterval: 0.2)
            sampler.stop()
            let samples = sampler.samples
            // 0.5 s at 500 a second is 250; a loaded build machine gets fewer, never none.
            XCTAssertGreaterThan(samples.count, 60, "\(format)")
            XCTAssertEqual(sampler.droppedSamples, 0)
            XCTAssertEqual(samples.first?.brightness, 0, "\(format): black before")
            XCTAssertEqual(samples.last?.brightness, 255, "\(format): white after, every channel widened to 8 bits")
            XCTAssertEqual(zip(samples, samples.dropFirst()).filter { $0.time > $1.time }.count, 0, "in time order")
            var detector = MarkOnsetDetector(threshold: 128, quietSeconds: 0.2)
            for sample in samples { detector.feed(level: sample.brightness, at: Double(sample.time.nanoseconds) / 1e9) }
            let onset = try XCTUnwrap(detector.onsets.first, "\(format): the flash is an onset")
            let late = onset - Double(drawn.nanoseconds) / 1e9
            XCTAssertGreaterThanOrEqual(late, 0, "\(format): not seen before it was drawn")
            XCTAssertLessThan(late, 0.05, "\(format): seen by the next reading or so (2 ms apart)")
        }
    }

    func testTheBrightnessIsThePatchMeanOfRedGreenAndBlue() throws {
        let framebuffer = Framebuffer.memory(size: ScreenSize(width: 64, height: 64), format: .xrgb8888)
        defer { framebuffer.close() }
        let patch = ScreenRect(x: 8, y: 8, width: 10, height: 10)
        paint(framebuffer, ScreenRect(x: 8, y: 8, width: 10, height: 5), xrgb: 0xFF0000)   // top half red
        paint(framebuffer, ScreenRect(x: 0, y: 13, width: 64, height: 51), xrgb: 0x00FFFF) // below cyan, outside too
        let sampler = try PanelSampler(framebuffer: framebuffer, patch: patch, samplesPerSecond: 1000, capacity: 3, clock: clock)
        sampler.start()
        Thread.sleep(forTimeInterval: 0.1)
        sampler.stop()
        // Red is 255/3 per pixel, cyan 510/3: the mean is (85 + 170) / 2.
        XCTAssertEqual(sampler.samples.map(\.brightness), [127.5, 127.5, 127.5])
        XCTAssertGreaterThan(sampler.droppedSamples, 0, "beyond the capacity: counted, not kept")
    }

    func testPatchesOutsideThePanelAndNonsenseRatesAreRefusedWithTheReason() {
        let framebuffer = Framebuffer.memory(size: ScreenSize(width: 800, height: 480), format: .xrgb8888)
        defer { framebuffer.close() }
        for (patch, rate) in [(ScreenRect(x: 790, y: 0, width: 16, height: 16), 250),
                              (ScreenRect(x: -1, y: 0, width: 16, height: 16), 250),
                              (ScreenRect(x: 0, y: 0, width: 0, height: 16), 250),
                              (ScreenRect(x: 0, y: 0, width: 16, height: 16), 0),
                              (ScreenRect(x: 0, y: 0, width: 16, height: 16), 100_000)] {
            XCTAssertThrowsError(try PanelSampler(framebuffer: framebuffer, patch: patch, samplesPerSecond: rate, capacity: 10,
                                                  clock: clock)) { error in
                guard let error = error as? ScreenError else { return XCTFail("\(error)") }
                XCTAssertEqual(error.code, .invalidGeometry)
                XCTAssertTrue("\(error)".contains(rate == 250 ? "outside the 800x480 panel" : "samples a second"), "\(error)")
            }
        }
    }

    func testStopWithoutStartAndStopTwiceAreHarmless() throws {
        let framebuffer = Framebuffer.memory(size: ScreenSize(width: 32, height: 32), format: .rgb565)
        defer { framebuffer.close() }
        let sampler = try PanelSampler(framebuffer: framebuffer, patch: ScreenRect(x: 0, y: 0, width: 4, height: 4),
                                       samplesPerSecond: 250, capacity: 100, clock: clock)
        sampler.stop()
        XCTAssertEqual(sampler.samples, [])
        let running = try PanelSampler(framebuffer: framebuffer, patch: ScreenRect(x: 0, y: 0, width: 4, height: 4),
                                       samplesPerSecond: 250, capacity: 100, clock: clock)
        running.start()
        Thread.sleep(forTimeInterval: 0.05)
        running.stop()
        let count = running.samples.count
        running.stop()
        Thread.sleep(forTimeInterval: 0.05)
        XCTAssertEqual(running.samples.count, count, "nothing read after stop")
        XCTAssertGreaterThan(count, 0)
    }
}
