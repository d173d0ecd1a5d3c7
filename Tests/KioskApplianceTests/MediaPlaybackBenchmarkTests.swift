import Foundation
import Glibc
import KioskAppliance
import KioskCore
import KioskScreen
import KioskTestSupport
import XCTest

/// The playback figures of issue 14, run by `scripts/bench-mediaview` (release build):
/// the CPU the media view's player spends on a 1280x720 30 fps recording with sound on
/// an 800x480 panel, against ffmpeg doing the same (`-re`, scaled to 800x450 RGB565,
/// sound to ALSA) in one run; and the time from starting playback to the first picture
/// on the panel. Skipped unless `KIOSKCAM_BENCH_MEDIA=1`.
final class MediaPlaybackBenchmarkTests: XCTestCase {
    private func cpuSeconds(_ who: __rusage_who) -> Double {
        var usage = rusage()
        getrusage(who.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    func testPlaybackCPUAgainstFFmpegAndFirstPicture() throws {
        let environment = ProcessInfo.processInfo.environment
        guard environment["KIOSKCAM_BENCH_MEDIA"] == "1" else {
            throw XCTSkip("set KIOSKCAM_BENCH_MEDIA=1 (scripts/bench-mediaview) to measure playback")
        }
        let seconds = Int(environment["KIOSKCAM_BENCH_SECONDS"] ?? "") ?? 10
        let device = environment["KIOSKCAM_BENCH_AUDIO"] ?? "null"
        let folder = TemporaryDirectory()
        let file = folder.path + "/101500.mp4"
        try Tool.run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=30:duration=\(seconds)",
                                "-f", "lavfi", "-i", "sine=frequency=1000:duration=\(seconds):sample_rate=48000",
                                "-c:v", "libx264", "-preset", "veryfast", "-g", "30", "-pix_fmt", "yuv420p",
                                "-c:a", "aac", "-ac", "2", file])

        // Ours: the renderer on an 800x480 RGB565 framebuffer showing the player page,
        // every picture drawn and copied to the panel as the appliance does.
        let framebuffer = Framebuffer.memory(size: ScreenSize(width: 800, height: 480), format: .rgb565)
        let renderer = try ScreenRenderer(framebuffer: framebuffer, rotation: .none)
        var browser = MediaBrowser(layout: MediaViewLayout(size: renderer.size))
        _ = browser.open()
        _ = browser.showDays(["20261124"])
        let row = browser.layout.dayRows[0], cell = browser.layout.cells[0]
        let time = MonotonicInstant(nanoseconds: 0)
        for point in [ScreenPoint(x: row.x + 5, y: row.y + 5)] {
            _ = browser.touch(TouchEvent(phase: .press, point: point, time: time))
            _ = browser.touch(TouchEvent(phase: .release, point: point, time: time))
        }
        _ = browser.showDay("20261124", items: [MediaItem(kind: .video, path: file, time: "10:15:00", seconds: Double(seconds), bytes: 1)])
        _ = browser.touch(TouchEvent(phase: .press, point: ScreenPoint(x: cell.x + 5, y: cell.y + 5), time: time))
        _ = browser.touch(TouchEvent(phase: .release, point: ScreenPoint(x: cell.x + 5, y: cell.y + 5), time: time))
        var model = ScreenModel()
        model.page = .media
        model.media = browser
        renderer.render(model)

        let area = browser.layout.picture
        let firstShown = Locked<Double?>(nil)
        let started = Date()
        let cpuBefore = cpuSeconds(RUSAGE_SELF)
        let player = MediaPlayer(path: file, kind: .video, audioDevice: device,
                                 pictureArea: FrameSize(width: area.width, height: area.height)) { pixels, size in
            renderer.presentMediaPicture(pixels, size: size, for: file)
            firstShown.withLock { if $0 == nil { $0 = Date().timeIntervalSince(started) * 1000 } }
        }
        try player.start()
        let deadline = Date().addingTimeInterval(Double(seconds) * 3 + 10)
        while !player.status.ended && Date() < deadline { usleep(50_000) }
        let wall = Date().timeIntervalSince(started)
        let ours = cpuSeconds(RUSAGE_SELF) - cpuBefore
        let status = player.status
        player.stop()
        XCTAssertTrue(status.ended, "\(status)")
        XCTAssertNil(status.failure)

        // ffmpeg doing the same in real time: scaled to 800x450 RGB565 (written to
        // /dev/null: no /dev/fb0 on a host), sound to the same ALSA device.
        let childrenBefore = cpuSeconds(RUSAGE_CHILDREN)
        let ffmpegStart = Date()
        try Tool.run("ffmpeg", ["-v", "error", "-re", "-i", file, "-map", "0:v", "-pix_fmt", "rgb565le", "-s", "800x450",
                                "-f", "rawvideo", "-y", "/dev/null", "-map", "0:a", "-f", "alsa", device])
        let ffmpegWall = Date().timeIntervalSince(ffmpegStart)
        let theirs = cpuSeconds(RUSAGE_CHILDREN) - childrenBefore

        print(String(format: "bench-mediaview: kioskcam player %.2f s CPU over %.1f s wall (%d pictures shown, %d dropped, %d underruns)",
                     ours, wall, status.framesShown, status.framesDropped, status.underruns))
        print(String(format: "bench-mediaview: ffmpeg -re %.2f s CPU over %.1f s wall", theirs, ffmpegWall))
        print(String(format: "bench-mediaview: CPU ratio kioskcam / ffmpeg %.2f (target <= 1.0)", ours / max(0.001, theirs)))
        print(String(format: "bench-mediaview: start to first picture on the panel %.0f ms (target <= 300 ms)", firstShown.withLock { $0 } ?? -1))
    }
}
