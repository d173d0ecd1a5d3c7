import Foundation
import KioskTestSupport
import XCTest

/// `clip.export` through the running daemon (`kioskcam clip`): the clip lands in the
/// library's exports/tmp, cut as `kioskcam export` cuts, and every bad request is refused.
extension DaemonTests {
    func testClipExportThroughTheSocketWritesUnderExports() throws {
        let daemon = try startDaemon()
        defer { daemon.killAndReap() }
        let recorded = try Tool.run(binary, ["record", "--camera", "test", "--size", "320x240", "--duration", "4s",
                                             "--root", daemon.media, "--quiet"], allowFailure: true)
        XCTAssertEqual(recorded.status, 0, recorded.stderr)
        let path = recorded.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let relative = String(path.dropFirst(daemon.media.count + 1))
        XCTAssertTrue(relative.hasPrefix("video/"), relative)

        let result = try daemon.kioskcam(["clip", relative, "--from", "1.5", "--to", "3"])
        XCTAssertEqual(result.status, 0, result.stderr + daemon.logText())
        let clip = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertTrue(clip.hasPrefix(daemon.media + "/exports/tmp/"), clip)
        XCTAssertTrue(clip.hasSuffix("_1500-3000.mp4"), clip)
        XCTAssertTrue(result.stderr.contains("smart cut: re-encoded 15 frames"), result.stderr)
        let probe = try FFprobe.probe(clip)
        XCTAssertEqual(probe.video?.frameCount, 45)
        XCTAssertEqual(probe.video?.startSeconds ?? 1, 0, accuracy: 0.001)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: daemon.media + "/exports/tmp"), [(clip as NSString).lastPathComponent],
                       "no partial file is left beside the clip")

        let sound = try daemon.kioskcam(["clip", relative, "--to", "1", "--wav", "--json"])
        XCTAssertEqual(sound.status, 0, sound.stderr)
        XCTAssertTrue(sound.stdout.contains("_0-1000.wav"), sound.stdout)

        let refusals: [([String], Int32, String)] = [
            (["clip", "video/20261124/000000.mp4"], 1, "no recording video/20261124/000000.mp4 in the library"),
            (["clip", "/etc/passwd"], 64, "file: must be a recording as list names it"),
            (["clip", "video/20261124/../../../etc/passwd.mp4"], 64, "file: must be a recording as list names it"),
            (["clip", relative, "--from", "9"], 1, "beyond the end of the recording"),
            (["clip", relative, "--from", "3", "--to", "2"], 64, "to: must be after from"),
            (["clip", relative, "--size", "320x180"], 64, "size: needs \"reencode\": true"),
        ]
        for (arguments, status, message) in refusals {
            let refused = try daemon.kioskcam(arguments)
            XCTAssertTrue(refused.stderr.contains(message), "\(arguments): \(refused.stderr)")
            XCTAssertEqual(refused.status, status, "\(arguments): \(refused.stderr)")
        }
        daemon.signal(SIGTERM)
        XCTAssertEqual(daemon.wait(), 0)
    }
}
