import Foundation
import KioskCore
import KioskTestSupport
import XCTest
@testable import KioskV4L2

/// What the capture thread does with each dequeued buffer, on recorded frames: vivid has
/// no MJPEG, so the MJPEG camera path is exercised here with JPEGs made by ffmpeg.
final class CapturedFrameConverterTests: XCTestCase {
    let size = FrameSize(width: 320, height: 240)

    func jpegs(_ folder: TemporaryDirectory, count: Int = 3) throws -> [[UInt8]] {
        try Tool.run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=size=\(size):rate=30", "-frames:v", String(count),
                                "-pix_fmt", "yuvj422p", "-c:v", "mjpeg", folder.path + "/f%d.jpg"])
        return try (1...count).map { try [UInt8](Data(contentsOf: URL(fileURLWithPath: folder.path + "/f\($0).jpg"))) }
    }

    func mjpegConverter(bufferCount: Int = 4) throws -> CapturedFrameConverter {
        try CapturedFrameConverter(delivery: .mjpeg, size: size, bytesPerLine: 0, maximumFrameBytes: 200_000, bufferCount: bufferCount)
    }

    func testMJPEGFrameIsCopiedOutThenDecoded() throws {
        let folder = TemporaryDirectory()
        var frame = try jpegs(folder)[0]
        let converter = try mjpegConverter()
        do {
            let staged = frame.withUnsafeBytes { converter.copyOut($0, flaggedError: false) }
            // The driver refills its buffer as soon as it has it back: the staged copy is ours.
            for i in frame.indices { frame[i] = 0 }
            let buffer = try converter.finish(staged).get()
            XCTAssertEqual(buffer.byteCount, PixelFormat.yuv420.frameByteCount(size))
            XCTAssertGreaterThan(Set(buffer.bytes.prefix(size.pixelCount)).count, 50, "a real picture, not grey")
            XCTAssertEqual(converter.pool.freeCount, 3, "held while a consumer has it")
        }
        XCTAssertEqual(converter.pool.freeCount, 4, "back in the pool once the last holder lets go")
    }

    func testBrokenJPEGsAreCountedAsCorruptAndTheirBuffersReturn() throws {
        let folder = TemporaryDirectory()
        let good = try jpegs(folder)[1]
        let converter = try mjpegConverter()
        for broken in [Array(good.prefix(good.count / 2)), [], Array("not a jpeg".utf8)] {
            let staged = broken.withUnsafeBytes { converter.copyOut($0, flaggedError: false) }
            XCTAssertEqual(converter.finish(staged).failure, .corrupt)
        }
        let flagged = good.withUnsafeBytes { converter.copyOut($0, flaggedError: true) }
        XCTAssertEqual(converter.finish(flagged).failure, .corrupt)
        XCTAssertEqual(converter.pool.freeCount, 4, "no buffer lost to a broken frame")
        // The stream goes on.
        let staged = good.withUnsafeBytes { converter.copyOut($0, flaggedError: false) }
        XCTAssertNotNil(try? converter.finish(staged).get())
    }

    func testPoolExhaustionDropsWithoutDecoding() throws {
        let folder = TemporaryDirectory()
        let good = try jpegs(folder, count: 1)[0]
        let converter = try mjpegConverter(bufferCount: 2)
        var held = try (0..<2).map { _ in try good.withUnsafeBytes { try converter.finish(converter.copyOut($0, flaggedError: false)).get() } }
        let third = good.withUnsafeBytes { converter.copyOut($0, flaggedError: false) }
        XCTAssertEqual(converter.finish(third).failure, .noBuffer)
        held.removeAll()   // the consumers let go
        XCTAssertNotNil(try? good.withUnsafeBytes { try converter.finish(converter.copyOut($0, flaggedError: false)).get() })
    }

    func testRawFramesArePackedAndShortOnesDropped() throws {
        let small = FrameSize(width: 4, height: 2)
        let converter = try CapturedFrameConverter(delivery: .raw(.yuyv), size: small, bytesPerLine: 12,
                                                   maximumFrameBytes: 24, bufferCount: 2)
        let padded: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8, 0xEE, 0xEE, 0xEE, 0xEE,
                               9, 10, 11, 12, 13, 14, 15, 16, 0xEE, 0xEE, 0xEE, 0xEE]
        do {
            let buffer = try padded.withUnsafeBytes { try converter.finish(converter.copyOut($0, flaggedError: false)).get() }
            XCTAssertEqual(Array(buffer.bytes), Array(1...16))
        }
        let short = Array(padded.prefix(15))
        XCTAssertEqual(short.withUnsafeBytes { converter.finish(converter.copyOut($0, flaggedError: false)) }.failure, .corrupt)
        XCTAssertEqual(converter.pool.freeCount, 2)
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let failure) = self { return failure }
        return nil
    }
}
