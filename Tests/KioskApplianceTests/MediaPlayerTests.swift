import Foundation
import Glibc
import KioskAppliance
import KioskCore
import KioskMedia
import KioskTestSupport
import XCTest

/// The media view's player on real files ffmpeg made. This machine has no sound card:
/// videos without a sound track play on the monotonic clock (paced), sound goes to ALSA's
/// `null` device (unpaced); the HIL guest plays through snd-aloop.
final class MediaPlayerTests: XCTestCase {
    /// Pictures handed to `present`: when, and the centre pixel (B, G, R).
    final class Screen: @unchecked Sendable {
        let lock = NSLock()
        var shown: [(time: Double, centre: [UInt8], bytes: Int)] = []
        let start = Date()

        func present(_ pixels: UnsafeRawBufferPointer, _ size: FrameSize) {
            let i = ((size.height / 2) * size.width + size.width / 2) * 4
            let centre = Array(pixels[i..<(i + 3)])
            lock.lock()
            shown.append((Date().timeIntervalSince(start), centre, pixels.count))
            lock.unlock()
        }

        var pictures: [(time: Double, centre: [UInt8], bytes: Int)] {
            lock.lock()
            defer { lock.unlock() }
            return shown
        }
    }

    /// Red for a second, then blue; 30 fps, a keyframe a second; sound only if asked.
    private func video(in folder: TemporaryDirectory, seconds: Int, sound: Bool = false) throws -> String {
        let path = folder.path + "/101500.mp4"
        var arguments = ["-v", "error", "-f", "lavfi", "-i", "color=red:size=320x240:rate=30:duration=1",
                         "-f", "lavfi", "-i", "color=blue:size=320x240:rate=30:duration=\(seconds - 1)"]
        if sound { arguments += ["-f", "lavfi", "-i", "sine=frequency=1000:duration=\(seconds)"] }
        arguments += ["-filter_complex", "[0:v][1:v]concat=n=2:v=1[v]", "-map", "[v]"]
        if sound { arguments += ["-map", "2:a", "-c:a", "aac"] }
        arguments += ["-c:v", "libx264", "-g", "30", "-pix_fmt", "yuv420p", path]
        try Tool.run("ffmpeg", arguments)
        return path
    }

    private func waitUntilEnded(_ player: MediaPlayer, timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if player.status.ended { return true }
            usleep(20_000)
        }
        return false
    }

    func testAVideoWithoutSoundPlaysInRealTimeFrameByFrame() throws {
        let folder = TemporaryDirectory()
        let path = try video(in: folder, seconds: 2)
        let screen = Screen()
        let player = MediaPlayer(path: path, kind: .video, audioDevice: "null", pictureArea: FrameSize(width: 160, height: 120)) {
            screen.present($0, $1)
        }
        try player.start()
        XCTAssertTrue(waitUntilEnded(player, timeout: 8), "\(player.status)")
        let status = player.status
        player.stop()
        let pictures = screen.pictures
        XCTAssertNil(status.failure)
        XCTAssertEqual(status.duration ?? 0, 2, accuracy: 0.1)
        XCTAssertGreaterThanOrEqual(status.framesShown, 54, "\(status)")
        XCTAssertEqual(status.framesShown + status.framesDropped, 60, "every frame shown or dropped")
        XCTAssertEqual(pictures.first?.bytes, 160 * 120 * 4)
        XCTAssertGreaterThan(pictures.first?.centre[2] ?? 0, 200, "the first picture is red (B G R)")
        XCTAssertGreaterThan(pictures.last?.centre[0] ?? 0, 200, "the last is blue")
        // Paced by the clock: the last picture about 1.97 s after the first.
        let span = (pictures.last?.time ?? 0) - (pictures.first?.time ?? 0)
        XCTAssertEqual(span, 1.967, accuracy: 0.15, "pictures follow the clock")
        XCTAssertLessThan(status.firstFrameMilliseconds ?? 1e9, 300, "the first picture within 300 ms")
        XCTAssertLessThanOrEqual(status.syncOffsetMaxMilliseconds ?? 1e9, 60, "each picture near its time: \(status)")
    }

    func testSeekJumpsToTheTargetAndPlaysOnFromThere() throws {
        let folder = TemporaryDirectory()
        let path = try video(in: folder, seconds: 4)
        let screen = Screen()
        let player = MediaPlayer(path: path, kind: .video, audioDevice: "null", pictureArea: FrameSize(width: 160, height: 120)) {
            screen.present($0, $1)
        }
        try player.start()
        usleep(300_000)
        XCTAssertLessThan(player.status.position, 0.6)
        let seekAt = Date().timeIntervalSince(screen.start)
        player.seek(to: 3.0)
        XCTAssertEqual(player.status.position, 3.0, accuracy: 0.05)
        XCTAssertTrue(waitUntilEnded(player, timeout: 8), "\(player.status)")
        player.stop()
        let after = screen.pictures.filter { $0.time > seekAt + 0.05 }
        XCTAssertFalse(after.isEmpty)
        XCTAssertTrue(after.allSatisfy { $0.centre[0] > 200 }, "after the seek only the blue part shows")
        // From 3 s to the end (4 s) at 30 fps: about 30 pictures, not the 2 s between.
        XCTAssertEqual(Double(after.count), 30, accuracy: 4)
        XCTAssertLessThan(screen.pictures.count, 50)
    }

    func testSeeksReuseTheSoundCardInsteadOfReopeningIt() throws {
        let folder = TemporaryDirectory()
        let path = try video(in: folder, seconds: 4, sound: true)
        let screen = Screen()
        let player = MediaPlayer(path: path, kind: .video, audioDevice: "null", pictureArea: FrameSize(width: 160, height: 120)) {
            screen.present($0, $1)
        }
        try player.start()
        usleep(300_000)
        for target in [2.0, 0.5, 3.0, 3.0] {
            player.seek(to: target)
            usleep(150_000)
        }
        XCTAssertTrue(waitUntilEnded(player, timeout: 8), "\(player.status)")
        player.seek(to: 1.0)   // after the end, too
        XCTAssertTrue(waitUntil(10, interval: 0.02) { player.status.position > 1.1 }, "playing on from 1 s: \(player.status)")
        let status = player.status
        player.stop()
        XCTAssertNil(status.failure)
        XCTAssertFalse(status.ended, "playing again after the seek back")
        XCTAssertGreaterThan(status.position, 1.1)
        XCTAssertEqual(status.soundDeviceOpens, 1, "five seeks, one open: each seek drops and prepares the same card")
        XCTAssertEqual(player.status.soundDeviceOpens, 1)
    }

    func testPauseHoldsThePictureAndTheClock() throws {
        let folder = TemporaryDirectory()
        let path = try video(in: folder, seconds: 3)
        let screen = Screen()
        let player = MediaPlayer(path: path, kind: .video, audioDevice: "null", pictureArea: FrameSize(width: 160, height: 120)) {
            screen.present($0, $1)
        }
        try player.start()
        usleep(400_000)
        player.togglePause()
        let held = player.status.position
        let count = screen.pictures.count
        usleep(500_000)
        XCTAssertTrue(player.status.paused)
        XCTAssertEqual(player.status.position, held, accuracy: 0.001)
        XCTAssertLessThanOrEqual(screen.pictures.count, count + 1, "no pictures while paused")
        player.togglePause()
        XCTAssertTrue(waitUntil(10, interval: 0.02) { player.status.position > held + 0.2 }, "playing on: \(player.status)")
        XCTAssertGreaterThan(player.status.position, held + 0.2)
        player.stop()
    }

    func testSoundPlaysToTheEndThroughALSA() throws {
        let folder = TemporaryDirectory()
        let m4a = folder.path + "/101500.m4a"
        try Tool.run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=frequency=1000:duration=1", "-c:a", "aac", m4a])
        let player = MediaPlayer(path: m4a, kind: .audio, audioDevice: "null", pictureArea: FrameSize(width: 160, height: 120)) { _, _ in }
        try player.start()
        XCTAssertTrue(waitUntilEnded(player, timeout: 5), "\(player.status)")
        XCTAssertNil(player.status.failure)
        XCTAssertEqual(player.status.position, 1, accuracy: 0.1)
        player.stop()
    }

    func testBadFilesAndMissingDevicesAreClearErrors() throws {
        let folder = TemporaryDirectory()
        let bogus = folder.path + "/101500.mp4"
        try Data("not a video".utf8).write(to: URL(fileURLWithPath: bogus))
        let player = MediaPlayer(path: bogus, kind: .video, audioDevice: "null", pictureArea: FrameSize(width: 160, height: 120)) { _, _ in }
        XCTAssertThrowsError(try player.start()) { XCTAssertTrue("\($0)".contains(bogus), "\($0)") }

        let m4a = folder.path + "/101501.m4a"
        try Tool.run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=duration=1", "-c:a", "aac", m4a])
        let nowhere = MediaPlayer(path: m4a, kind: .audio, audioDevice: "hw:77,0", pictureArea: FrameSize(width: 160, height: 120)) { _, _ in }
        try nowhere.start()
        XCTAssertTrue(waitUntilEnded(nowhere, timeout: 3))
        XCTAssertTrue(nowhere.status.failure?.contains("hw:77,0") ?? false, "\(nowhere.status)")
        nowhere.stop()
    }
}
