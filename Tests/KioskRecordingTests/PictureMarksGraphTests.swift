import Foundation
import KioskCore
import KioskMedia
import KioskSources
@testable import KioskRecording
import KioskTestSupport
import Logging
import XCTest

/// The overlay and the privacy masks through the real graph: libx264 files and JPEG
/// stills decoded by the ffmpeg CLI, compared with the painter's own reference rendering.
final class PictureMarksGraphTests: XCTestCase {
    let sensor = FrameSize(width: 320, height: 240)
    var format: VideoFormat { VideoFormat(size: sensor, pixelFormat: .yuv420, framesPerSecond: 30) }
    /// The top-right strip of the picture as shown.
    let maskRegion = MotionRegion(x: 0.5, y: 0, width: 0.5, height: 0.25)

    private func overlay(_ orientation: PictureOrientation) throws -> OverlaySpec {
        OverlaySpec(text: try OverlayText("%H:%M:%S"), position: .bottomLeft, heightFraction: 0.1, orientation: orientation,
                    fields: OverlayFields(deviceName: "porch", deviceID: "ab12"), atlasMaker: { GlyphAtlas.dots(cellHeight: $0) })
    }

    /// A light grey scene (luma 180), so that the black box and masks stand out.
    private func deliver(_ count: Int, into sink: CaptureSink, from first: Int = 0, pool: BufferPool) {
        for sequence in first..<(first + count) {
            guard let buffer = pool.take() else { continue }
            var canvas = YCbCrCanvas(base: buffer.baseAddress, format: format)
            canvas.fill(x: 0, y: 0, width: sensor.width, height: sensor.height, YCbCr(y: 180, cb: 128, cr: 128))
            buffer.byteCount = format.frameByteCount
            sink.deliver(VideoFrame(buffer: buffer, format: format, timestamp: SystemClock().now(), sequence: sequence))
            Thread.sleep(forTimeInterval: 1.0 / 30)
        }
    }

    /// `text` as an upright camera of the shown size would carry it (luma, shown size).
    /// `box`: the whole box; `seconds`: the cells of the seconds' two digits ("HH:MM:SS").
    private func reference(_ text: String, shown: FrameSize, fullRange: Bool) throws -> (pixels: [UInt8], box: PixelRect, seconds: PixelRect) {
        let painter = try XCTUnwrap(OverlayPainter(sensor: shown, orientation: .upright, position: .bottomLeft, heightFraction: 0.1,
                                                   fullRange: fullRange, atlasMaker: { GlyphAtlas.dots(cellHeight: $0) }))
        var pixels = [UInt8](repeating: fullRange ? 180 : 180, count: PixelFormat.yuv420.frameByteCount(shown))
        pixels.withUnsafeMutableBytes { bytes in
            let planes = PicturePlanes(size: shown, format: .yuv420,
                                       bases: PixelFormat.yuv420.planes(for: shown).map { bytes.baseAddress! + $0.offset },
                                       strides: PixelFormat.yuv420.planes(for: shown).map(\.rowBytes), fullRange: fullRange)!
            XCTAssertTrue(painter.draw(text, into: planes))
        }
        let tens = painter.shownCellRect(6)
        return (Array(pixels[0..<shown.pixelCount]), painter.shownRect,
                PixelRect(x: tens.x, y: tens.y, width: 2 * tens.width, height: tens.height))
    }

    private func meanDifference(_ a: [UInt8], _ b: [UInt8], in box: PixelRect, width: Int) -> Double {
        var total = 0
        for y in box.y..<(box.y + box.height) {
            for x in box.x..<(box.x + box.width) { total += abs(Int(a[y * width + x]) - Int(b[y * width + x])) }
        }
        return Double(total) / Double(max(1, box.width * box.height))
    }

    private func mean(_ pixels: [UInt8], in box: PixelRect, width: Int) -> Double {
        var total = 0
        for y in box.y..<(box.y + box.height) {
            for x in box.x..<(box.x + box.width) { total += Int(pixels[y * width + x]) }
        }
        return Double(total) / Double(max(1, box.width * box.height))
    }

    /// The shown picture's pixels of a fraction region.
    private func rect(_ region: MotionRegion, _ size: FrameSize) -> PixelRect {
        PixelRect(x: Int(region.x * Double(size.width)), y: Int(region.y * Double(size.height)),
                  width: Int(region.width * Double(size.width)), height: Int(region.height * Double(size.height)))
    }

    /// The time in the recording's first frame is the time it was captured (within a
    /// second), upright at the corner asked for, at every rotation; the mask is black
    /// with neutral chroma where it was drawn on the picture as shown; the still shows both.
    func testTheRecordingAndTheStillCarryTheTimeAndTheMaskAtEveryRotation() throws {
        for rotation in ScreenRotation.allCases {
            let orientation = PictureOrientation(rotation: rotation)
            let folder = TemporaryDirectory()
            var video = VideoTrackSettings(input: format, bitrate: 1_000_000, preset: "ultrafast")
            video.orientation = orientation
            var settings = RecorderSettings(layout: LibraryLayout(root: folder.path + "/media"), video: video,
                                            audio: nil, segmentPolicy: SegmentPolicy(maximumSeconds: nil))
            settings.overlay = try overlay(orientation)
            settings.privacy = PrivacyMask(regions: [maskRegion])
            let recorder = Recorder(settings: settings, clock: SystemClock(), logger: Logger(label: "test"))
            let pool = BufferPool(bufferCapacity: format.frameByteCount, count: 20)
            try recorder.start()
            let started = Date().timeIntervalSince1970
            let still = StillResultBox()
            recorder.snapshot(timeout: 5) { still.set($0) }
            deliver(20, into: recorder, pool: pool)
            try recorder.stop()
            XCTAssertEqual(recorder.waitUntilIdle(timeout: 10), .idle)
            recorder.shutdown()
            let file = try XCTUnwrap(recorder.status.finishedFiles.first)
            let shown = orientation.turnedSize(sensor)

            // The first frame as a player shows it (ffmpeg turns it by the display matrix).
            let raw = folder.path + "/first.yuv"
            try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", file, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "yuv420p", raw])
            let decoded = [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
            XCTAssertEqual(decoded.count, PixelFormat.yuv420.frameByteCount(shown), "\(orientation)")
            let luma = Array(decoded.prefix(shown.pixelCount))
            let masked = rect(maskRegion, shown)
            XCTAssertLessThanOrEqual(mean(luma, in: masked, width: shown.width), 20, "\(orientation): the mask is black")
            let chroma = Array(decoded[shown.pixelCount..<(shown.pixelCount + shown.pixelCount / 4)])
            let maskedChroma = PixelRect(x: masked.x / 2, y: masked.y / 2, width: masked.width / 2, height: masked.height / 2)
            XCTAssertEqual(mean(chroma, in: maskedChroma, width: shown.width / 2), 128, accuracy: 4, "\(orientation): neutral chroma")
            XCTAssertGreaterThan(mean(luma, in: rect(MotionRegion(x: 0, y: 0, width: 0.4, height: 0.2), shown), width: shown.width), 160,
                                 "\(orientation): the rest of the scene untouched")
            // The time: the best of the seconds around the start, read by pixel match.
            let candidates = try (-1...2).map { offset -> (Int, Double, Double) in
                let second = Int64(started) + Int64(offset)
                let text = try OverlayText("%H:%M:%S").render(unixSeconds: second, utcOffsetSeconds: TimeZone.current.secondsFromGMT(),
                                                              zoneName: "", values: .init())
                let expected = try reference(text, shown: shown, fullRange: false)
                return (offset, meanDifference(luma, expected.pixels, in: expected.box, width: shown.width),
                        meanDifference(luma, expected.pixels, in: expected.seconds, width: shown.width))
            }
            let best = try XCTUnwrap(candidates.min { $0.1 < $1.1 })
            XCTAssertLessThan(best.1, 12, "\(orientation): the box matches the reference rendering (\(candidates))")
            XCTAssertTrue((-1...1).contains(best.0), "\(orientation): the time shown is within a second of the start (\(candidates))")
            let others = candidates.filter { $0.0 != best.0 }.map(\.2)
            XCTAssertGreaterThan(others.min() ?? 0, best.2 + 10, "\(orientation): the seconds' digits of another second differ (\(candidates))")

            // The still: the same picture, turned, full range.
            XCTAssertTrue(still.wait(5))
            let jpeg = try XCTUnwrap(still.value)
            XCTAssertTrue(jpeg.hasSuffix(".jpg"), jpeg)
            let stillRaw = folder.path + "/still.gray"
            try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", jpeg, "-f", "rawvideo", "-pix_fmt", "gray", stillRaw])
            let stillLuma = [UInt8](try Data(contentsOf: URL(fileURLWithPath: stillRaw)))
            XCTAssertEqual(stillLuma.count, shown.pixelCount)
            XCTAssertLessThanOrEqual(mean(stillLuma, in: masked, width: shown.width), 20, "\(orientation): the still's mask")
            let stillBest = try (-1...2).map { offset -> Double in
                let text = try OverlayText("%H:%M:%S").render(unixSeconds: Int64(started) + Int64(offset),
                                                              utcOffsetSeconds: TimeZone.current.secondsFromGMT(), zoneName: "", values: .init())
                let expected = try reference(text, shown: shown, fullRange: true)
                return meanDifference(stillLuma, expected.pixels, in: expected.box, width: shown.width)
            }.min() ?? .infinity
            XCTAssertLessThan(stillBest, 12, "\(orientation): the still's overlay")
        }
    }

    /// At 2× digital zoom the mask stays on the same part of the scene; the preview shows
    /// the mask but not the text, and the luma branch sees neither text nor a changing clock.
    func testTheMaskFollowsDigitalZoomAndTheLumaBranchNeverSeesTheText() throws {
        let folder = TemporaryDirectory()
        var settings = RecorderSettings(layout: LibraryLayout(root: folder.path + "/media"),
                                        video: VideoTrackSettings(input: format, bitrate: 1_000_000, preset: "ultrafast"),
                                        audio: nil, segmentPolicy: SegmentPolicy(maximumSeconds: nil))
        settings.overlay = try overlay(.upright)
        let graph = MediaGraph(settings: settings, previewFramesPerSecond: 30, clock: SystemClock(), logger: Logger(label: "test"),
                               onEvent: { _ in })
        let zoom = DigitalZoomStage(downstream: graph, maximum: 4, clock: SystemClock())
        // The centre fifth of the scene.
        let centre = MotionRegion(x: 0.4, y: 0.4, width: 0.2, height: 0.2)
        let privacy = PrivacyStage(downstream: zoom, mask: PrivacyMask(regions: [centre]), orientation: .upright)
        let lumaFrames = Locked<[LumaFrame]>([])
        try XCTUnwrap(graph.luma).subscribe { frame in lumaFrames.withLock { $0.append(frame) } }
        let pool = BufferPool(bufferCapacity: format.frameByteCount, count: 20)
        try graph.video.start()
        deliver(15, into: privacy, pool: pool)
        let previewUnzoomed = try XCTUnwrap(XCTUnwrap(graph.preview).takeNewFrame())
        zoom.setZoom(2, smoothly: false)
        deliver(15, into: privacy, from: 15, pool: pool)
        let previewZoomed = try XCTUnwrap(XCTUnwrap(graph.preview).takeNewFrame())
        try graph.video.stop()
        XCTAssertEqual(graph.video.waitUntilIdle(timeout: 10), .idle)
        graph.shutdown()
        XCTAssertEqual(privacy.counters.copied, 30, "each frame copied once to be masked; the camera's buffer is never written")

        let at = { (frame: VideoFrame, x: Double, y: Double) -> UInt8 in
            frame.buffer.bytes[Int(y * Double(self.sensor.height)) * self.sensor.width + Int(x * Double(self.sensor.width))]
        }
        XCTAssertLessThan(at(previewUnzoomed, 0.5, 0.5), 20, "the preview shows the mask")
        XCTAssertGreaterThan(at(previewUnzoomed, 0.35, 0.35), 160)
        XCTAssertLessThan(at(previewZoomed, 0.35, 0.35), 20, "2×: the centre fifth now spans the centre two fifths")
        XCTAssertGreaterThan(at(previewZoomed, 0.25, 0.25), 160)
        XCTAssertGreaterThan(at(previewZoomed, 0.05, 0.95), 160, "no overlay on the preview")

        let file = try XCTUnwrap(graph.video.status.finishedFiles.first)
        let raw = folder.path + "/frames.gray"
        try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", file, "-vsync", "passthrough", "-f", "rawvideo", "-pix_fmt", "gray", raw])
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
        let frames = stride(from: 0, to: bytes.count - sensor.pixelCount + 1, by: sensor.pixelCount).map { Array(bytes[$0..<($0 + sensor.pixelCount)]) }
        XCTAssertGreaterThan(frames.count, 25)
        let pixel = { (frame: [UInt8], x: Double, y: Double) -> UInt8 in
            frame[Int(y * Double(self.sensor.height)) * self.sensor.width + Int(x * Double(self.sensor.width))]
        }
        XCTAssertLessThan(pixel(frames[2], 0.5, 0.5), 30)
        XCTAssertGreaterThan(pixel(frames[2], 0.35, 0.35), 150)
        XCTAssertLessThan(pixel(frames[frames.count - 2], 0.35, 0.35), 30, "the file's mask follows the zoom")
        // The overlay's box (bottom-left) is in the file, dark.
        let painter = try XCTUnwrap(OverlayPainter(sensor: sensor, orientation: .upright, position: .bottomLeft, heightFraction: 0.1,
                                                   atlasMaker: { GlyphAtlas.dots(cellHeight: $0) }))
        var scratch = [UInt8](repeating: 180, count: format.frameByteCount)
        scratch.withUnsafeMutableBytes { bytes in
            _ = painter.draw("00:00:00", into: PicturePlanes(packed: bytes.baseAddress!, byteCount: bytes.count, format: format)!)
        }
        let box = painter.shownRect
        XCTAssertLessThan(Double(pixel(frames[2], Double(box.x + 1) / Double(sensor.width), Double(box.y + 1) / Double(sensor.height))), 40)
        // The luma branch: the mask (black, so no motion there) but never the overlay's box.
        let luma = try XCTUnwrap(lumaFrames.withLock { $0.first })
        let lumaAt = { (x: Double, y: Double) -> UInt8 in luma.pixels[Int(y * Double(luma.height)) * luma.width + Int(x * Double(luma.width))] }
        XCTAssertLessThan(lumaAt(0.5, 0.5), 30)
        XCTAssertGreaterThan(lumaAt(Double(box.x + box.width / 2) / Double(sensor.width), Double(box.y + box.height / 2) / Double(sensor.height)), 160,
                             "no overlay in the luma branch")
    }
}
