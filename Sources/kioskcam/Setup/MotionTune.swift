import ArgumentParser
import Foundation
import Glibc
import KioskAppliance
import KioskCLI
import KioskCore
import KioskMedia
import Logging

/// `kioskcam motion-tune`: motion detection as the daemon runs it, on any camera or a raw
/// file, written out for a person to set `[motion]` by looking — the watched area, the
/// peak frame with what changed, the score over time against the threshold — and the
/// detector's CPU cost (`scripts/bench` reads that line).
struct MotionTune: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "motion-tune",
        abstract: "Watch the camera as motion detection does; write pictures and scores to set [motion] by.",
        discussion: """
        Writes into the --out folder: mask.png (the picture, the parts [motion] mask leaves out \
        darkened), peak.png (the frame with the most motion, changed pixels in red, the largest \
        changed area boxed), scores.png (the score over time, the threshold as a red line) and \
        scores.csv. Stop the daemon first if it holds the camera.
        """
    )

    @OptionGroup var common: CommonOptions

    @Option(help: ArgumentHelp("Camera: auto, test, a device such as /dev/video0, libcamera or libcamera:ID, or file:PATH with raw frames.", valueName: "source"))
    var camera: String?

    @Option(help: ArgumentHelp("Frame size, e.g. 1280x720.", valueName: "WxH"))
    var size: String?

    @Option(help: "Frames per second.")
    var fps: Int?

    @Option(name: .customLong("pixel-format"), help: ArgumentHelp("Pixel layout (a V4L2 fourcc) or auto.", valueName: "fourcc"))
    var pixelFormat: String?

    @Option(help: ArgumentHelp("How long to watch: 10s, 1m.", valueName: "time"))
    var duration = "10s"

    @Option(name: .shortAndLong, help: ArgumentHelp("Folder for the pictures and scores (made if missing).", valueName: "folder"))
    var out: String

    @Flag(help: "Replay a file camera in real time instead of as fast as possible.")
    var realtime = false

    func run() throws {
        try runReportingErrors {
            var configuration = try common.loadConfiguration()
            if let camera { try configuration.override("camera.source", .string(camera), origin: "--camera") }
            if let size { try configuration.override("camera.size", .string(size), origin: "--size") }
            if let fps { try configuration.override("camera.fps", .integer(Int64(fps)), origin: "--fps") }
            if let pixelFormat {
                try configuration.override("camera.pixel_format", .string(pixelFormat.lowercased() == "auto" ? "auto" : pixelFormat.uppercased()),
                                           origin: "--pixel-format")
            }
            guard let seconds = parseDuration(duration), seconds > 0, seconds <= 3600 else {
                throw CLIError("--duration \(duration): use a time from 1s to 1h, such as 10s or 1m", exitCode: 64)
            }
            do {
                try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
            } catch {
                throw CLIError("cannot make the folder \(out): \(error.localizedDescription)")
            }
            let logger = common.makeLogger(configuration)
            let source = try SourceFactory.camera(configuration, realtime: realtime, logger: logger)
            let watcher = MotionWatcher(configuration: configuration, seconds: seconds, logger: logger)
            try source.start(into: watcher)
            watcher.waitUntilDone(timeoutSeconds: seconds * 4 + 30)
            source.stop()
            let result = watcher.result()
            guard !result.observations.isEmpty else {
                throw CLIError("no frame came from \(source.name) to watch; check the camera (kioskcam probe)")
            }
            try write(result, configuration: configuration)
            print(summary(result, configuration: configuration, camera: source.format))
        }
    }

    private func write(_ result: MotionWatcher.Result, configuration: Configuration) throws {
        func save(_ rgb: [UInt8], _ width: Int, _ height: Int, _ name: String) throws {
            let path = (out as NSString).appendingPathComponent(name)
            do {
                let png = try PNGEncoder.encode(rgb, size: FrameSize(width: width, height: height), layout: .rgb24)
                try Data(png).write(to: URL(fileURLWithPath: path), options: .atomic)
            } catch {
                throw CLIError("cannot write \(path): \(error)")
            }
        }
        let (width, height) = (result.first.width, result.first.height)
        // mask.png: the first frame, unwatched parts darkened and tinted blue.
        var mask = [UInt8](repeating: 0, count: width * height * 3)
        for index in 0..<(width * height) {
            let grey = result.first.pixels[index]
            let watched = index < result.watched.count ? result.watched[index] : true
            mask[index * 3] = watched ? grey : grey / 4
            mask[index * 3 + 1] = watched ? grey : grey / 4
            mask[index * 3 + 2] = watched ? grey : UInt8(min(255, Int(grey) / 4 + 96))
        }
        try save(mask, width, height, "mask.png")
        // peak.png: the peak frame, changed pixels red, the blob's box yellow.
        let peak = result.peakFrame ?? result.first
        var picture = [UInt8](repeating: 0, count: peak.width * peak.height * 3)
        for index in 0..<(peak.width * peak.height) {
            let grey = peak.pixels[index]
            let changed = index < result.peakChanged.count && result.peakChanged[index]
            picture[index * 3] = changed ? 255 : grey
            picture[index * 3 + 1] = changed ? 40 : grey
            picture[index * 3 + 2] = changed ? 40 : grey
        }
        if let region = result.peakRegion {
            let left = Int(region.x * Double(peak.width)), top = Int(region.y * Double(peak.height))
            let right = min(peak.width - 1, Int((region.x + region.width) * Double(peak.width)))
            let bottom = min(peak.height - 1, Int((region.y + region.height) * Double(peak.height)))
            for x in max(0, left)...max(left, right) {
                for y in [top, bottom] where y >= 0 && y < peak.height { picture.replaceSubrange((y * peak.width + x) * 3..<(y * peak.width + x) * 3 + 3, with: [255, 220, 0]) }
            }
            for y in max(0, top)...max(top, bottom) {
                for x in [left, right] where x >= 0 && x < peak.width { picture.replaceSubrange((y * peak.width + x) * 3..<(y * peak.width + x) * 3 + 3, with: [255, 220, 0]) }
            }
        }
        try save(picture, peak.width, peak.height, "peak.png")
        // scores.png: the score over time on a scale up to twice the threshold (or the peak).
        let chartWidth = 800, chartHeight = 200
        var chart = [UInt8](repeating: 24, count: chartWidth * chartHeight * 3)
        let threshold = configuration.motion.thresholdPercent
        let top = max(threshold * 2, result.observations.map(\.score).max() ?? 0, 0.1)
        func row(_ value: Double) -> Int { chartHeight - 1 - min(chartHeight - 1, Int(value / top * Double(chartHeight - 1))) }
        let count = result.observations.count
        for (index, observation) in result.observations.enumerated() {
            let x = count <= 1 ? 0 : index * (chartWidth - 1) / (count - 1)
            for y in row(observation.score)..<chartHeight {
                let colour: [UInt8] = observation.isMotion ? [255, 160, 40] : [90, 170, 255]
                chart.replaceSubrange((y * chartWidth + x) * 3..<(y * chartWidth + x) * 3 + 3, with: colour)
            }
        }
        let thresholdRow = row(threshold)
        for x in 0..<chartWidth { chart.replaceSubrange((thresholdRow * chartWidth + x) * 3..<(thresholdRow * chartWidth + x) * 3 + 3, with: [230, 30, 30]) }
        try save(chart, chartWidth, chartHeight, "scores.png")
        // scores.csv
        var csv = "seconds,score_percent,changed_percent,motion,pixel_threshold,light_switch\n"
        for (time, observation) in zip(result.times, result.observations) {
            csv += String(format: "%.3f,%.3f,%.3f,%d,%d,%d\n", time, observation.score, observation.changedPercent,
                          observation.isMotion ? 1 : 0, observation.pixelThreshold, observation.lightSwitch ? 1 : 0)
        }
        do {
            try csv.write(toFile: (out as NSString).appendingPathComponent("scores.csv"), atomically: true, encoding: .utf8)
        } catch {
            throw CLIError("cannot write scores.csv in \(out): \(error.localizedDescription)")
        }
    }

    private func summary(_ result: MotionWatcher.Result, configuration: Configuration, camera: VideoFormat) -> String {
        let starts = result.observations.filter { $0.transition == .started }.count
        let switches = result.observations.filter(\.lightSwitch).count
        let perFrame = result.cpuSeconds / Double(max(1, result.observations.count))
        let rate = Double(configuration.motion.framesPerSecond)
        return [
            "watched \(String(format: "%.1f", result.times.last ?? 0)) s of \(camera): \(result.observations.count) luma frames of \(result.first.width)x\(result.first.height) at \(configuration.motion.framesPerSecond) fps",
            "peak score \(String(format: "%.2f", result.peakScore)) % at \(String(format: "%.1f", result.peakTime)) s (threshold \(String(format: "%g", configuration.motion.thresholdPercent)) %); motion started \(starts) time(s); light switches \(switches)",
            "detector CPU: \(String(format: "%.3f", perFrame * 1000)) ms per luma frame (downscale + detection) = \(String(format: "%.3f", perFrame * rate * 100)) % of one core at \(configuration.motion.framesPerSecond) fps",
            "wrote mask.png, peak.png, scores.png and scores.csv in \(out)",
        ].joined(separator: "\n")
    }
}

/// Receives camera frames, makes luma frames at `motion.fps` of source time and runs the
/// detector on the camera's thread, timing both with the thread's CPU clock.
private final class MotionWatcher: CaptureSink, @unchecked Sendable { // @unchecked: state guarded by `lock`
    struct Result {
        var observations: [MotionDetector.Observation] = []
        var times: [Double] = []
        var first = LumaFrame(width: 1, height: 1, pixels: [0], time: MonotonicInstant(nanoseconds: 0))
        var watched: [Bool] = []
        var peakScore = 0.0
        var peakTime = 0.0
        var peakFrame: LumaFrame?
        var peakChanged: [Bool] = []
        var peakRegion: MotionRegion?
        var cpuSeconds = 0.0
    }

    private let seconds: Double
    private let interval: Int64
    private let done = DispatchSemaphore(value: 0)
    private let lock = Lock()
    // Guarded by `lock`.
    private var detector: MotionDetector
    private var state = Result()
    private var start: MonotonicInstant?
    private var next: MonotonicInstant?
    private var finished = false

    init(configuration: Configuration, seconds: Double, logger: Logger) {
        self.seconds = seconds
        interval = 1_000_000_000 / Int64(max(1, configuration.motion.framesPerSecond))
        detector = MotionDetector.configured(configuration, logger: logger)
    }

    func deliver(_ frame: VideoFrame) {
        defer { frame.buffer.doneReading() }
        lock.withLock {
            guard !finished else { return }
            let start = self.start ?? frame.timestamp
            self.start = start
            let elapsed = frame.timestamp.seconds(since: start)
            if elapsed >= seconds {
                finish()
                return
            }
            if let next, frame.timestamp < next { return }
            next = frame.timestamp.advanced(byNanoseconds: interval)
            let cpuBefore = Self.threadCPUSeconds()
            guard let luma = LumaDownscaler.downscale(frame.buffer.bytes, format: frame.format, time: frame.timestamp) else { return }
            let observation = detector.observe(luma)
            state.cpuSeconds += Self.threadCPUSeconds() - cpuBefore
            if state.observations.isEmpty {
                state.first = luma
                state.watched = detector.watchedPixels
            }
            state.observations.append(observation)
            state.times.append(elapsed)
            if observation.score > state.peakScore {
                state.peakScore = observation.score
                state.peakTime = elapsed
                state.peakFrame = luma
                state.peakChanged = detector.changedPixels
                state.peakRegion = observation.region
            }
        }
    }

    func deliver(_ chunk: AudioChunk) {}
    func videoSourceEnded(_ name: String, _ end: SourceEnd) { lock.withLock { finish() } }
    func audioSourceEnded(_ name: String, _ end: SourceEnd) {}

    /// Under `lock`.
    private func finish() {
        guard !finished else { return }
        finished = true
        done.signal()
    }

    func waitUntilDone(timeoutSeconds: Double) { _ = done.wait(timeout: .now() + timeoutSeconds) }

    func result() -> Result { lock.withLock { state } }

    private static func threadCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
