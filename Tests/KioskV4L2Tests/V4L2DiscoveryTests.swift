import Foundation
import KioskTestSupport
import XCTest
@testable import KioskV4L2

/// Discovery on a machine with no camera (this one) must be an empty list, not a crash.
final class V4L2DiscoveryTests: XCTestCase {
    func testNoCamerasHere() throws {
        let nodes = V4L2Discovery.deviceNodes(in: "/dev")
        guard nodes.isEmpty else { throw XCTSkip("this machine has video nodes: \(nodes)") }
        XCTAssertEqual(V4L2Discovery.cameras(), [])
        let report = V4L2Discovery.scan()
        XCTAssertTrue(report.cameras.isEmpty)
        XCTAssertTrue(report.skipped.isEmpty)
        // What `kioskcam probe --json` prints then.
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = String(decoding: try encoder.encode(report), as: UTF8.self)
        XCTAssertEqual(json, #"{"cameras":[],"skipped":[]}"#)
    }

    func testMissingDirectoryIsEmpty() {
        XCTAssertEqual(V4L2Discovery.cameras(in: "/nonexistent-\(UUID().uuidString)"), [])
    }

    func testNodesInNumericOrderAndNonDevicesSkippedWithAReason() throws {
        let folder = TemporaryDirectory()
        for name in ["video10", "video2", "video0", "videoX", "vide", "media0"] {
            XCTAssertTrue(FileManager.default.createFile(atPath: folder.path + "/" + name, contents: Data("x".utf8)))
        }
        XCTAssertEqual(V4L2Discovery.deviceNodes(in: folder.path).map { ($0 as NSString).lastPathComponent },
                       ["video0", "video2", "video10"])
        let report = V4L2Discovery.scan(in: folder.path)
        XCTAssertTrue(report.cameras.isEmpty)
        XCTAssertEqual(report.skipped.count, 3)
        XCTAssertTrue(report.skipped.allSatisfy { $0.reason.contains("not a V4L2 device") }, "\(report.skipped)")
    }

    func testCameraDescriptionIsCodable() throws {
        let description = CameraDescription(
            path: "/dev/video0", driver: "vivid", card: "vivid", bus: "platform:vivid-000", version: "6.1.0",
            capabilities: ["video capture", "streaming"],
            formats: [.init(fourcc: "YUYV", description: "YUYV 4:2:2", compressed: false, emulated: false, usable: true,
                            sizes: [.init(width: 640, height: 480, frameRates: [30, 25])])],
            controls: [.init(name: "Brightness", id: 0x0098_0900, type: "integer", minimum: 0, maximum: 255, step: 1,
                             default: 128, value: 128, readOnly: false, inactive: false, menu: nil)])
        let data = try JSONEncoder().encode(description)
        XCTAssertEqual(try JSONDecoder().decode(CameraDescription.self, from: data), description)
        let text = String(decoding: data, as: UTF8.self)
        XCTAssertTrue(text.contains(#""fourcc":"YUYV""#), text)
        XCTAssertTrue(text.contains(#""default":128"#), text)
    }
}
