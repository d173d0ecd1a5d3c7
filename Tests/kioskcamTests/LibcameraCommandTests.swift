import Foundation
import KioskTestSupport
import XCTest

/// `kioskcam probe` and `record --camera libcamera` through the binary, with the real
/// libcamera of this machine. A build VM has no camera libcamera lists, so this proves
/// the empty case and the error a user sees; vimc in the HIL guest proves the rest.
final class LibcameraCommandTests: XCTestCase {
    func kioskcam(_ arguments: [String]) throws -> Tool.Output {
        try Tool.run(Package.kioskcamBinary, arguments, allowFailure: true)
    }

    struct Report: Decodable {
        struct Camera: Decodable { var id: String }
        var libcameraCameras: [Camera]
        var libcameraError: String?
    }

    func testProbeAsksLibcamera() throws {
        let json = try kioskcam(["probe", "--json"])
        XCTAssertEqual(json.status, 0, json.stderr)
        let report = try JSONDecoder().decode(Report.self, from: Data(json.stdout.utf8))
        XCTAssertNil(report.libcameraError)
        let text = try kioskcam(["probe"])
        XCTAssertEqual(text.status, 0, text.stderr)
        XCTAssertTrue(text.stdout.contains("libcamera cameras (libcamera 0."), text.stdout)
        for camera in report.libcameraCameras { XCTAssertTrue(text.stdout.contains("libcamera:" + camera.id), text.stdout) }
        if report.libcameraCameras.isEmpty { XCTAssertTrue(text.stdout.contains("  none listed"), text.stdout) }
    }

    /// Without a camera: an error naming the problem and the fix, not a crash, not the
    /// test pattern. With one (a developer's machine): a recording.
    func testRecordFromLibcamera() throws {
        let folder = TemporaryDirectory()
        let report = try JSONDecoder().decode(Report.self, from: Data(try kioskcam(["probe", "--json"]).stdout.utf8))
        let result = try kioskcam(["record", "--camera", "libcamera", "--duration", "1s", "--size", "320x240",
                                   "--mic", "none", "--root", folder.path, "--quiet"])
        if report.libcameraCameras.isEmpty {
            XCTAssertNotEqual(result.status, 0, result.stdout)
            XCTAssertTrue(result.stderr.contains("libcamera lists no camera"), result.stderr)
            XCTAssertTrue(result.stderr.contains("kioskcam probe"), result.stderr)
            XCTAssertFalse(result.stderr.contains("test pattern"), result.stderr)
        } else {
            XCTAssertEqual(result.status, 0, result.stderr)
            let probe = try FFprobe.probe(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
            XCTAssertEqual(probe.video?.codec_name, "h264")
        }
    }

    /// libcamera (and its LTTng, libdw, GnuTLS …) is loaded by the camera helper alone:
    /// kioskcam starts without it, and an abort inside it cannot take the daemon down.
    func testOnlyTheCameraHelperLinksLibcamera() throws {
        func needed(_ program: String) throws -> [String] {
            try Tool.run("readelf", ["-d", program]).stdout.split(separator: "\n").filter { $0.contains("(NEEDED)") }.map(String.init)
        }
        let kioskcam = try needed(Package.kioskcamBinary)
        XCTAssertFalse(kioskcam.isEmpty, "readelf read no NEEDED entries")
        XCTAssertFalse(kioskcam.contains { $0.contains("libcamera") }, kioskcam.joined(separator: "\n"))
        XCTAssertTrue(try needed(Package.cameraHelperBinary).contains { $0.contains("libcamera.so") })
    }

    func testAnUnknownLibcameraIDIsAClearError() throws {
        let result = try kioskcam(["record", "--camera", "libcamera:no-such-camera", "--duration", "1s", "--mic", "none",
                                   "--root", TemporaryDirectory().path, "--quiet"])
        XCTAssertNotEqual(result.status, 0, result.stdout)
        XCTAssertTrue(result.stderr.contains("no camera with id 'no-such-camera'"), result.stderr)
    }
}
