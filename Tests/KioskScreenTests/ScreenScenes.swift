import CCairo
import Foundation
import KioskCore
import KioskScreen
import XCTest

/// The pictures the golden tests and the HIL test draw: the live screen with a
/// test-pattern preview and a recording in progress, the PIN screen with two digits and
/// a message, the blank screen.
enum ScreenScenes {
    static func liveModel() -> ScreenModel {
        var model = ScreenModel()
        model.page = .live
        model.recordingState = .recording
        model.recordingSeconds = 83.4
        model.recordingBytes = 13_002_342
        model.audioLevels = AudioLevels(rmsDBFS: [-14.5, -22], peakHoldDBFS: [-4.5, -12], updatedAt: MonotonicInstant(nanoseconds: 0))
        model.freeBytes = 58 * 1_073_741_824 + 300 * 1_048_576
        model.cameraState = "streaming"
        model.deviceName = "kioskcam-lobby"
        model.notice = "Snapshot saved"
        model.defaultPinWarning = true
        return model
    }

    /// The live screen with the sound recorder 40 s into a sound-only recording (a
    /// swelling and fading tone, 400 level updates), the broadcast running, the torch on.
    static func soundModel() -> ScreenModel {
        var model = ScreenModel()
        model.page = .live
        model.recordingState = .recording
        model.recordingKind = .audio
        model.recordingSeconds = 40.2
        model.recordingBytes = 650_000
        model.audioLevels = AudioLevels(rmsDBFS: [-18.4], peakHoldDBFS: [-9], updatedAt: MonotonicInstant(nanoseconds: 0))
        for index in 0..<400 {
            let swell = Float(index % 100) / 100
            model.soundWaveform.add(amplitude: 0.05 + 0.4 * swell * (1 - swell) * Float(1 + index / 100))
        }
        model.freeBytes = 58 * 1_073_741_824
        model.cameraState = "streaming"
        model.deviceName = "kioskcam-lobby"
        model.broadcastAvailable = true
        model.broadcast = "● LIVE 1.2 MB"
        model.torch = true
        return model
    }

    static func pinModel() -> ScreenModel {
        var model = ScreenModel()
        model.page = .pin
        model.pinDigitsEntered = 2
        model.pinMessage = "Check your PIN"
        model.pressedTarget = .pinKey(.digit(5))
        model.deviceName = "kioskcam-lobby"
        return model
    }

    /// The media view on a day's grid (thumbnails not made: placeholders, one event
    /// mark), or on the player with a recording running (the REC badge).
    static func mediaModel(size: ScreenSize, player: Bool) -> ScreenModel {
        var browser = MediaBrowser(layout: MediaViewLayout(size: size))
        _ = browser.open()
        _ = browser.showDays(["20261123", "20261124"])
        let row = browser.layout.dayRows[0]
        let point = ScreenPoint(x: row.x + row.width / 2, y: row.y + row.height / 2)
        let time = MonotonicInstant(nanoseconds: 1_000_000_000)
        _ = browser.touch(TouchEvent(phase: .press, point: point, time: time))
        _ = browser.touch(TouchEvent(phase: .release, point: point, time: time))
        _ = browser.showDay("20261124", items: [
            MediaItem(kind: .video, path: "/none/video/20261124/101500.mp4", time: "10:15:00", seconds: 42, bytes: 5_300_000),
            MediaItem(kind: .photo, path: "/none/photo/20261124/101700.jpg", time: "10:17:00", seconds: nil, bytes: 310_000),
            MediaItem(kind: .video, path: "/none/video/20261124/111500-motion.mp4", time: "11:15:00", seconds: 20, bytes: 2_100_000,
                      eventLabel: "motion"),
            MediaItem(kind: .audio, path: "/none/audio/20261124/121500.m4a", time: "12:15:00", seconds: 95, bytes: 800_000),
        ])
        var model = ScreenModel()
        model.page = .media
        if player {
            let cell = browser.layout.cells[0]
            let centre = ScreenPoint(x: cell.x + cell.width / 2, y: cell.y + cell.height / 2)
            _ = browser.touch(TouchEvent(phase: .press, point: centre, time: time))
            _ = browser.touch(TouchEvent(phase: .release, point: centre, time: time))
            _ = browser.playback(position: 12.5, duration: 42, paused: false)
            model.recordingState = .recording
            model.recordingSeconds = 83.4
            model.recordingBytes = 13_002_342
        }
        model.media = browser
        return model
    }

    static func blankModel() -> ScreenModel {
        var model = ScreenModel()
        model.page = .blank
        return model
    }

    /// Frame 40 of the built-in test pattern, 640x480 YUYV.
    static func testPatternFrame(_ pixelFormat: PixelFormat = .yuyv) -> VideoFrame {
        let format = VideoFormat(size: FrameSize(width: 640, height: 480), pixelFormat: pixelFormat, framesPerSecond: 30)
        let buffer = MediaBuffer(capacity: format.frameByteCount)
        buffer.byteCount = format.frameByteCount
        TestPatternRenderer(format: format).render(into: buffer.mutableBytes, sequence: 40, caption: Array("2024-05-01 12:00:00".utf8))
        return VideoFrame(buffer: buffer, format: format, timestamp: MonotonicInstant(nanoseconds: 0), sequence: 40)
    }
}

/// A decoded picture for comparisons: RGBA rows.
struct RGBAImage {
    var width: Int
    var height: Int
    var pixels: [UInt8]

    /// Reads a PNG with cairo's own PNG reader.
    init(png path: String) throws {
        let surface = cairo_image_surface_create_from_png(path)!
        defer { cairo_surface_destroy(surface) }
        guard cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS else {
            throw NSError(domain: "png", code: 1, userInfo: [NSLocalizedDescriptionKey: "cannot read \(path)"])
        }
        cairo_surface_flush(surface)
        width = Int(cairo_image_surface_get_width(surface))
        height = Int(cairo_image_surface_get_height(surface))
        let stride = Int(cairo_image_surface_get_stride(surface))
        let data = cairo_image_surface_get_data(surface)!
        pixels = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            let row = UnsafeRawPointer(data + y * stride).assumingMemoryBound(to: UInt32.self)
            for x in 0..<width {
                let p = row[x], o = (y * width + x) * 4
                pixels[o] = UInt8(p >> 16 & 0xFF); pixels[o + 1] = UInt8(p >> 8 & 0xFF)
                pixels[o + 2] = UInt8(p & 0xFF); pixels[o + 3] = UInt8(p >> 24)
            }
        }
    }

    init(width: Int, height: Int, pixels: [UInt8]) {
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// Mean absolute difference per colour channel, and the share of pixels where any
    /// channel differs by more than 32.
    func difference(from other: RGBAImage) -> (meanPerChannel: [Double], farOffShare: Double)? {
        guard width == other.width, height == other.height else { return nil }
        var sums = [0, 0, 0]
        var farOff = 0
        for index in stride(from: 0, to: pixels.count, by: 4) {
            var far = false
            for channel in 0..<3 {
                let d = abs(Int(pixels[index + channel]) - Int(other.pixels[index + channel]))
                sums[channel] += d
                if d > 32 { far = true }
            }
            if far { farOff += 1 }
        }
        let count = Double(width * height)
        return (sums.map { Double($0) / count }, Double(farOff) / count)
    }
}
