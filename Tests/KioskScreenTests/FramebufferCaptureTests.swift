import Foundation
import KioskCore
@testable import KioskFramebuffer
@testable import KioskScreen
import XCTest

/// The screen as a camera: the frames carry what the framebuffer holds, in a layout the
/// encoder reads, turned back as the user sees it.
final class FramebufferCaptureTests: XCTestCase {
    final class Frames: CaptureSink, @unchecked Sendable {
        let frames = Locked<[VideoFrame]>([])
        let ended = Locked(false)
        func deliver(_ frame: VideoFrame) { frames.withLock { $0.append(frame) } }
        func deliver(_ chunk: AudioChunk) {}
        func videoSourceEnded(_ name: String, _ end: SourceEnd) { ended.withLock { $0 = true } }
        func audioSourceEnded(_ name: String, _ end: SourceEnd) {}
    }

    /// Captures for `seconds` and returns the frames.
    func capture(_ source: FramebufferCapture, seconds: Double) -> [VideoFrame] {
        let sink = Frames()
        source.start(into: sink)
        Thread.sleep(forTimeInterval: seconds)
        source.stop()
        XCTAssertTrue(sink.ended.withLock { $0 })
        return sink.frames.withLock { $0 }
    }

    /// A red pixel at (3, 2) of a 64x32 XRGB8888 framebuffer, the rest black.
    func framebuffer(stride: Int? = nil) -> Framebuffer {
        let framebuffer = Framebuffer.memory(size: ScreenSize(width: 64, height: 32), format: .xrgb8888, stride: stride)
        let plane = framebuffer.plane
        (plane.base + 2 * plane.stride + 3 * 4).storeBytes(of: UInt32(0x00FF_0000).littleEndian, as: UInt32.self)
        return framebuffer
    }

    func testPackedRowsAreHandedOverWithoutACopyAtTheAskedRate() throws {
        let screen = framebuffer()
        defer { screen.close() }
        let source = try FramebufferCapture(framebuffer: screen, rotation: .none, framesPerSecond: 10, framesInFlight: 3,
                                            clock: ProcessMonotonicClock())
        XCTAssertEqual(source.format, VideoFormat(size: FrameSize(width: 64, height: 32), pixelFormat: .xbgr32, framesPerSecond: 10))
        let frames = capture(source, seconds: 1.05)
        XCTAssertTrue((9...12).contains(frames.count), "\(frames.count) frames in 1 s at 10 fps")
        let first = try XCTUnwrap(frames.first)
        XCTAssertEqual(first.buffer.baseAddress, screen.plane.base, "the framebuffer's own pixels")
        XCTAssertEqual(first.buffer.byteCount, 64 * 32 * 4)
        // B, G, R, X in memory: red is byte 2.
        XCTAssertEqual(Array(first.buffer.bytes[(2 * 64 + 3) * 4..<(2 * 64 + 4) * 4]), [0, 0, 255, 0])
    }

    func testPaddedRowsAreCopiedPackedAndTheEncoderHoldingEveryFrameSkipsAndCounts() throws {
        let screen = framebuffer(stride: 64 * 4 + 64)
        defer { screen.close() }
        let source = try FramebufferCapture(framebuffer: screen, rotation: .none, framesPerSecond: 15, framesInFlight: 2,
                                            clock: ProcessMonotonicClock())
        let frames = capture(source, seconds: 0.5)
        XCTAssertEqual(frames.count, 2, "the pool holds two frames and nobody gave them back")
        XCTAssertGreaterThan(source.skippedFrames, 3)
        let first = try XCTUnwrap(frames.first)
        XCTAssertNotEqual(first.buffer.baseAddress, screen.plane.base)
        XCTAssertEqual(first.buffer.byteCount, 64 * 32 * 4)
        XCTAssertEqual(Array(first.buffer.bytes[(2 * 64 + 3) * 4..<(2 * 64 + 4) * 4]), [0, 0, 255, 0])
    }

    /// A screen scaled for the broadcast's budget: libswscale reads the padded mapping and
    /// writes 4:2:0 at the asked size into the pool, which the encoder takes as it is.
    func testAScaledScreenArrivesAsFourTwoZeroAtTheAskedSize() throws {
        let screen = framebuffer(stride: 64 * 4 + 64)
        defer { screen.close() }
        let plane = screen.plane
        for row in 0..<32 {
            for column in 0..<32 {   // the left half white, the right half black
                (plane.base + row * plane.stride + column * 4).storeBytes(of: UInt32(0x00FF_FFFF).littleEndian, as: UInt32.self)
            }
        }
        let size = FrameSize(width: 32, height: 16)
        let source = try FramebufferCapture(framebuffer: screen, rotation: .none, framesPerSecond: 10, framesInFlight: 2, size: size,
                                            clock: ProcessMonotonicClock())
        XCTAssertEqual(source.format, VideoFormat(size: size, pixelFormat: .yuv420, framesPerSecond: 10))
        let frame = try XCTUnwrap(capture(source, seconds: 0.3).first)
        XCTAssertNotEqual(frame.buffer.baseAddress, screen.plane.base)
        XCTAssertEqual(frame.buffer.byteCount, 32 * 16 * 3 / 2)
        let luma = Array(frame.buffer.bytes[0..<32 * 16])
        XCTAssertGreaterThan(luma[8 * 32 + 4], 200, "white on the left")
        XCTAssertLessThan(luma[8 * 32 + 28], 40, "black on the right")
        // Chroma of grey is neutral.
        XCTAssertEqual(Double(frame.buffer.bytes[32 * 16 + 4 * 16 + 2]), 128, accuracy: 4)
    }

    /// A turned panel scaled: the turned picture (as the user sees it) goes through the same
    /// one libswscale conversion into 4:2:0 at the asked size.
    func testATurnedPanelIsScaledAsTheUserSeesIt() throws {
        let screen = framebuffer()
        defer { screen.close() }
        let plane = screen.plane
        for row in 0..<16 {   // the panel's top half white
            for column in 0..<64 {
                (plane.base + row * plane.stride + column * 4).storeBytes(of: UInt32(0x00FF_FFFF).littleEndian, as: UInt32.self)
            }
        }
        let size = FrameSize(width: 16, height: 32)
        let source = try FramebufferCapture(framebuffer: screen, rotation: .quarter, framesPerSecond: 10, framesInFlight: 2, size: size,
                                            clock: ProcessMonotonicClock())
        XCTAssertEqual(source.format, VideoFormat(size: size, pixelFormat: .yuv420, framesPerSecond: 10))
        let frame = try XCTUnwrap(capture(source, seconds: 0.3).first)
        XCTAssertEqual(frame.buffer.byteCount, 16 * 32 * 3 / 2)
        // What the user sees (32x64 RGBA), sampled where the scaled pixel comes from.
        let logical = screen.logicalRGBA(rotation: .quarter)
        for (x, y) in [(2, 16), (13, 16)] {
            let white = logical[((2 * y) * 32 + 2 * x) * 4] > 128
            let luma = frame.buffer.bytes[y * 16 + x]
            XCTAssertTrue(white ? luma > 200 : luma < 40, "(\(x), \(y)): luma \(luma), the user sees \(white ? "white" : "black")")
        }
        XCTAssertNotEqual(logical[(32 * 32 + 4) * 4] > 128, logical[(32 * 32 + 26) * 4] > 128, "one side white, one black")
    }

    func testATurnedPanelIsTurnedBack() throws {
        let screen = framebuffer()
        defer { screen.close() }
        let source = try FramebufferCapture(framebuffer: screen, rotation: .quarter, framesPerSecond: 10, framesInFlight: 2,
                                            clock: ProcessMonotonicClock())
        XCTAssertEqual(source.format.size, FrameSize(width: 32, height: 64))
        XCTAssertEqual(source.format.pixelFormat, .rgba32)
        let frame = try XCTUnwrap(capture(source, seconds: 0.3).first)
        let expected = screen.logicalRGBA(rotation: .quarter)
        XCTAssertEqual(Array(frame.buffer.bytes), expected)
        XCTAssertEqual(expected.count, 32 * 64 * 4)
        XCTAssertTrue(expected.contains(255), "the red pixel is somewhere")
    }

    func testALayoutNoCameraFormatSpellsGoesThroughRGBA() throws {
        // vfb's 16 bpp layout: blue in the high bits.
        let screen = Framebuffer.memory(size: ScreenSize(width: 16, height: 8), format: .bgr565)
        defer { screen.close() }
        (screen.plane.base + 3 * screen.plane.stride + 5 * 2).storeBytes(of: UInt16(0x001F).littleEndian, as: UInt16.self)
        let source = try FramebufferCapture(framebuffer: screen, rotation: .none, framesPerSecond: 10, framesInFlight: 2,
                                        clock: ProcessMonotonicClock())
        XCTAssertEqual(source.format.pixelFormat, .rgba32)
        let frame = try XCTUnwrap(capture(source, seconds: 0.3).first)
        XCTAssertEqual(Array(frame.buffer.bytes[(3 * 16 + 5) * 4..<(3 * 16 + 6) * 4]), [255, 0, 0, 255], "red, as the user sees it")
        XCTAssertEqual(Array(frame.buffer.bytes[0..<4]), [0, 0, 0, 255])
    }
}

/// The monotonic clock of the process (`CLOCK_MONOTONIC`), for real-time pacing in tests
/// of a module that does not see `SystemClock`.
struct ProcessMonotonicClock: MonotonicClock {
    func now() -> MonotonicInstant {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return MonotonicInstant(nanoseconds: Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec))
    }
}
