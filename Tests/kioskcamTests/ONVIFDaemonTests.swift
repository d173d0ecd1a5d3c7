import Foundation
import KioskCore
import KioskTestSupport
import XCTest

/// ONVIF as an NVR meets it: the camera's daemon and the NVR in two network namespaces
/// joined by a veth pair, so that WS-Discovery's multicast is real. The NVR (onvif-zeep-
/// async and WSDiscovery, the clients Home Assistant uses) finds the camera by a Probe,
/// signs in with PasswordDigest and with PasswordText, reads the profiles and URIs, and
/// the stream URI plays and the snapshot URI gives a JPEG.
final class ONVIFDaemonTests: XCTestCase {
    private let password = "tulip orbit canyon"

    private struct Namespaces {
        let camera: String
        let nvr: String
        let cameraAddress: String
    }

    private func makeNamespaces(_ ip: String) throws -> Namespaces {
        let tag = Int(getpid()) % 200 + 20
        let names = Namespaces(camera: "kc-cam-\(tag)", nvr: "kc-nvr-\(tag)", cameraAddress: "10.77.\(tag).1")
        removeNamespaces(ip, names)
        let steps: [[String]] = [
            ["netns", "add", names.camera], ["netns", "add", names.nvr],
            ["link", "add", "kcc\(tag)", "type", "veth", "peer", "name", "kcn\(tag)"],
            ["link", "set", "kcc\(tag)", "netns", names.camera], ["link", "set", "kcn\(tag)", "netns", names.nvr],
            ["-n", names.camera, "addr", "add", "10.77.\(tag).1/24", "dev", "kcc\(tag)"],
            ["-n", names.nvr, "addr", "add", "10.77.\(tag).2/24", "dev", "kcn\(tag)"],
            ["-n", names.camera, "link", "set", "kcc\(tag)", "up"], ["-n", names.nvr, "link", "set", "kcn\(tag)", "up"],
            ["-n", names.camera, "link", "set", "lo", "up"], ["-n", names.nvr, "link", "set", "lo", "up"],
            ["-n", names.camera, "route", "add", "224.0.0.0/4", "dev", "kcc\(tag)"],
            ["-n", names.nvr, "route", "add", "224.0.0.0/4", "dev", "kcn\(tag)"],
        ]
        for step in steps {
            let output = try Tool.run(ip, step, allowFailure: true)
            guard output.status == 0 else {
                removeNamespaces(ip, names)
                throw ToolError(command: "ip " + step.joined(separator: " "), status: output.status, stderr: output.stderr)
            }
        }
        return names
    }

    private func removeNamespaces(_ ip: String, _ names: Namespaces) {
        _ = try? Tool.run(ip, ["netns", "del", names.camera], allowFailure: true)
        _ = try? Tool.run(ip, ["netns", "del", names.nvr], allowFailure: true)
    }

    private func nvr(_ ip: String, _ names: Namespaces, user: String, password: String, mode: String) throws -> [String: Any] {
        let python = Package.root() + "/.build-tools/onvif/bin/python"
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw ToolError(command: python, status: 127, stderr: "onvif-zeep-async is missing: run scripts/install-deps --test")
        }
        let output = try Tool.run(ip, ["netns", "exec", names.nvr, python, Package.root() + "/scripts/lib/onvif-client.py", user, password, mode],
                                  allowFailure: true)
        XCTAssertEqual(output.status, 0, output.stderr)
        let line = output.stdout.split(separator: "\n").last.map(String.init) ?? ""
        return (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]) ?? ["error": "no JSON: \(output.stdout) \(output.stderr)"]
    }

    func testAnNVRFindsTheCameraByDiscoveryAndReadsItsStreams() throws {
        let ip = try requiredProgram("ip", package: "iproute2")
        let names = try makeNamespaces(ip)
        defer { removeNamespaces(ip, names) }
        let folder = TemporaryDirectory()
        let daemon = try KioskcamDaemon(root: folder.path, sections: """
            [web]
            listen = "0.0.0.0:8443"
            [rtsp]
            enabled = true
            listen = "0.0.0.0:8554"
            substream = "160x120"
            [onvif]
            enabled = true
            """, launcher: [ip, "netns", "exec", names.camera])
        defer { _ = daemon.terminate() }
        XCTAssertTrue(daemon.waitForLog("onvif: answering WS-Discovery probes", seconds: 20), daemon.logText())
        for (user, digest) in [("nvr", true), ("dashboard", false)] {
            let output = try Tool.run("/bin/sh", ["-c", "printf '%s\\n' \"$1\" | \"$2\" web-user set \"$3\" --role viewer \(digest ? "--onvif-digest" : "") --config \"$4\"",
                                                  "sh", password, Package.kioskcamBinary, user, daemon.config], allowFailure: true)
            XCTAssertEqual(output.status, 0, output.stderr)
        }

        let found = try nvr(ip, names, user: "nvr", password: password, mode: "digest")
        XCTAssertNil(found["error"], "\(found)")
        XCTAssertEqual(found["xaddrs"] as? [String], ["https://\(names.cameraAddress):8443/onvif/device_service"], "found by a multicast Probe")
        XCTAssertTrue((found["scopes"] as? [String])?.contains("onvif://www.onvif.org/Profile/Streaming") == true, "\(found)")
        XCTAssertEqual(found["manufacturer"] as? String, "KioskCam")
        XCTAssertEqual(found["serial"] as? String, daemon.deviceID)
        let profiles = found["profiles"] as? [[String: Any]] ?? []
        XCTAssertEqual(profiles.map { $0["token"] as? String }, ["main", "sub"])
        XCTAssertEqual(profiles.last?["width"] as? Int, 160)
        XCTAssertEqual(profiles.first?["stream"] as? String, "rtsp://\(names.cameraAddress):8554/live")
        XCTAssertEqual(profiles.first?["snapshot"] as? String, "https://\(names.cameraAddress):8443/api/snapshot.jpg")
        XCTAssertEqual(found["snapshot_is_jpeg"] as? Bool, true, "the snapshot URI gives a JPEG (HTTP Digest): \(found)")

        // The stream URI it got plays, from the NVR's side of the link.
        let ffprobe = try requiredProgram("ffprobe", package: "ffmpeg")
        for (path, size) in [("live", "320,240"), ("sub", "160,120")] {
            let probe = try Tool.run(ip, ["netns", "exec", names.nvr, ffprobe, "-v", "error", "-rtsp_transport", "tcp",
                                          "-show_entries", "stream=codec_name,width,height", "-of", "csv=p=0",
                                          "rtsp://nvr:tulip%20orbit%20canyon@\(names.cameraAddress):8554/\(path)"], allowFailure: true)
            XCTAssertEqual(probe.status, 0, probe.stderr)
            XCTAssertTrue(probe.stdout.contains("h264,\(size)"), "\(path): \(probe.stdout)")
        }

        // PasswordText (over HTTPS) for a user whose password is kept only as a hash.
        let text = try nvr(ip, names, user: "dashboard", password: password, mode: "text")
        XCTAssertNil(text["error"], "\(text)")
        XCTAssertEqual((text["profiles"] as? [[String: Any]])?.count, 2)
        // PasswordDigest for that user cannot be checked (no password kept): refused, and the log says why.
        let refused = try nvr(ip, names, user: "dashboard", password: password, mode: "digest")
        XCTAssertTrue((refused["error"] as? String)?.contains("wrong user name or password") == true, "\(refused)")
        XCTAssertTrue(daemon.logText().contains("`kioskcam web-user set dashboard --onvif-digest`"), daemon.logText())
        let wrong = try nvr(ip, names, user: "nvr", password: "not the password", mode: "digest")
        XCTAssertNotNil(wrong["error"], "a wrong password is refused: \(wrong)")
        XCTAssertFalse(daemon.logText().contains(password), "no password in the log")
    }
}
