import Foundation
import KioskControl
import KioskCore
import KioskTestSupport
import XCTest

final class MetricsTextfileTests: XCTestCase {
    func testWritesAtomicallyWithReadableMode() throws {
        let folder = TemporaryDirectory()
        let path = folder.path + "/kioskcam.prom"
        var snapshot = MetricsSnapshot()
        snapshot.state = .recording
        snapshot.bytesWrittenTotal = 42
        try MetricsTextfile(path: path).write(snapshot)
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), MetricsFormatter.text(snapshot))
        XCTAssertEqual(fileMode(path), 0o644)
        snapshot.bytesWrittenTotal = 43
        try MetricsTextfile(path: path).write(snapshot)
        XCTAssertTrue(try String(contentsOfFile: path, encoding: .utf8).contains("kioskcam_bytes_written_total 43\n"))
        XCTAssertEqual(folder.files(), ["kioskcam.prom"], "no temp file left")
    }

    func testAMissingFolderNamesTheFix() {
        let folder = TemporaryDirectory()
        XCTAssertThrowsError(try MetricsTextfile(path: folder.path + "/missing/kioskcam.prom").write(MetricsSnapshot())) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains(folder.path + "/missing") && text.contains("control.metrics_file"), text)
        }
    }

    /// Readers only ever see a whole file, even while it is rewritten as fast as possible.
    func testPeriodicWriterRewritesAndRemovesOnStop() throws {
        let folder = TemporaryDirectory()
        let path = folder.path + "/kioskcam.prom"
        let calls = Counter()
        let logs = LogStore()
        let writer = MetricsTextfileWriter(path: path, intervalSeconds: 0.05, logger: logs.logger) {
            var snapshot = MetricsSnapshot()
            snapshot.segmentsTotal = calls.increment()
            return snapshot
        }
        let expectedLength = MetricsFormatter.text(MetricsSnapshot()).count
        let deadline = Date(timeIntervalSinceNow: 0.6)
        var reads = 0
        while Date() < deadline {
            if let text = try? String(contentsOfFile: path, encoding: .utf8) {
                reads += 1
                XCTAssertTrue(text.hasPrefix("# HELP kioskcam_info") && text.hasSuffix("kioskcam_uptime_seconds 0\n"), "whole file")
                XCTAssertGreaterThanOrEqual(text.count, expectedLength)
            }
        }
        writer.stop()
        XCTAssertGreaterThanOrEqual(calls.value, 4, "rewritten every 0.05 s")
        XCTAssertGreaterThan(reads, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path), "removed on stop")
        writer.stop()  // idempotent

        // A failing write is logged once, not every interval.
        let failing = MetricsTextfileWriter(path: folder.path + "/nope/kioskcam.prom", intervalSeconds: 0.02, logger: logs.logger) { MetricsSnapshot() }
        Thread.sleep(forTimeInterval: 0.3)
        failing.stop()
        XCTAssertEqual(logs.all.filter { $0.contains("nope") }.count, 1, "\(logs.all)")
    }
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var value: Int { lock.withLock { count } }
    func increment() -> Int { lock.withLock { count += 1; return count } }
}
