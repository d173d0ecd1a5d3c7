import Foundation
import XCTest
@testable import KioskCore

final class BroadcastPlanTests: XCTestCase {
    private let panel = FrameSize(width: 800, height: 480)

    // MARK: Plan

    func testThePanelAtTenFramesFitsTheBudgetWithOneThreadAndATwoSecondGOP() throws {
        let plan = try BroadcastPlan.choose(sourceSize: panel, bytesPerSourcePixel: 4, framesPerSecond: nil, isScreen: true,
                                            networkDestinations: 1)
        XCTAssertEqual(plan.size, panel)
        XCTAssertEqual(plan.framesPerSecond, 10)
        XCTAssertEqual(plan.encoderThreads, 1)
        XCTAssertEqual(plan.keyframeInterval, 20)
        // 800 × 480 × 10 × 0.15 bit.
        XCTAssertEqual(plan.videoBitrate, 576_000)
        // Two seconds of video and sound may wait for the network.
        XCTAssertEqual(plan.queueBytesPerDestination, (576_000 + 64_000) / 8 * 2)
        XCTAssertLessThanOrEqual(plan.estimatedBytes, BroadcastPlan.defaultBudgetBytes)
        XCTAssertGreaterThan(plan.estimatedBytes, BroadcastPlan.processBaseBytes)
    }

    func testASourceThatIsNotCopiedNeedsNoFramesInFlightAndLetsAFullHDPanelFit() throws {
        let copied = try BroadcastPlan.choose(sourceSize: panel, bytesPerSourcePixel: 4, framesPerSecond: 10, isScreen: true,
                                              networkDestinations: 1)
        let shared = try BroadcastPlan.choose(sourceSize: panel, bytesPerSourcePixel: 4, framesPerSecond: 10, isScreen: true,
                                              networkDestinations: 1, copiesFrames: false)
        XCTAssertEqual(shared.framesInFlight, 0)
        XCTAssertEqual(copied.estimatedBytes - shared.estimatedBytes, 3 * 800 * 480 * 4)
        let fullHD = FrameSize(width: 1920, height: 1080)
        XCTAssertEqual(try BroadcastPlan.choose(sourceSize: fullHD, bytesPerSourcePixel: 4, framesPerSecond: 10, isScreen: true,
                                                networkDestinations: 1, copiesFrames: false).size, fullHD)
        XCTAssertEqual(try BroadcastPlan.choose(sourceSize: fullHD, bytesPerSourcePixel: 4, framesPerSecond: 10, isScreen: true,
                                                networkDestinations: 1).size, FrameSize(width: 960, height: 540))
    }

    func testScreenRatesOutsideTwoToFifteenAreRefusedWithTheRange() {
        for rate in [0, 1, 16, 60] {
            XCTAssertThrowsError(try BroadcastPlan.choose(sourceSize: panel, bytesPerSourcePixel: 2, framesPerSecond: rate,
                                                          isScreen: true, networkDestinations: 0)) { error in
                XCTAssertTrue("\(error)".contains("2–15"), "\(error)")
            }
        }
        XCTAssertNoThrow(try BroadcastPlan.choose(sourceSize: panel, bytesPerSourcePixel: 2, framesPerSecond: 2, isScreen: true,
                                                  networkDestinations: 0))
        XCTAssertNoThrow(try BroadcastPlan.choose(sourceSize: panel, bytesPerSourcePixel: 2, framesPerSecond: 15, isScreen: true,
                                                  networkDestinations: 0))
    }

    func testALargePanelIsHalvedUntilItFits() throws {
        let plan = try BroadcastPlan.choose(sourceSize: FrameSize(width: 3840, height: 2160), bytesPerSourcePixel: 4,
                                            framesPerSecond: 10, isScreen: true, networkDestinations: 2)
        XCTAssertLessThan(plan.size.width, 3840)
        XCTAssertEqual(plan.size.width * 2160, plan.size.height * 3840, "keeps the aspect")
        XCTAssertEqual(plan.size.width % 2, 0)
        XCTAssertEqual(plan.size.height % 2, 0)
        XCTAssertLessThanOrEqual(plan.estimatedBytes, BroadcastPlan.defaultBudgetBytes)
    }

    func testQueuesShrinkBeforeThePicture() throws {
        let roomy = try BroadcastPlan.choose(sourceSize: panel, bytesPerSourcePixel: 4, framesPerSecond: 10, isScreen: true,
                                             networkDestinations: 4)
        let tight = try BroadcastPlan.choose(sourceSize: panel, bytesPerSourcePixel: 4, framesPerSecond: 10, isScreen: true,
                                             networkDestinations: 4, budgetBytes: roomy.estimatedBytes - 100_000)
        XCTAssertEqual(tight.size, panel)
        XCTAssertLessThan(tight.queueBytesPerDestination, roomy.queueBytesPerDestination)
        XCTAssertGreaterThanOrEqual(tight.queueBytesPerDestination, BroadcastPlan.minimumQueueBytes)
        XCTAssertLessThanOrEqual(tight.estimatedBytes, roomy.estimatedBytes - 100_000)
    }

    func testABudgetNothingFitsInIsAnErrorNamingTheFix() {
        XCTAssertThrowsError(try BroadcastPlan.choose(sourceSize: panel, bytesPerSourcePixel: 4, framesPerSecond: 10, isScreen: true,
                                                      networkDestinations: 1, budgetBytes: 8 << 20)) { error in
            XCTAssertTrue("\(error)".contains("does not fit in 8 MiB"), "\(error)")
        }
    }

    func testOutOfRangeNumbersAreRefusedBeforeArithmetic() {
        XCTAssertThrowsError(try BroadcastPlan.choose(sourceSize: FrameSize(width: 0, height: 480), bytesPerSourcePixel: 4,
                                                      framesPerSecond: nil, isScreen: true, networkDestinations: 1))
        XCTAssertThrowsError(try BroadcastPlan.choose(sourceSize: FrameSize(width: Int.max, height: Int.max), bytesPerSourcePixel: 4,
                                                      framesPerSecond: nil, isScreen: true, networkDestinations: 1))
        XCTAssertThrowsError(try BroadcastPlan.choose(sourceSize: panel, bytesPerSourcePixel: 4, framesPerSecond: nil, isScreen: true,
                                                      networkDestinations: -1))
    }

    // MARK: Destinations

    func testDestinationsParse() throws {
        XCTAssertEqual(try BroadcastDestination(parsing: "library"), .library)
        XCTAssertEqual(try BroadcastDestination(parsing: " rtmp://10.0.0.2/live/kiosk "), .live("rtmp://10.0.0.2/live/kiosk"))
        XCTAssertEqual(try BroadcastDestination(parsing: "rtsp://127.0.0.1:8554/kiosk"), .live("rtsp://127.0.0.1:8554/kiosk"))
        XCTAssertEqual(try BroadcastDestination(parsing: "srt://10.0.0.2:9000"), .live("srt://10.0.0.2:9000"))
        XCTAssertEqual(try BroadcastDestination(parsing: "/var/www/live/"), .live("/var/www/live/index.m3u8"))
        XCTAssertEqual(try BroadcastDestination(parsing: "/var/www/live/cam.m3u8"), .live("/var/www/live/cam.m3u8"))
        XCTAssertTrue(try BroadcastDestination(parsing: "rtmp://h/a").isNetwork)
        XCTAssertFalse(try BroadcastDestination(parsing: "/srv/hls").isNetwork)
        XCTAssertFalse(BroadcastDestination.library.isNetwork)
    }

    func testBadDestinationsNameTheValueAndWhatIsAccepted() {
        for bad in ["http://example.com/x", "rtmp://", "live", "relative/folder"] {
            XCTAssertThrowsError(try BroadcastDestination(parsing: bad)) { error in
                XCTAssertTrue("\(error)".contains("--to \(bad)"), "\(error)")
            }
        }
    }

    // MARK: Status

    func testOverallState() {
        XCTAssertEqual(BroadcastStatus.overall([], failed: false, finished: false), .starting)
        XCTAssertEqual(BroadcastStatus.overall([.starting, .live], failed: false, finished: false), .starting)
        XCTAssertEqual(BroadcastStatus.overall([.live, .live], failed: false, finished: false), .live)
        XCTAssertEqual(BroadcastStatus.overall([.live, .reconnecting], failed: false, finished: false), .reconnecting)
        XCTAssertEqual(BroadcastStatus.overall([.live], failed: false, finished: true), .stopped)
        XCTAssertEqual(BroadcastStatus.overall([.live], failed: true, finished: true), .error)
    }

    func testAStaleFileReadsAsAnErrorAndRoundTrips() throws {
        let status = BroadcastStatus(state: .live, source: "screen", pid: 42, startedAt: 1000, updatedAt: 1010, width: 800, height: 480,
                                     framesPerSecond: 10, videoBitrate: 576_000,
                                     destinations: [.init(name: "rtmp://h/live", state: .live, bytes: 1_500_000, droppedGOPs: 2),
                                                    .init(name: "library", state: .live, bytes: 500_000)])
        XCTAssertEqual(status.bytes, 2_000_000)
        XCTAssertEqual(status.droppedGOPs, 2)
        XCTAssertEqual(status.effectiveState(now: 1012), .live)
        XCTAssertEqual(status.effectiveState(now: 1020), .error)
        XCTAssertEqual(status.line(now: 1011), "● LIVE screen 800x480 10 fps → 2: 2.0 MB, 2 GOPs dropped")
        XCTAssertTrue(status.line(now: 1100).hasSuffix("the broadcast process stopped reporting"))
        var stopped = status
        stopped.state = .stopped
        XCTAssertEqual(stopped.effectiveState(now: 99_999), .stopped)
        XCTAssertEqual(BroadcastStatus.decode(status.encoded()), status)
        XCTAssertNil(BroadcastStatus.decode(Data("{\"state\":\"live\"}".utf8)))
    }
}
