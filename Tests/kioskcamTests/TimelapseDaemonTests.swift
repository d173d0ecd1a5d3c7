import Foundation
import KioskCore
import KioskTestSupport
import XCTest

/// The timelapse in `kioskcam run` on the built-in camera, in real time: `kill -9`
/// mid-way leaves a movie that plays, and the next start continues it.
final class TimelapseDaemonTests: XCTestCase {
    private let sections = "[timelapse]\ninterval_seconds = 1\nfps = 10\n"

    private func movies(_ root: String) -> [String] {
        let folder = root + "/media/timelapse"
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted().map { folder + "/" + $0 }
    }

    private func frames(_ path: String) -> Int { (try? FFprobe.probe(path).video?.frameCount) ?? -1 }

    private func assertPlays(_ path: String, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(try FFmpegDecode.complaints(path), "", "the decoder met no damage", file: file, line: line)
    }

    func testKillNineLeavesAPlayableMovieAndARestartContinuesIt() throws {
        let folder = TemporaryDirectory()
        let first = try KioskcamDaemon(root: folder.path, sections: sections)
        defer { first.reap() }
        XCTAssertTrue(first.waitForLog("timelapse: writing", seconds: 15), first.logText())
        // A few frames in, the status names the movie and counts them.
        let deadline = Date(timeIntervalSinceNow: 20)
        var status: [String: Any] = [:]
        while Date() < deadline {
            status = first.status()
            if (status["timelapse_frames"] as? Int ?? 0) >= 4 { break }
            Thread.sleep(forTimeInterval: 0.2)
        }
        let path = try XCTUnwrap(status["timelapse_file"] as? String, "\(status)")
        XCTAssertTrue(path.hasPrefix(folder.path + "/media/timelapse/") && TimelapseFileName.parse(URL(fileURLWithPath: path).lastPathComponent) != nil, path)
        XCTAssertGreaterThanOrEqual(status["timelapse_frames"] as? Int ?? 0, 4)
        let human = try first.kioskcam(["status"])
        XCTAssertTrue(human.stdout.contains("timelapse:"), human.stdout)

        first.signal(SIGKILL)
        first.reap()
        XCTAssertEqual(movies(folder.path), [path])
        let afterKill = frames(path)
        XCTAssertGreaterThanOrEqual(afterKill, 4, "every frame written before the kill is there")
        try assertPlays(path)

        let second = try KioskcamDaemon(root: folder.path, sections: sections)
        defer { second.reap() }
        XCTAssertTrue(second.waitForLog("continuing at frame", seconds: 15), second.logText())
        let more = Date(timeIntervalSinceNow: 20)
        while Date() < more && (second.status()["timelapse_frames"] as? Int ?? 0) < afterKill + 3 { Thread.sleep(forTimeInterval: 0.2) }
        XCTAssertEqual(second.terminate(), 0, second.logText())
        XCTAssertEqual(movies(folder.path), [path], "the same day's movie, continued (the test does not run across midnight)")
        XCTAssertGreaterThanOrEqual(frames(path), afterKill + 3)
        try assertPlays(path)
        let probe = try FFprobe.probe(path)
        XCTAssertEqual(probe.format.durationSeconds, Double(frames(path)) / 10, accuracy: 0.11, "10 frames a second of movie")
    }
}
