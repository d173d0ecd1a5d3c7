import XCTest
@testable import KioskCore

/// The negotiation rules (see `CameraFormatNegotiation`), on offers shaped like real
/// devices: vivid (the HIL guest's camera), a UVC webcam, stepwise sensors, and cameras
/// that offer nothing kioskcam can record.
final class CameraFormatNegotiationTests: XCTestCase {
    // MARK: Fixtures

    func size(_ w: Int, _ h: Int) -> FrameSize { FrameSize(width: w, height: h) }

    func request(_ w: Int, _ h: Int, _ fps: Int, prefer: String? = nil) -> CameraFormatRequest {
        CameraFormatRequest(size: size(w, h), framesPerSecond: fps, preferredFourCC: prefer)
    }

    func choose(_ offers: [CameraFormatOffer], _ request: CameraFormatRequest,
                file: StaticString = #filePath, line: UInt = #line) throws -> CameraFormatChoice {
        do {
            return try CameraFormatNegotiation.choose(from: offers, for: request)
        } catch {
            XCTFail("negotiation failed: \(error)", file: file, line: line)
            throw error
        }
    }

    /// vivid's webcam input: the same discrete sizes and rates for every raw format (RGB
    /// and Bayer among them, listed around the YUV ones as vivid does), plus formats
    /// kioskcam cannot use (10-bit greyscale, HSV).
    var vivid: [CameraFormatOffer] {
        let sizes = [size(320, 180), size(640, 360), size(1280, 720)]
        let rates = [25, 30, 50, 60]
        return [
            CameraFormatOffer(fourcc: "RGB3", description: "24-bit RGB 8-8-8", sizes: sizes, rates: rates),
            CameraFormatOffer(fourcc: "YUYV", description: "YUYV 4:2:2", sizes: sizes, rates: rates),
            CameraFormatOffer(fourcc: "UYVY", description: "UYVY 4:2:2", sizes: sizes, rates: rates),
            CameraFormatOffer(fourcc: "YU12", description: "Planar YUV 4:2:0", sizes: sizes, rates: rates),
            CameraFormatOffer(fourcc: "NV12", description: "Y/UV 4:2:0", sizes: sizes, rates: rates),
            CameraFormatOffer(fourcc: "BA81", description: "8-bit Bayer BGBG/GRGR", sizes: sizes, rates: rates),
            CameraFormatOffer(fourcc: "Y10", description: "10-bit Greyscale", sizes: sizes, rates: rates),
            CameraFormatOffer(fourcc: "HSV3", description: "24-bit HSV 8-8-8", sizes: sizes, rates: rates),
        ]
    }

    /// A typical UVC webcam: YUYV is limited by USB 2.0 bandwidth, MJPEG is not.
    var webcam: [CameraFormatOffer] {
        [
            CameraFormatOffer(fourcc: "YUYV", description: "YUYV 4:2:2", sizes: [
                .size(640, 480, fps: [30, 15]), .size(1280, 720, fps: [10, 5]),
            ]),
            CameraFormatOffer(fourcc: "MJPG", description: "Motion-JPEG", sizes: [
                .size(640, 480, fps: [30, 15]), .size(1280, 720, fps: [30, 15]),
            ]),
        ]
    }

    /// A sensor with a stepwise size range and a continuous rate range.
    var stepwise: [CameraFormatOffer] {
        [CameraFormatOffer(fourcc: "YUYV", sizes: [
            CameraSizeOffer(.stepwise(minimum: size(16, 16), maximum: size(1920, 1080), step: size(8, 8)),
                            rates: .range(minimum: FrameRate(1), maximum: FrameRate(30))),
        ])]
    }

    // MARK: vivid

    func testVividExactRequestPicksTheFormatTheEncoderTakesAsIs() throws {
        let choice = try choose(vivid, request(1280, 720, 30))
        XCTAssertEqual(choice.fourcc, "YU12")
        XCTAssertEqual(choice.delivery, .raw(.yuv420))
        XCTAssertEqual(choice.size, size(1280, 720))
        XCTAssertEqual(choice.frameRate, FrameRate(30))
        XCTAssertEqual(choice.output, VideoFormat(size: size(1280, 720), pixelFormat: .yuv420, framesPerSecond: 30))
        XCTAssertTrue(choice.reason.contains("YU12 needs no conversion"), choice.reason)
        XCTAssertTrue(choice.reason.hasPrefix("asked 1280x720 @30; device offers "), choice.reason)
    }

    func testVividPreferredFormatWinsAmongEquals() throws {
        let choice = try choose(vivid, request(640, 360, 30, prefer: "YUYV"))
        XCTAssertEqual(choice.fourcc, "YUYV")
        XCTAssertEqual(choice.output.pixelFormat, .yuyv)
        XCTAssertTrue(choice.reason.contains("YUYV is the preferred format"), choice.reason)
        XCTAssertEqual(try choose(vivid, request(640, 360, 30, prefer: "NV12")).fourcc, "NV12")
        XCTAssertEqual(try choose(vivid, request(640, 360, 30, prefer: "UYVY")).fourcc, "UYVY")
    }

    func testVividSizeNotOfferedTakesTheSmallestLargerSize() throws {
        // 320x240 is not offered; 640x360 is the smallest at least as wide and as tall
        // (320x180 is not tall enough).
        let choice = try choose(vivid, request(320, 240, 30, prefer: "YUYV"))
        XCTAssertEqual(choice.size, size(640, 360))
        XCTAssertEqual(choice.fourcc, "YUYV")
        XCTAssertTrue(choice.reason.contains("320x240 is not offered (640x360 is the smallest larger size)"), choice.reason)
        XCTAssertTrue(choice.reason.contains("chose 640x360 YUYV @30"), choice.reason)
    }

    func testVividTooLargeRequestTakesTheLargestSize() throws {
        let choice = try choose(vivid, request(1920, 1080, 30))
        XCTAssertEqual(choice.size, size(1280, 720))
        XCTAssertTrue(choice.reason.contains("1920x1080 is not offered (1280x720 is the largest smaller size)"), choice.reason)
        // Larger in one dimension only counts as "below": the largest such size wins.
        let wide = try choose([CameraFormatOffer(fourcc: "YU12", sizes: [size(800, 200), size(640, 360)], rates: [30])],
                              request(700, 400, 30))
        XCTAssertEqual(wide.size, size(640, 360))
    }

    func testVividRateNearestTheRequest() throws {
        let choice = try choose(vivid, request(640, 360, 24))
        XCTAssertEqual(choice.frameRate, FrameRate(25))
        XCTAssertEqual(choice.output.framesPerSecond, 25)
        XCTAssertTrue(choice.reason.contains("24 fps is not offered at 640x360 (nearest 25)"), choice.reason)
        // A tie between 50 and 60 goes to the higher rate.
        XCTAssertEqual(try choose(vivid, request(640, 360, 55)).frameRate, FrameRate(60))
        XCTAssertEqual(try choose(vivid, request(640, 360, 120)).frameRate, FrameRate(60))
        XCTAssertEqual(try choose(vivid, request(640, 360, 1)).frameRate, FrameRate(25))
    }

    func testPreferredFormatNotOfferedIsSaid() throws {
        let choice = try choose(vivid, request(640, 360, 30, prefer: "MJPG"))
        XCTAssertEqual(choice.fourcc, "YU12")
        XCTAssertTrue(choice.reason.contains("preferred MJPG is not offered"), choice.reason)
    }

    func testReasonSummarisesTheOffer() throws {
        let reason = try choose(vivid, request(1280, 720, 30)).reason
        // Formats with identical sizes are folded; unusable ones are named.
        XCTAssertTrue(reason.contains("RGB3/YUYV/UYVY/YU12/NV12/BA81 320x180@25/30/50/60, 640x360@25/30/50/60, 1280x720@25/30/50/60"), reason)
        XCTAssertTrue(reason.contains("unusable: Y10, HSV3"), reason)
    }

    // MARK: UVC webcam

    func testWebcamPicksMJPEGWhenOnlyItReachesTheRateAtTheSize() throws {
        // YUYV 1280x720 runs at 10 fps only; MJPEG gives 30: a format that can deliver
        // the requested rate beats one that cannot, even against the preferred fourcc.
        let choice = try choose(webcam, request(1280, 720, 30, prefer: "YUYV"))
        XCTAssertEqual(choice.fourcc, "MJPG")
        XCTAssertEqual(choice.delivery, .mjpeg)
        XCTAssertEqual(choice.size, size(1280, 720))
        XCTAssertEqual(choice.frameRate, FrameRate(30))
        XCTAssertEqual(choice.output, VideoFormat(size: size(1280, 720), pixelFormat: .yuv420, framesPerSecond: 30))
        XCTAssertTrue(choice.reason.contains("chose 1280x720 MJPG @30 (decoded to YU12)"), choice.reason)
        XCTAssertTrue(choice.reason.contains("YUYV gives 1280x720 only at 10 fps"), choice.reason)
    }

    func testWebcamPicksPackedYUVOverMJPEGWhenBothServe() throws {
        let choice = try choose(webcam, request(640, 480, 30))
        XCTAssertEqual(choice.fourcc, "YUYV")
        XCTAssertTrue(choice.reason.contains("YUYV is 4:2:2 YUV"), choice.reason)
    }

    func testWebcamSlowRequestIsServedByTheRawFormat() throws {
        let choice = try choose(webcam, request(1280, 720, 10))
        XCTAssertEqual(choice.fourcc, "YUYV")
        XCTAssertEqual(choice.frameRate, FrameRate(10))
    }

    func testRateBeatsSizeWithinOneFormat() throws {
        // Without MJPEG, 30 fps at 640x480 beats 10 fps at 1280x720 (recordings expect 30 fps).
        let yuyvOnly = Array(webcam.prefix(1))
        let choice = try choose(yuyvOnly, request(1280, 720, 30))
        XCTAssertEqual(choice.size, size(640, 480))
        XCTAssertEqual(choice.frameRate, FrameRate(30))
        XCTAssertTrue(choice.reason.contains("1280x720 is not offered at 30 fps"), choice.reason)
        XCTAssertTrue(choice.reason.contains("YUYV is the only usable format"), choice.reason)
        // When no size reaches the rate, size decides and the nearest rate is taken.
        let choice25 = try choose(yuyvOnly, request(1280, 720, 60))
        XCTAssertEqual(choice25.size, size(1280, 720))
        XCTAssertEqual(choice25.frameRate, FrameRate(10))
        XCTAssertTrue(choice25.reason.contains("60 fps is not offered at 1280x720 (nearest 10)"), choice25.reason)
    }

    func testNTSCRatesCountAsTheWholeRate() throws {
        let offers = [CameraFormatOffer(fourcc: "YUYV", sizes: [
            CameraSizeOffer(.discrete(size(720, 480)), rates: .discrete([FrameRate(interval: 1001, 30000), FrameRate(15)])),
        ])]
        let choice = try choose(offers, request(720, 480, 30))
        XCTAssertEqual(choice.frameRate, FrameRate(30000, 1001))
        XCTAssertEqual(choice.output.framesPerSecond, 30)
        XCTAssertFalse(choice.reason.contains("not offered"), choice.reason)
    }

    // MARK: Stepwise and continuous

    func testStepwiseExactSize() throws {
        let choice = try choose(stepwise, request(1280, 720, 30))
        XCTAssertEqual(choice.size, size(1280, 720))
        XCTAssertEqual(choice.frameRate, FrameRate(30))
    }

    func testStepwiseSnapsUpToTheGrid() throws {
        // 16 + k·8: 1282 → 1288, 722 → 728.
        XCTAssertEqual(try choose(stepwise, request(1282, 722, 30)).size, size(1288, 728))
        // Beyond the maximum: the maximum.
        XCTAssertEqual(try choose(stepwise, request(4000, 3000, 30)).size, size(1920, 1080))
        // Below the minimum: the minimum.
        XCTAssertEqual(try choose(stepwise, request(8, 8, 30)).size, size(16, 16))
        // One dimension over, one under: each snaps on its own.
        XCTAssertEqual(try choose(stepwise, request(2000, 600, 30)).size, size(1920, 600))
    }

    func testStepwiseRateRange() throws {
        XCTAssertEqual(try choose(stepwise, request(640, 480, 15)).frameRate, FrameRate(15))
        let fast = try choose(stepwise, request(640, 480, 60))
        XCTAssertEqual(fast.frameRate, FrameRate(30))
        XCTAssertTrue(fast.reason.contains("60 fps is not offered at 640x480 (nearest 30)"), fast.reason)
    }

    func testStepwiseGridSkipsOddSizes() {
        // Odd step from an odd start: every other value is even.
        XCTAssertEqual(CameraFrameSizes.snap(100, 1, 641, 3), 100)   // 1 + 33·3
        XCTAssertEqual(CameraFrameSizes.snap(101, 1, 641, 3), 106)   // 103 is odd → 106
        XCTAssertEqual(CameraFrameSizes.snap(700, 1, 641, 3), 640)   // 640 = 1 + 213·3
        // An all-odd grid has no usable size.
        XCTAssertNil(CameraFrameSizes.snap(100, 15, 99, 2))
        // Continuous (step 1).
        XCTAssertEqual(CameraFrameSizes.snap(333, 1, 1000, 1), 334)
        let continuous = CameraFrameSizes.stepwise(minimum: size(2, 2), maximum: size(3840, 2160), step: size(1, 1))
        XCTAssertEqual(continuous.nearest(to: size(1280, 720)), size(1280, 720))
        XCTAssertEqual(continuous.text, "2x2…3840x2160")
        XCTAssertEqual(CameraFrameSizes.stepwise(minimum: size(16, 16), maximum: size(64, 64), step: size(8, 8)).text,
                       "16x16…64x64 step 8x8")
    }

    func testOddDiscreteSizesAreSkipped() throws {
        let offers = [CameraFormatOffer(fourcc: "YUYV", sizes: [size(175, 143), size(320, 180)], rates: [30])]
        XCTAssertEqual(try choose(offers, request(176, 144, 30)).size, size(320, 180))
    }

    // MARK: Rates the driver does not list

    func testListedRateBeatsUnlistedBeatsMissed() throws {
        func offer(_ fourcc: String, _ rates: CameraFrameRates) -> CameraFormatOffer {
            CameraFormatOffer(fourcc: fourcc, sizes: [CameraSizeOffer(.discrete(size(640, 480)), rates: rates)])
        }
        let unlisted = offer("YU12", .unknown)
        let reaches = offer("YUYV", .discrete([FrameRate(30)]))
        let misses = offer("NV12", .discrete([FrameRate(15)]))
        XCTAssertEqual(try choose([unlisted, reaches], request(640, 480, 30)).fourcc, "YUYV")
        let choice = try choose([misses, unlisted], request(640, 480, 30))
        XCTAssertEqual(choice.fourcc, "YU12")
        XCTAssertEqual(choice.frameRate, FrameRate(30))
        XCTAssertTrue(choice.reason.contains("the driver lists no frame rates"), choice.reason)
        XCTAssertEqual(try choose([offer("YUYV", .discrete([]))], request(640, 480, 30)).frameRate, FrameRate(30))
    }

    // MARK: Nothing usable

    func testOnlyUnsupportedFormatsIsAClearError() {
        let offers = [
            CameraFormatOffer(fourcc: "Y10", description: "10-bit Greyscale", sizes: [size(640, 480)], rates: [30]),
            CameraFormatOffer(fourcc: "pBAA", description: "10-bit Bayer BGBG/GRGR Packed", sizes: [size(640, 480)], rates: [30]),
        ]
        XCTAssertThrowsError(try CameraFormatNegotiation.choose(from: offers, for: request(640, 480, 30))) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("offers no pixel format kioskcam can record"), text)
            XCTAssertTrue(text.contains("Y10 (10-bit Greyscale) 640x480@30"), text)
            XCTAssertTrue(text.contains("pBAA (10-bit Bayer BGBG/GRGR Packed)"), text)
            XCTAssertTrue(text.contains("kioskcam records YU12, NV12, YV12, NV21, YUYV, UYVY, NV16, NV61, VYUY, 422P, YVYU, BGR3, "), text)
            XCTAssertTrue(text.contains(", RGBP, RGBR, MJPG, JPEG, BA81, GBRG, GRBG, RGGB, GREY"), text)
            XCTAssertTrue(text.contains("asked 640x480 @30"), text)
        }
    }

    func testNoFormatsAtAllIsAClearError() {
        XCTAssertThrowsError(try CameraFormatNegotiation.choose(from: [], for: request(640, 480, 30))) { error in
            XCTAssertTrue("\(error)".contains("the camera lists no pixel formats"), "\(error)")
        }
    }

    func testUsableFormatOnlyInOddSizesIsAClearError() {
        let offers = [CameraFormatOffer(fourcc: "YUYV", sizes: [size(175, 143)], rates: [30])]
        XCTAssertThrowsError(try CameraFormatNegotiation.choose(from: offers, for: request(176, 144, 30))) { error in
            XCTAssertTrue("\(error)".contains("only in odd sizes"), "\(error)")
            XCTAssertTrue("\(error)".contains("YUYV 175x143@30"), "\(error)")
        }
    }

    func testFormatWithoutSizesIsSkipped() throws {
        let offers = [CameraFormatOffer(fourcc: "YU12", sizes: []),
                      CameraFormatOffer(fourcc: "YUYV", sizes: [size(640, 480)], rates: [30])]
        XCTAssertEqual(try choose(offers, request(640, 480, 30)).fourcc, "YUYV")
    }

    // MARK: Format order

    /// Every usable fourcc, offered at the same size and rate, is chosen in rule 5's order:
    /// taking the winner away each time lists them all.
    func testFormatCostOrder() throws {
        let all = CameraFormatNegotiation.usableFourCCs.reversed().map {
            CameraFormatOffer(fourcc: $0, sizes: [size(640, 480)], rates: [30])
        }
        var remaining = Array(all)
        var order: [String] = []
        while !remaining.isEmpty {
            let chosen = try choose(remaining, request(640, 480, 30)).fourcc
            order.append(chosen)
            remaining.removeAll { $0.fourcc == chosen }
        }
        XCTAssertEqual(order, [
            "YU12", "NV12",                                             // the encoder takes them
            "YV12", "NV21",                                             // 4:2:0, U and V swapped
            "YUYV", "UYVY", "NV16", "NV61", "VYUY", "422P", "YVYU",    // 4:2:2
            "BGR3", "XR24", "AR24", "XB24", "AB24", "BX24", "BA24", "RX24", "RA24", "BGR4", "RGB4", "RGB3",
            "RGBP", "RGBR",                                             // RGB, cheapest first
            "MJPG", "JPEG",                                             // decoded
            "BA81", "GBRG", "GRBG", "RGGB",                             // demosaiced
            "GREY",                                                     // no colour
        ])
        XCTAssertEqual(order, CameraFormatNegotiation.usableFourCCs)
    }

    func testCostRanksEveryLayout() {
        let expected: [PixelFormat.Cost: [PixelFormat]] = [
            .none: [.yuv420, .nv12],
            .chromaOrder: [.yvu420, .nv21],
            .chroma422: [.yuyv, .uyvy, .nv16, .nv61, .vyuy, .yuv422p, .yvyu],
            .rgb: [.bgr24, .xbgr32, .abgr32, .rgbx32, .rgba32, .xrgb32, .argb32, .bgrx32, .bgra32, .bgr32, .rgb32, .rgb24,
                   .rgb565, .rgb565x],
            .bayer: [.sbggr8, .sgbrg8, .sgrbg8, .srggb8],
            .greyscale: [.grey],
        ]
        for format in PixelFormat.allCases {
            XCTAssertEqual(expected[format.cost]?.contains(format), true, "\(format) costs \(format.cost)")
            XCTAssertEqual(CameraDelivery.raw(format).costRank, format.cost.rawValue)
        }
        XCTAssertEqual(expected.values.map(\.count).reduce(0, +), PixelFormat.allCases.count)
        XCTAssertEqual(CameraDelivery.mjpeg.cost, .jpeg)
        XCTAssertEqual(PixelFormat.Cost.allCases, [.none, .chromaOrder, .chroma422, .rgb, .jpeg, .bayer, .greyscale])
    }

    /// The reason names each cost class in its own words when that is what decided.
    func testReasonNamesTheCostOfEachClass() throws {
        let cases: [(winner: String, loser: String, phrase: String)] = [
            ("NV12", "NV21", "NV12 needs no conversion"),
            ("YV12", "YUYV", "YV12 is 4:2:0 with its chroma in the other order"),
            ("NV21", "NV16", "NV21 is 4:2:0 with its chroma in the other order"),
            ("NV16", "XR24", "NV16 is 4:2:2 YUV (chroma halved vertically"),
            ("422P", "RGB3", "422P is 4:2:2 YUV"),
            ("RGB3", "MJPG", "RGB3 is RGB (a colour-space conversion"),
            ("RGBP", "BA81", "RGBP is RGB"),
            ("MJPG", "RGGB", "MJPG is JPEG (decoded on the CPU"),
            ("GBRG", "GREY", "GBRG is Bayer (demosaiced on the CPU"),
        ]
        for (winner, loser, phrase) in cases {
            let offers = [loser, winner].map { CameraFormatOffer(fourcc: $0, sizes: [size(640, 480)], rates: [30]) }
            let choice = try choose(offers, request(640, 480, 30))
            XCTAssertEqual(choice.fourcc, winner)
            XCTAssertTrue(choice.reason.contains(phrase), choice.reason)
        }
        let grey = try choose([CameraFormatOffer(fourcc: "GREY", sizes: [size(640, 480)], rates: [30])], request(640, 480, 30))
        XCTAssertEqual(grey.output.pixelFormat, .grey)
        XCTAssertTrue(grey.reason.contains("GREY is the only usable format"), grey.reason)
        XCTAssertEqual(PixelFormat.Cost.greyscale.phrase, "is greyscale (no colour)")
    }

    /// A camera that offers only layouts kioskcam used to refuse can record.
    func testCamerasWithoutYUVRecord() throws {
        let rgbOnly = [CameraFormatOffer(fourcc: "RGB3", description: "24-bit RGB 8-8-8", sizes: [size(640, 480)], rates: [30]),
                       CameraFormatOffer(fourcc: "BGR3", description: "24-bit BGR 8-8-8", sizes: [size(640, 480)], rates: [30])]
        let rgb = try choose(rgbOnly, request(640, 480, 30))
        XCTAssertEqual(rgb.delivery, .raw(.bgr24))
        XCTAssertEqual(rgb.output, VideoFormat(size: size(640, 480), pixelFormat: .bgr24, framesPerSecond: 30))
        XCTAssertEqual(try choose(rgbOnly, request(640, 480, 30, prefer: "RGB3")).delivery, .raw(.rgb24))
        let bayer = try choose([CameraFormatOffer(fourcc: "RGGB", sizes: [size(1920, 1080)], rates: [30])], request(1280, 720, 30))
        XCTAssertEqual(bayer.output, VideoFormat(size: size(1920, 1080), pixelFormat: .srggb8, framesPerSecond: 30))
    }

    /// Rules 1–3 still come before the layout: NV21 at 30 fps beats YU12 at 15.
    func testRateAndSizeComeBeforeTheLayout() throws {
        let offers = [
            CameraFormatOffer(fourcc: "YU12", sizes: [.size(1280, 720, fps: [15])]),
            CameraFormatOffer(fourcc: "NV21", sizes: [.size(1280, 720, fps: [30])]),
            CameraFormatOffer(fourcc: "GREY", sizes: [.size(1280, 720, fps: [30]), .size(640, 480, fps: [30])]),
            CameraFormatOffer(fourcc: "BA81", sizes: [.size(640, 480, fps: [30])]),
        ]
        XCTAssertEqual(try choose(offers, request(1280, 720, 30)).fourcc, "NV21")
        XCTAssertEqual(try choose(offers, request(1280, 720, 15)).fourcc, "YU12")
        // At 640x480 only GREY and Bayer serve: Bayer, which has colour.
        XCTAssertEqual(try choose(offers, request(640, 480, 30)).fourcc, "BA81")
        // The preferred layout wins among equals, even greyscale.
        XCTAssertEqual(try choose(offers, request(640, 480, 30, prefer: "GREY")).fourcc, "GREY")
    }

    func testFourCCMapping() {
        XCTAssertEqual(CameraDelivery(fourcc: "YUYV"), .raw(.yuyv))
        XCTAssertEqual(CameraDelivery(fourcc: "UYVY"), .raw(.uyvy))
        XCTAssertEqual(CameraDelivery(fourcc: "YU12"), .raw(.yuv420))
        XCTAssertEqual(CameraDelivery(fourcc: "NV12"), .raw(.nv12))
        XCTAssertEqual(CameraDelivery(fourcc: "MJPG"), .mjpeg)
        XCTAssertEqual(CameraDelivery(fourcc: "JPEG"), .mjpeg)
        XCTAssertEqual(CameraDelivery.mjpeg.pixelFormat, .yuv420)
        XCTAssertEqual(CameraDelivery(fourcc: "RGB3"), .raw(.rgb24))
        XCTAssertEqual(CameraDelivery(fourcc: "NV21"), .raw(.nv21))
        XCTAssertEqual(CameraDelivery(fourcc: "AR24"), .raw(.abgr32))
        XCTAssertEqual(CameraDelivery(fourcc: "BA81"), .raw(.sbggr8))
        XCTAssertEqual(CameraDelivery(fourcc: "mjpg"), .mjpeg)
        XCTAssertNil(CameraDelivery(fourcc: "H264"))
        XCTAssertNil(CameraDelivery(fourcc: "Y10"))
        XCTAssertNil(CameraDelivery(fourcc: "pBAA"))
        XCTAssertNil(CameraDelivery(fourcc: "NV24"))
        // Raw codes are case-sensitive in V4L2.
        XCTAssertNil(CameraDelivery(fourcc: "nv21"))
        // Every PixelFormat is reachable from its own fourcc.
        for format in PixelFormat.allCases { XCTAssertEqual(CameraDelivery(fourcc: format.rawValue), .raw(format)) }
        XCTAssertEqual(CameraFormatRequest(VideoFormat(size: size(320, 240), pixelFormat: .nv12, framesPerSecond: 25)),
                       request(320, 240, 25, prefer: "NV12"))
    }

    // MARK: FrameRate

    func testFrameRateFractions() {
        XCTAssertEqual(FrameRate(60, 2), FrameRate(30))
        XCTAssertEqual(FrameRate(interval: 1, 30), FrameRate(30))
        XCTAssertEqual(FrameRate(interval: 1001, 30000).description, "29.97")
        XCTAssertEqual(FrameRate(interval: 1001, 30000).roundedFramesPerSecond, 30)
        XCTAssertEqual(FrameRate(15, 2).description, "7.5")
        XCTAssertEqual(FrameRate(30).description, "30")
        XCTAssertEqual(FrameRate(1, 0).framesPerSecond, 0)
        XCTAssertEqual(FrameRate(1, 0).roundedFramesPerSecond, 1)
        XCTAssertLessThan(FrameRate(25), FrameRate(30000, 1001))
        XCTAssertEqual(CameraFrameRates.discrete([FrameRate(30), FrameRate(25)]).text, "25/30")
        XCTAssertEqual(CameraFrameRates.range(minimum: FrameRate(1), maximum: FrameRate(60)).text, "1…60")
    }
}
