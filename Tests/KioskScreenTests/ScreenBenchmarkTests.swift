import Foundation
import KioskCore
import KioskScreen
import XCTest

/// The PIN key → digit on the panel latency (target ≤ 16 ms) and the live screen's
/// cost, printed by `scripts/bench-screen` (release build). Skipped unless
/// `KIOSKCAM_BENCH_SCREEN=1`.
final class ScreenBenchmarkTests: XCTestCase {
    func testPinAndLiveRenderTimes() throws {
        guard ProcessInfo.processInfo.environment["KIOSKCAM_BENCH_SCREEN"] == "1" else {
            throw XCTSkip("set KIOSKCAM_BENCH_SCREEN=1 (scripts/bench-screen) to measure render times")
        }
        let rounds = Int(ProcessInfo.processInfo.environment["KIOSKCAM_BENCH_ROUNDS"] ?? "") ?? 200
        for format in [FramebufferPixelFormat.rgb565, .xrgb8888] {
            let framebuffer = Framebuffer.memory(size: ScreenSize(width: 800, height: 480), format: format)
            let renderer = try ScreenRenderer(framebuffer: framebuffer, rotation: .none)
            var model = ScreenModel()
            model.page = .pin
            model.deviceName = "kioskcam-lobby"
            renderer.render(model)
            var pin: [Double] = []
            var copied = 0
            for _ in 0..<rounds {
                for digit in 1...3 {
                    // The finger goes down on the key: the key turns blue and a dot fills.
                    model.pinDigitsEntered = digit
                    model.pressedTarget = .pinKey(.digit(digit))
                    let start = DispatchTime.now().uptimeNanoseconds
                    let damage = renderer.render(model)
                    pin.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
                    copied += damage.reduce(0) { $0 + $1.width * $1.height }
                }
                model.pinDigitsEntered = 0
                model.pressedTarget = nil
                renderer.render(model)
            }
            XCTAssertFalse(pin.isEmpty)
            print(String(format: "bench-screen: PIN digit 800x480 %@: median %.2f ms, p99 %.2f ms, max %.2f ms over %d renders, %d pixels copied per render",
                         format.description, percentile(pin, 0.5), percentile(pin, 0.99), pin.max() ?? 0, pin.count,
                         copied / max(1, pin.count)))

            var live = ScreenScenes.liveModel()
            live.notice = nil
            let frame = ScreenScenes.testPatternFrame()
            var liveTimes: [Double] = []
            for round in 0..<max(20, rounds / 4) {
                live.recordingSeconds = Double(round)
                let start = DispatchTime.now().uptimeNanoseconds
                try renderer.updatePreview(frame)
                renderer.render(live)
                liveTimes.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
            }
            print(String(format: "bench-screen: live frame 800x480 %@ (640x480 YUYV preview scaled + drawn + copied): median %.2f ms, p99 %.2f ms",
                         format.description, percentile(liveTimes, 0.5), percentile(liveTimes, 0.99)))

            // The sound recorder over the preview: its waveform grows a column a frame.
            var sound = ScreenScenes.soundModel()
            var soundTimes: [Double] = []
            for round in 0..<max(20, rounds / 4) {
                sound.soundWaveform.add(amplitude: Float(round % 10) / 10)
                let start = DispatchTime.now().uptimeNanoseconds
                try renderer.updatePreview(frame)
                renderer.render(sound)
                soundTimes.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
            }
            print(String(format: "bench-screen: sound recorder frame 800x480 %@ (preview + waveform panel, %d columns): median %.2f ms, p99 %.2f ms",
                         format.description, sound.soundWaveform.amplitudes.count, percentile(soundTimes, 0.5), percentile(soundTimes, 0.99)))
        }
    }

    private func percentile(_ values: [Double], _ fraction: Double) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * fraction).rounded()))]
    }
}
