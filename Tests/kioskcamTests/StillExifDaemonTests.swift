import Foundation
import KioskTestSupport
import XCTest

/// A still from the running daemon carries its time, the device id and its orientation
/// as EXIF, read back by ffprobe (FFmpeg's own EXIF reader), not by our code.
extension DaemonTests {
    func testStillsCarryTimeDeviceAndOrientationAsEXIF() throws {
        let daemon = try startDaemon()
        defer { daemon.killAndReap() }
        let status = try daemon.kioskcam(["status", "--json"])
        let report = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        let deviceID = try XCTUnwrap(report?["device_id"] as? String)
        let before = Date()
        let still = try daemon.kioskcam(["snapshot"])
        XCTAssertEqual(still.status, 0, still.stderr)
        let path = still.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let probe = try Tool.run("ffprobe", ["-v", "error", "-show_entries", "frame_tags", "-of", "json", path])
        let json = try JSONSerialization.jsonObject(with: Data(probe.stdout.utf8)) as? [String: Any]
        let frames = try XCTUnwrap(json?["frames"] as? [[String: Any]])
        let tags = try XCTUnwrap(frames.first?["tags"] as? [String: String], probe.stdout)
        XCTAssertEqual(tags["ImageDescription"], "kioskcam device \(deviceID)")
        XCTAssertEqual(tags["Make"], "KioskCam")
        XCTAssertEqual(tags["Orientation"]?.trimmingCharacters(in: .whitespaces), "1")
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy:MM:dd HH:mm:ss"
        let taken = try XCTUnwrap(tags["DateTimeOriginal"].flatMap(formatter.date(from:)), "\(tags)")
        XCTAssertEqual(taken.timeIntervalSince(before), 0, accuracy: 5, "local time of the still")
        // The file name says the same second as the EXIF time.
        XCTAssertTrue(path.hasSuffix(String(tags["DateTimeOriginal"]?.suffix(8) ?? "").replacingOccurrences(of: ":", with: "") + ".jpg"), path)
        daemon.signal(SIGTERM)
        XCTAssertEqual(daemon.wait(), 0)
    }
}
