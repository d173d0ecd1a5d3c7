import Foundation
import KioskCore
import KioskMedia
import KioskTestSupport
import XCTest

/// libavcodec's MJPEG decoder on real JPEG frames made by the ffmpeg CLI, checked against
/// ffmpeg's own decode of the same frames.
final class MJPEGDecoderTests: XCTestCase {
    let size = FrameSize(width: 320, height: 240)

    /// `count` JPEG frames of the test source in `layout` (yuvj422p like most UVC webcams,
    /// or yuvj420p), and ffmpeg's decode of frame 1 to yuv420p.
    func makeFrames(_ folder: TemporaryDirectory, layout: String, count: Int = 5) throws -> (jpegs: [[UInt8]], reference: [UInt8]) {
        try Tool.run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=size=\(size):rate=30",
                                "-frames:v", String(count), "-pix_fmt", layout, "-c:v", "mjpeg", "-q:v", "3",
                                folder.path + "/frame%d.jpg"])
        let jpegs = try (1...count).map { try [UInt8](Data(contentsOf: URL(fileURLWithPath: folder.path + "/frame\($0).jpg"))) }
        try Tool.run("ffmpeg", ["-v", "error", "-i", folder.path + "/frame1.jpg", "-pix_fmt", "yuv420p",
                                "-f", "rawvideo", folder.path + "/frame1.yuv"])
        let reference = try [UInt8](Data(contentsOf: URL(fileURLWithPath: folder.path + "/frame1.yuv")))
        return (jpegs, reference)
    }

    func decode(_ decoder: MJPEGDecoder, _ jpeg: [UInt8]) throws -> [UInt8] {
        var output = [UInt8](repeating: 0, count: decoder.outputByteCount)
        let written = try jpeg.withUnsafeBytes { input in
            try output.withUnsafeMutableBytes { try decoder.decode(input, into: $0) }
        }
        XCTAssertEqual(written, decoder.outputByteCount)
        return output
    }

    func mean(_ bytes: ArraySlice<UInt8>) -> Double {
        Double(bytes.reduce(0) { $0 + Int($1) }) / Double(max(bytes.count, 1))
    }

    func assertMatchesReference(_ decoded: [UInt8], _ reference: [UInt8], file: StaticString = #filePath, line: UInt = #line) {
        let luma = size.pixelCount, chroma = luma / 4
        XCTAssertEqual(decoded.count, PixelFormat.yuv420.frameByteCount(size), file: file, line: line)
        XCTAssertEqual(reference.count, decoded.count, "ffmpeg's yuv420p frame has the same size", file: file, line: line)
        guard reference.count == decoded.count else { return }
        let planes = [(0, luma), (luma, chroma), (luma + chroma, chroma)]
        for (index, (start, count)) in planes.enumerated() {
            let ours = mean(decoded[start..<start + count]), theirs = mean(reference[start..<start + count])
            XCTAssertEqual(ours, theirs, accuracy: index == 0 ? 0.5 : 1.5, "plane \(index) mean", file: file, line: line)
        }
        // Luma is not resampled, only mapped from full to limited range: nearly exact per pixel.
        var totalDifference = 0
        for i in 0..<luma { totalDifference += abs(Int(decoded[i]) - Int(reference[i])) }
        XCTAssertLessThan(Double(totalDifference) / Double(luma), 1.0, "mean |ΔY| per pixel", file: file, line: line)
        // The test source is colourful: the frame is not flat grey.
        XCTAssertGreaterThan(Set(decoded[0..<luma]).count, 50, file: file, line: line)
    }

    func testDecodes422JPEGLikeAWebcam() throws {
        let folder = TemporaryDirectory()
        let (jpegs, reference) = try makeFrames(folder, layout: "yuvj422p")
        let decoder = try MJPEGDecoder(size: size, maximumFrameBytes: 64 * 1024)
        XCTAssertEqual(decoder.outputByteCount, 320 * 240 * 3 / 2)
        assertMatchesReference(try decode(decoder, jpegs[0]), reference)
        // The same decoder keeps going frame after frame.
        for jpeg in jpegs.dropFirst() { XCTAssertEqual(try decode(decoder, jpeg).count, decoder.outputByteCount) }
        // And frame 1 again decodes identically (no state leaks between frames).
        XCTAssertEqual(try decode(decoder, jpegs[0]), try decode(decoder, jpegs[0]))
        // Some cameras pad the payload with zeros after the end-of-image marker.
        assertMatchesReference(try decode(decoder, jpegs[0] + [UInt8](repeating: 0, count: 300)), reference)
    }

    func testDecodes420JPEG() throws {
        let folder = TemporaryDirectory()
        let (jpegs, reference) = try makeFrames(folder, layout: "yuvj420p", count: 2)
        let decoder = try MJPEGDecoder(size: size)
        assertMatchesReference(try decode(decoder, jpegs[0]), reference)
    }

    func testFrameLargerThanTheExpectedMaximumStillDecodes() throws {
        let folder = TemporaryDirectory()
        let (jpegs, reference) = try makeFrames(folder, layout: "yuvj422p", count: 1)
        let decoder = try MJPEGDecoder(size: size, maximumFrameBytes: 100)
        assertMatchesReference(try decode(decoder, jpegs[0]), reference)
    }

    func testTruncatedJPEGIsInvalidInputAndTheNextFrameDecodes() throws {
        let folder = TemporaryDirectory()
        let (jpegs, reference) = try makeFrames(folder, layout: "yuvj422p", count: 2)
        let decoder = try MJPEGDecoder(size: size)
        for cut in [jpegs[0].count / 2, jpegs[0].count / 10, 600, 40] {
            XCTAssertThrowsError(try decode(decoder, Array(jpegs[0].prefix(cut))), "cut at \(cut) bytes") { error in
                XCTAssertEqual((error as? MediaError)?.code, .invalidInput, "\(error)")
            }
        }
        // A camera's broken frame is dropped; the stream goes on.
        assertMatchesReference(try decode(decoder, jpegs[0]), reference)
    }

    func testGarbageIsInvalidInput() throws {
        let decoder = try MJPEGDecoder(size: size)
        let cases: [[UInt8]] = [
            [],                                                 // empty
            [0xFF],                                             // too short
            Array("definitely not a jpeg".utf8),                // no SOI marker
            [0xFF, 0xD8] + [UInt8](repeating: 0xAB, count: 4000), // SOI, then noise
            [0xFF, 0xD8, 0xFF, 0xD9],                           // SOI, EOI, nothing between
        ]
        for bytes in cases {
            XCTAssertThrowsError(try decode(decoder, bytes), "\(bytes.prefix(8))") { error in
                XCTAssertEqual((error as? MediaError)?.code, .invalidInput, "\(error)")
            }
        }
    }

    func testJPEGOfAnotherSizeIsRejected() throws {
        let folder = TemporaryDirectory()
        let (jpegs, _) = try makeFrames(folder, layout: "yuvj422p", count: 1)
        let decoder = try MJPEGDecoder(size: FrameSize(width: 640, height: 480))
        XCTAssertThrowsError(try decode(decoder, jpegs[0])) { error in
            XCTAssertEqual((error as? MediaError)?.code, .invalidInput)
            XCTAssertTrue("\(error)".contains("the JPEG is 320x240, the camera was set to 640x480"), "\(error)")
        }
    }

    func testShortOutputBufferAndNothingStagedAreErrorsNotCrashes() throws {
        let folder = TemporaryDirectory()
        let (jpegs, _) = try makeFrames(folder, layout: "yuvj422p", count: 1)
        let decoder = try MJPEGDecoder(size: size)
        var small = [UInt8](repeating: 0, count: 100)
        XCTAssertThrowsError(try jpegs[0].withUnsafeBytes { input in
            try small.withUnsafeMutableBytes { try decoder.decode(input, into: $0) }
        }) { XCTAssertEqual(($0 as? MediaError)?.code, .invalidInput) }
        var output = [UInt8](repeating: 0, count: decoder.outputByteCount)
        XCTAssertThrowsError(try output.withUnsafeMutableBytes { try decoder.decodeStaged(into: $0) }) {
            XCTAssertTrue("\($0)".contains("no frame staged"), "\($0)")
        }
        // Stage, then decode later (what the camera does around giving its buffer back).
        try jpegs[0].withUnsafeBytes { try decoder.stage($0) }
        XCTAssertEqual(try output.withUnsafeMutableBytes { try decoder.decodeStaged(into: $0) }, decoder.outputByteCount)
    }
}
