import XCTest
@testable import KioskCore

final class ControlConfigurationTests: XCTestCase {
    func testDefaults() {
        let control = Configuration().control
        XCTAssertEqual(control.socketPath, "/run/kioskcam/control.sock")
        XCTAssertEqual(control.socketGroup, "kioskcam")
        XCTAssertEqual(control.maxClients, 16)
        XCTAssertEqual(control.idleTimeoutSeconds, 60)
        XCTAssertEqual(control.metricsFile, "/var/lib/prometheus/node-exporter/kioskcam.prom")
        XCTAssertEqual(control.metricsIntervalSeconds, 5)
    }

    func testKeysApplyAndEmptyStringsTurnThingsOff() throws {
        let c = try Configuration(toml: """
        [control]
        socket = "/tmp/k/control.sock"
        socket_group = ""
        max_clients = 4
        idle_timeout_seconds = 2.5
        metrics_file = ""
        metrics_interval_seconds = 10
        """).control
        XCTAssertEqual(c.socketPath, "/tmp/k/control.sock")
        XCTAssertNil(c.socketGroup)
        XCTAssertEqual(c.maxClients, 4)
        XCTAssertEqual(c.idleTimeoutSeconds, 2.5)
        XCTAssertNil(c.metricsFile)
        XCTAssertEqual(c.metricsIntervalSeconds, 10)
    }

    func testBadValuesNameTheKeyAndWhatIsAllowed() {
        let cases: [(String, String)] = [
            ("socket = \"relative.sock\"", "absolute path"),
            ("socket = \"/" + String(repeating: "x", count: 120) + "\"", "control.socket"),
            ("socket_group = \"no spaces\"", "group name"),
            ("max_clients = 0", "1 to 256"),
            ("metrics_file = \"/tmp/metrics.txt\"", ".prom"),
            ("metrics_interval_seconds = 0", "1 to 3600"),
        ]
        for (line, mention) in cases {
            XCTAssertThrowsError(try Configuration(toml: "[control]\n" + line)) { error in
                let text = "\(error)"
                XCTAssertTrue(text.contains(mention) && text.contains("line 2"), "\(line): \(text)")
            }
        }
    }
}
