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

    func testASourceThatIsNotCopiedNeedsNoFramesInFlightAndLetsAnHDPanelFit() throws {
        let copied = try BroadcastPlan.choose(sourceSize: panel, bytesPerSourcePixel: 4, framesPerSecond: 10, isScreen: true,
                                              networkDestinations: 1)
        let shared = try BroadcastPlan.choose(sourceSize: panel, bytesPerSourcePixel: 4, framesPerSecond: 10, isScreen: true,
                                              networkDestinations: 1, copiesFrames: false)
        XCTAssertEqual(shared.framesInFlight, 0)
        XCTAssertEqual(copied.estimatedBytes - shared.estimatedBytes, 3 * 800 * 480 * 4)
        let fullHD = FrameSize(width: 1920, height: 1080)
        // Even read by reference, libx264's frames alone at 1080p would pass the budget
        // (measured: 50 MiB in all): scaled.
        XCTAssertTrue(try BroadcastPlan.choose(sourceSize: fullHD, bytesPerSourcePixel: 4, framesPerSecond: 10, isScreen: true,
                                               networkDestinations: 1, copiesFrames: false).isScaled)
        let hd = FrameSize(width: 1280, height: 720)
        XCTAssertEqual(try BroadcastPlan.choose(sourceSize: hd, bytesPerSourcePixel: 4, framesPerSecond: 10, isScreen: true,
                                                networkDestinations: 1, copiesFrames: false).size, hd)
        let copiedFullHD = try BroadcastPlan.choose(sourceSize: fullHD, bytesPerSourcePixel: 4, framesPerSecond: 10, isScreen: true,
                                                    networkDestinations: 1)
        XCTAssertTrue(copiedFullHD.isScaled)
        XCTAssertLessThan(copiedFullHD.size.width, 1920)
        XCTAssertGreaterThan(copiedFullHD.size.width, 1200, "the largest that fits, not half")
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

    func testALargePanelIsScaledToTheLargestSizeThatFitsKeepingItsShape() throws {
        let source = FrameSize(width: 3840, height: 2160)
        let plan = try BroadcastPlan.choose(sourceSize: source, bytesPerSourcePixel: 4, framesPerSecond: 10, isScreen: true,
                                            networkDestinations: 2)
        XCTAssertTrue(plan.isScaled)
        XCTAssertEqual(plan.sourceSize, source)
        XCTAssertEqual(plan.size.width % 2, 0)
        XCTAssertEqual(plan.size.height % 2, 0)
        // The shape, within the rounding of the height to even.
        XCTAssertLessThanOrEqual(abs(plan.size.width * 2160 - plan.size.height * 3840), 2 * 3840)
        XCTAssertLessThanOrEqual(plan.estimatedBytes, BroadcastPlan.defaultBudgetBytes)
        // Scaled frames in flight are 4:2:0 at the planned size, not the source's 32 MiB each.
        XCTAssertEqual(plan.framesInFlight, 3)
        // The largest: the next size up does not fit.
        let sizes = BroadcastPlan.scaledSizes(of: source)
        let index = try XCTUnwrap(sizes.firstIndex(of: plan.size))
        let larger = sizes[max(index - 1, 0)]
        XCTAssertThrowsError(try BroadcastPlan.choose(sourceSize: source, bytesPerSourcePixel: 4, framesPerSecond: 10, isScreen: true,
                                                      networkDestinations: 2, requestedSize: larger)) { error in
            XCTAssertTrue("\(error)".contains("the largest that fits is \(plan.size)"), "\(error)")
        }
    }

    /// A 1080p screen copied into the pool (padded rows): 1920x1080 does not fit, the
    /// plan picks the largest 16:9 size that does, and the arithmetic is the documented one.
    func testAFullHDCopiedScreenGetsTheLargestFittingSixteenByNine() throws {
        let plan = try BroadcastPlan.choose(sourceSize: FrameSize(width: 1920, height: 1080), bytesPerSourcePixel: 4, framesPerSecond: 10,
                                            isScreen: true, networkDestinations: 0)
        // 16 MiB + (3 in flight + 14 in the encoder) × 1.5 bytes a pixel ≤ 40 MiB: 986,895 pixels.
        XCTAssertEqual(plan.size, FrameSize(width: 1324, height: 744))
        XCTAssertEqual(plan.estimatedBytes, BroadcastPlan.processBaseBytes + 17 * (1324 * 744 * 3 / 2))
        XCTAssertLessThanOrEqual(plan.estimatedBytes, BroadcastPlan.defaultBudgetBytes)
    }

    func testScaledSizesKeepTheShapeAndAreEvenLargestFirst() {
        let sizes = BroadcastPlan.scaledSizes(of: FrameSize(width: 800, height: 480))
        XCTAssertEqual(sizes.first, FrameSize(width: 798, height: 478))
        XCTAssertEqual(sizes.last, FrameSize(width: 160, height: 96))
        XCTAssertTrue(sizes.allSatisfy { $0.width % 2 == 0 && $0.height % 2 == 0 })
        XCTAssertTrue(zip(sizes, sizes.dropFirst()).allSatisfy { $0.width > $1.width && $0.height >= $1.height })
        XCTAssertTrue(BroadcastPlan.scaledSizes(of: FrameSize(width: 100, height: 60)).isEmpty, "nothing below 160x90")
    }

    func testARequestedSizeIsUsedWhenItFits() throws {
        let plan = try BroadcastPlan.choose(sourceSize: panel, bytesPerSourcePixel: 4, framesPerSecond: 10, isScreen: true,
                                            networkDestinations: 1, copiesFrames: false, requestedSize: FrameSize(width: 400, height: 240))
        XCTAssertEqual(plan.size, FrameSize(width: 400, height: 240))
        XCTAssertTrue(plan.isScaled)
        XCTAssertEqual(plan.framesInFlight, 3, "a scaled picture is written into the capture's own frames")
        // The bitrate follows the sent size: 400 × 240 × 10 × 0.15 = 144 kbit/s, raised to the 200 kbit/s floor.
        XCTAssertEqual(plan.videoBitrate, 200_000)
        let same = try BroadcastPlan.choose(sourceSize: panel, bytesPerSourcePixel: 4, framesPerSecond: 10, isScreen: true,
                                            networkDestinations: 1, requestedSize: panel)
        XCTAssertFalse(same.isScaled)
    }

    func testBadRequestedSizesNameTheProblemAndASizeThatWould() {
        let cases: [(FrameSize, String)] = [
            (FrameSize(width: 401, height: 240), "even numbers, such as 400x240"),
            (FrameSize(width: 1600, height: 960), "larger than the source's 800x480"),
            (FrameSize(width: 80, height: 48), "smaller than 160x90"),
            (FrameSize(width: 400, height: 400), "use e.g. 400x240"),
        ]
        for (size, message) in cases {
            XCTAssertThrowsError(try BroadcastPlan.choose(sourceSize: panel, bytesPerSourcePixel: 4, framesPerSecond: 10, isScreen: true,
                                                          networkDestinations: 1, requestedSize: size)) { error in
                XCTAssertTrue("\(error)".contains("--size \(size)") && "\(error)".contains(message), "\(error)")
            }
        }
        // Within the rounding to even: 1366x768 scaled to 682x384 (383.4 exactly).
        XCTAssertNoThrow(try BroadcastPlan.validate(FrameSize(width: 682, height: 384), source: FrameSize(width: 1366, height: 768)))
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
