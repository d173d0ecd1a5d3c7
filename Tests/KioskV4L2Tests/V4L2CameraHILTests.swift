import Foundation
import Glibc
import KioskCore
import XCTest
@testable import KioskV4L2

/// The camera against a real V4L2 driver: vivid in the HIL guest (scripts/hil). Skipped
/// unless `KIOSKCAM_HIL_CAMERA` names the device node, e.g.
///
///     KIOSKCAM_HIL_CAMERA=/dev/video0 kioskcamPackageTests.xctest KioskV4L2Tests.V4L2CameraHILTests
///
/// The tests expect vivid's webcam input (discrete 320x180, 640x360, … at 25/30/50/60 fps
/// in YUYV, UYVY, YU12, NV12 and more) and its test controls ("Disconnect", "Percentage
/// of Dropped Buffers"). The unplug test is last on purpose (it leaves the device gone).
final class V4L2CameraHILTests: XCTestCase {
    var path = ""

    override func setUpWithError() throws {
        guard let path = ProcessInfo.processInfo.environment["KIOSKCAM_HIL_CAMERA"], !path.isEmpty else {
            throw XCTSkip("set KIOSKCAM_HIL_CAMERA=/dev/videoN to run against a real camera (scripts/hil)")
        }
        self.path = path
    }

    /// Collects what a camera delivers; lets go of each frame at once like a fast encoder.
    final class Collector: CaptureSink, @unchecked Sendable {
        struct Frame {
            var byteCount: Int
            var format: VideoFormat
            var timestamp: MonotonicInstant
            var sequence: Int
            var distinctLuma: Int
        }

        private let lock = NSCondition()
        private(set) var frames: [Frame] = []
        private(set) var end: SourceEnd?
        private(set) var endCount = 0

        func deliver(_ frame: VideoFrame) {
            let bytes = frame.buffer.bytes
            let distinct = Set(bytes.prefix(frame.format.size.width * 2)).count
            lock.lock()
            frames.append(Frame(byteCount: frame.buffer.byteCount, format: frame.format, timestamp: frame.timestamp,
                                sequence: frame.sequence, distinctLuma: distinct))
            lock.broadcast()
            lock.unlock()
        }

        func deliver(_ chunk: AudioChunk) {}

        func videoSourceEnded(_ name: String, _ end: SourceEnd) {
            lock.lock()
            self.end = end
            endCount += 1
            lock.broadcast()
            lock.unlock()
        }

        func audioSourceEnded(_ name: String, _ end: SourceEnd) {}

        /// Waits until `condition` holds or `seconds` pass; returns whether it held.
        func wait(_ seconds: Double, until condition: (Collector) -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            lock.lock()
            defer { lock.unlock() }
            while !condition(self) {
                if !lock.wait(until: deadline) { return condition(self) }
            }
            return true
        }

        var snapshot: (frames: [Frame], end: SourceEnd?) {
            lock.lock()
            defer { lock.unlock() }
            return (frames, end)
        }
    }

    func now() -> MonotonicInstant { CaptureClock().now() }

    // MARK: Tests (run in name order; the unplug test must be last)

    func test1DiscoveryDescribesTheCamera() throws {
        let report = V4L2Discovery.scan()
        let camera = try XCTUnwrap(report.cameras.first { $0.path == path }, "\(report)")
        XCTAssertEqual(camera.driver, "vivid")
        XCTAssertTrue(camera.capabilities.contains("video capture"))
        XCTAssertTrue(camera.capabilities.contains("streaming"))
        for fourcc in ["YUYV", "UYVY", "YU12", "NV12"] {
            let format = try XCTUnwrap(camera.formats.first { $0.fourcc == fourcc && !$0.emulated }, fourcc)
            XCTAssertTrue(format.usable)
            XCTAssertTrue(format.sizes.contains { $0.width == 640 && $0.height == 360 && $0.frameRates.contains(30) },
                          "\(fourcc): \(format.sizes)")
        }
        XCTAssertTrue(camera.formats.contains { !$0.usable }, "vivid also offers RGB/Bayer formats")
        let brightness = try XCTUnwrap(camera.controls.first { $0.name == "Brightness" })
        XCTAssertEqual(brightness.type, "integer")
        XCTAssertNotNil(brightness.value)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let json = try encoder.encode(report)
        XCTAssertNoThrow(try JSONDecoder().decode(DiscoveryReport.self, from: json))
        print("HIL-PROBE-JSON-BYTES: \(json.count); formats \(camera.formats.count), controls \(camera.controls.count)")
        print("HIL-PROBE-CONTROLS: " + camera.controls.map(\.name).joined(separator: ", "))
    }

    /// vivid offers every raw layout kioskcam records (30 of them): each is negotiated,
    /// set, and copied out of the driver's buffers at its exact size.
    func test2StreamsEveryLayoutTightlyPacked() throws {
        for layout in PixelFormat.allCases {
            let request = VideoFormat(size: FrameSize(width: 320, height: 180), pixelFormat: layout, framesPerSecond: 30)
            let camera = try V4L2Camera(path: path, request: request)
            print("HIL-NEGOTIATION \(layout): \(camera.negotiation)")
            XCTAssertEqual(camera.format, request, camera.negotiation)
            XCTAssertEqual(camera.deviceFormat.fourcc, layout.rawValue)
            let collector = Collector()
            let started = now()
            try camera.start(into: collector)
            XCTAssertTrue(collector.wait(15) { $0.frames.count >= 10 }, "\(layout): \(collector.snapshot.frames.count) frames")
            camera.stop()
            let (frames, end) = collector.snapshot
            XCTAssertEqual(end, .stopped)
            XCTAssertEqual(collector.endCount, 1)
            XCTAssertGreaterThanOrEqual(camera.framesDelivered, 10)
            XCTAssertEqual(camera.framesDelivered, frames.count)
            XCTAssertEqual(camera.corruptFrames, 0)
            // Each frame went on in the driver's own buffer, or was copied out of it when
            // too few were left with the driver: both counted, nothing else.
            XCTAssertEqual(camera.framesLeased + camera.framesCopied, camera.framesDelivered, "\(layout)")
            print("HIL-LEASES \(layout): \(camera.framesLeased) of \(camera.framesDelivered) frames in the driver's buffers")
            for frame in frames {
                XCTAssertEqual(frame.byteCount, layout.frameByteCount(request.size))
                XCTAssertEqual(frame.format, camera.format)
                // 75 % bars in RGB and Bayer are bytes of 0 and 191 only; YUV has more levels.
                XCTAssertGreaterThan(frame.distinctLuma, layout.cost == .rgb || layout.cost == .bayer ? 1 : 3,
                                     "\(layout): vivid's colour bars are not flat")
                XCTAssertGreaterThanOrEqual(frame.timestamp, started.advanced(byNanoseconds: -1_000_000_000))
                XCTAssertLessThanOrEqual(frame.timestamp, now())
            }
            XCTAssertEqual(frames.map(\.timestamp), frames.map(\.timestamp).sorted(), "timestamps increase")
            XCTAssertEqual(frames.map(\.sequence), frames.map(\.sequence).sorted(), "sequences increase")
            // Stopped means stopped: nothing arrives afterwards.
            let count = frames.count
            usleep(300_000)
            XCTAssertEqual(collector.snapshot.frames.count, count)
        }
    }

    func test3NegotiationFollowsTheRules() throws {
        // 320x240 is not offered: the smallest larger size is 640x360.
        let camera = try V4L2Camera(path: path, request: CameraFormatRequest(size: FrameSize(width: 320, height: 240), framesPerSecond: 25))
        print("HIL-NEGOTIATION 320x240@25: \(camera.negotiation)")
        XCTAssertEqual(camera.format.size, FrameSize(width: 640, height: 360))
        XCTAssertEqual(camera.format.pixelFormat, .yuv420, "no preference: the format the encoder takes as is")
        XCTAssertEqual(camera.format.framesPerSecond, 25)
        XCTAssertEqual(try camera.device.frameRate(), FrameRate(25))
        XCTAssertTrue(camera.negotiation.contains("320x240 is not offered"), camera.negotiation)
    }

    func test4RestartAndBusy() throws {
        let request = VideoFormat(size: FrameSize(width: 320, height: 180), pixelFormat: .yuyv, framesPerSecond: 30)
        let camera = try V4L2Camera(path: path, request: request)
        let first = Collector()
        try camera.start(into: first)
        XCTAssertThrowsError(try camera.start(into: first)) { error in
            XCTAssertEqual((error as? V4L2Error)?.code, .busy, "\(error)")
        }
        XCTAssertTrue(first.wait(10) { $0.frames.count >= 3 })
        // A second opener cannot change the format while the first streams.
        XCTAssertThrowsError(try V4L2Camera(path: path, request: request)) { error in
            print("HIL-BUSY: \(error)")
            XCTAssertEqual((error as? V4L2Error)?.code, .busy, "\(error)")
            XCTAssertTrue("\(error)".contains("fuser \(path)"), "\(error)")
        }
        camera.stop()
        camera.stop()  // idempotent
        XCTAssertEqual(first.endCount, 1)
        let second = Collector()
        try camera.start(into: second)
        XCTAssertTrue(second.wait(10) { $0.frames.count >= 3 }, "streams again after stop")
        camera.stop()
        XCTAssertEqual(second.snapshot.end, .stopped)
    }

    func test5Controls() throws {
        let device = try V4L2Device(path: path)
        let controls = CameraControls(device: device)
        let available = controls.available()
        print("HIL-CONTROLS-AVAILABLE: \(available)")
        XCTAssertTrue(available.contains(.brightness))
        XCTAssertTrue(available.contains(.contrast))
        let brightness = try XCTUnwrap(try controls.describe(.brightness))
        XCTAssertEqual(try controls.set(.brightness, to: 100), brightness.range.clamp(100))
        XCTAssertEqual(try controls.value(.brightness), brightness.range.clamp(100))
        XCTAssertEqual(try controls.set(.brightness, to: 1_000_000), brightness.maximum, "clamped")
        XCTAssertEqual(try controls.value(.brightness), brightness.maximum)
        try controls.setAutomatic(.brightness)
        XCTAssertEqual(try controls.value(.brightness), brightness.defaultValue, "no auto mode: back to default")
        XCTAssertThrowsError(try controls.set(.zoom, to: 200)) { error in
            XCTAssertEqual((error as? V4L2Error)?.code, .unsupportedControl)
            XCTAssertTrue("\(error)".contains("this camera has no zoom control"), "\(error)")
        }
        let lines = controls.apply(zoom: 150, focus: .automatic, exposure: .value(10), whiteBalance: nil,
                                   brightness: 9999, contrast: 64)
        print("HIL-APPLY: \(lines)")
        XCTAssertEqual(lines.count, 5)
        XCTAssertTrue(lines.contains("zoom: this camera has no zoom control"), "\(lines)")
        XCTAssertTrue(lines.contains { $0.hasPrefix("brightness 9999 → \(brightness.maximum)") }, "\(lines)")
        // Raw access by id, with the device's own errors.
        XCTAssertThrowsError(try device.setValue(1, ofControl: 0x0098_09FF)) { error in
            print("HIL-UNKNOWN-CONTROL: \(error)")
        }
    }

    func test5bSmoothChangesRamp() throws {
        let device = try V4L2Device(path: path)
        let controls = CameraControls(device: device, rampDuration: 0.6, rampStepsPerSecond: 20)
        try controls.set(.brightness, to: 0, smoothly: false)
        XCTAssertEqual(try controls.value(.brightness), 0)
        XCTAssertEqual(try controls.set(.brightness, to: 240, smoothly: true), 240)
        var seen: Set<Int> = []
        let deadline = Date().addingTimeInterval(3)
        while Date() < deadline {
            let value = try controls.value(.brightness)
            seen.insert(value)
            if value == 240 { break }
            usleep(20_000)
        }
        try controls.waitForRamp()
        XCTAssertEqual(try controls.value(.brightness), 240)
        let between = seen.filter { $0 > 0 && $0 < 240 }
        print("HIL-RAMP: seen \(seen.sorted())")
        XCTAssertGreaterThanOrEqual(between.count, 2, "intermediate values: \(seen.sorted())")
        // Retargeting mid-ramp continues from where it is, ending at the new target.
        try controls.set(.brightness, to: 10, smoothly: true)
        usleep(100_000)
        try controls.set(.brightness, to: 200, smoothly: true)
        try controls.waitForRamp()
        XCTAssertEqual(try controls.value(.brightness), 200)
        // A direct setting cancels a running ramp and sticks.
        try controls.set(.brightness, to: 0, smoothly: true)
        usleep(100_000)
        try controls.set(.brightness, to: 77, smoothly: false)
        try controls.waitForRamp()
        XCTAssertEqual(try controls.value(.brightness), 77)
        // A ramp of another control finishes the first at its target.
        try controls.set(.brightness, to: 255, smoothly: true)
        usleep(50_000)
        try controls.set(.contrast, to: 10, smoothly: true)
        try controls.waitForRamp()
        XCTAssertEqual(try controls.value(.brightness), 255)
        XCTAssertEqual(try controls.value(.contrast), 10)
        try controls.setAutomatic(.brightness)
        try controls.setAutomatic(.contrast)
    }

    func test5cNoDescriptorLeaks() throws {
        func openDescriptors() -> Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1 }
        let before = openDescriptors()
        for _ in 0..<3 {
            let camera = try V4L2Camera(path: path, request: VideoFormat(size: FrameSize(width: 320, height: 180),
                                                                        pixelFormat: .yuyv, framesPerSecond: 30))
            let collector = Collector()
            try camera.start(into: collector)
            XCTAssertTrue(collector.wait(10) { $0.frames.count >= 2 })
            camera.stop()
        }
        usleep(100_000)
        XCTAssertEqual(openDescriptors(), before, "every camera closed its device and wake-up descriptors")
    }

    func test6NoFramesEndsTheStream() throws {
        let request = VideoFormat(size: FrameSize(width: 320, height: 180), pixelFormat: .yuyv, framesPerSecond: 30)
        let camera = try V4L2Camera(path: path, request: request, noFrameTimeout: 1.5)
        let dropAll = try XCTUnwrap(try camera.device.controls().first { $0.name == "Percentage of Dropped Buffers" },
                                    "vivid's dropped-buffers control")
        let collector = Collector()
        try camera.start(into: collector)
        XCTAssertTrue(collector.wait(10) { $0.frames.count >= 2 })
        try camera.device.setValue(100, ofControl: dropAll.id)
        defer { _ = try? camera.device.setValue(0, ofControl: dropAll.id) }
        XCTAssertTrue(collector.wait(10) { $0.end != nil }, "the stream ends by itself")
        guard case .failed(let message)? = collector.snapshot.end else {
            return XCTFail("\(String(describing: collector.snapshot.end))")
        }
        print("HIL-LOST: \(message)")
        XCTAssertTrue(message.hasPrefix("camera lost: no frame for 1.5 s"), message)
        camera.stop()  // after the end: returns at once
        XCTAssertEqual(collector.endCount, 1)
    }

    func test7CountersForBrokenAndUnwantedFrames() throws {
        let request = VideoFormat(size: FrameSize(width: 320, height: 180), pixelFormat: .yuyv, framesPerSecond: 30)
        let camera = try V4L2Camera(path: path, request: request, bufferCount: 3)
        let inject = try XCTUnwrap(try camera.device.controls().first { $0.name == "Inject V4L2_BUF_FLAG_ERROR" })
        // A sink that keeps every buffer, like an encoder that fell behind.
        final class Hoarder: CaptureSink, @unchecked Sendable {
            let lock = NSLock()
            var held: [MediaBuffer] = []
            func deliver(_ frame: VideoFrame) { lock.lock(); held.append(frame.buffer); lock.unlock() }
            func deliver(_ chunk: AudioChunk) {}
            func videoSourceEnded(_ name: String, _ end: SourceEnd) {}
            func audioSourceEnded(_ name: String, _ end: SourceEnd) {}
        }
        let hoarder = Hoarder()
        try camera.start(into: hoarder)
        try camera.device.setValue(1, ofControl: inject.id)
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, camera.droppedNoBuffer < 3 || camera.corruptFrames < 1 { usleep(50_000) }
        camera.stop()
        print("HIL-COUNTERS: delivered \(camera.framesDelivered) (\(camera.framesLeased) in the driver's buffers), no buffer \(camera.droppedNoBuffer), corrupt \(camera.corruptFrames)")
        // YUYV at 320x180 is the driver's buffer byte for byte: the first frames go on in
        // it, by reference, until only two buffers would be left with the driver; then
        // frames are copied into the pool until its 3 are held too.
        XCTAssertEqual(camera.framesLeased, 4, "6 driver buffers, 2 always left with the driver")
        XCTAssertEqual(camera.framesDelivered, camera.framesLeased + 3, "then the pool's 3 frames")
        XCTAssertGreaterThanOrEqual(camera.droppedNoBuffer, 3)
        XCTAssertEqual(camera.corruptFrames, 1, "the injected error buffer")
    }

    func test9UnplugEndsTheStream() throws {
        let request = VideoFormat(size: FrameSize(width: 320, height: 180), pixelFormat: .yuyv, framesPerSecond: 30)
        let camera = try V4L2Camera(path: path, request: request)
        let disconnect = try XCTUnwrap(try camera.device.controls().first { $0.name == "Disconnect" }, "vivid's Disconnect control")
        let collector = Collector()
        try camera.start(into: collector)
        XCTAssertTrue(collector.wait(10) { $0.frames.count >= 2 })
        try camera.device.setValue(1, ofControl: disconnect.id)
        XCTAssertTrue(collector.wait(10) { $0.end != nil }, "the stream ends by itself")
        guard case .failed(let message)? = collector.snapshot.end else {
            return XCTFail("\(String(describing: collector.snapshot.end))")
        }
        print("HIL-UNPLUGGED: \(message)")
        XCTAssertTrue(message.hasPrefix("camera unplugged (ENODEV)"), message)
        camera.stop()
        // Opening it again is a clear error, not a crash.
        XCTAssertThrowsError(try V4L2Camera(path: path, request: request)) { error in
            print("HIL-REOPEN-AFTER-UNPLUG: \(error)")
        }
    }
}
