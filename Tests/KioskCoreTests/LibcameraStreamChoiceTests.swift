import XCTest
@testable import KioskCore

/// libcamera's stream choice and control mapping, on offers shaped like real pipelines:
/// vimc (the HIL guest: RGB888/BGR888 in a size range), a Raspberry Pi camera module
/// through the rpi pipeline (YUV420, NV12, XRGB8888 at listed sizes), and formats kioskcam
/// cannot record.
final class LibcameraStreamChoiceTests: XCTestCase {
    func size(_ w: Int, _ h: Int) -> FrameSize { FrameSize(width: w, height: h) }

    var vimc: [LibcameraFormatOffer] {
        let range = LibcameraFormatOffer.SizeRange(minimum: size(16, 16), maximum: size(4096, 2160), step: size(0, 0))
        // libcamera lists common sizes inside the range as well, as `kioskcam probe` showed in the guest.
        let listed = [size(160, 120), size(320, 240), size(640, 480), size(1280, 720), size(1920, 1080)]
        return [LibcameraFormatOffer(name: "BGR888", sizes: listed, range: range),
                LibcameraFormatOffer(name: "RGB888", sizes: listed, range: range)]
    }

    var cameraModule3: [LibcameraFormatOffer] {
        let sizes = [size(640, 480), size(1280, 720), size(1920, 1080), size(2304, 1296)]
        return [LibcameraFormatOffer(name: "XRGB8888", sizes: sizes),
                LibcameraFormatOffer(name: "YUV420", sizes: sizes),
                LibcameraFormatOffer(name: "NV12", sizes: sizes),
                LibcameraFormatOffer(name: "SBGGR10_CSI2P", sizes: sizes)]
    }

    func testNamesMapToTheV4L2FourCCOfTheSameBytes() {
        // DRM's RGB888 is a little-endian word R:G:B, so B, G, R in memory: V4L2's BGR3.
        XCTAssertEqual(LibcameraStreamChoice.fourcc(ofLibcameraName: "RGB888"), "BGR3")
        XCTAssertEqual(LibcameraStreamChoice.fourcc(ofLibcameraName: "BGR888"), "RGB3")
        XCTAssertEqual(LibcameraStreamChoice.fourcc(ofLibcameraName: "XRGB8888"), "XR24")
        XCTAssertEqual(LibcameraStreamChoice.fourcc(ofLibcameraName: "YUV420"), "YU12")
        XCTAssertEqual(LibcameraStreamChoice.fourcc(ofLibcameraName: "NV12"), "NV12")
        XCTAssertNil(LibcameraStreamChoice.fourcc(ofLibcameraName: "SBGGR10_CSI2P"))
        XCTAssertNil(LibcameraStreamChoice.fourcc(ofLibcameraName: "YUV420_10"))
        // Every mapped fourcc is one the pipeline records, and maps back to its name.
        for (name, fourcc) in LibcameraStreamChoice.fourccOfName {
            XCTAssertNotNil(CameraDelivery(fourcc: fourcc), name)
            XCTAssertEqual(LibcameraStreamChoice.libcameraName(ofFourCC: fourcc), name)
        }
    }

    func testVimcGivesRGBAtTheAskedSizeFromItsRange() throws {
        // 320x180 is not listed, but inside the range: asked for as it is (not 320x240).
        let choice = try LibcameraStreamChoice.choose(
            from: vimc, for: CameraFormatRequest(size: size(320, 180), framesPerSecond: 10))
        XCTAssertEqual(choice.size, size(320, 180))
        // Both are RGB; BGR3 (libcamera's RGB888) is the cheaper conversion.
        XCTAssertEqual(choice.fourcc, "BGR3")
        XCTAssertEqual(LibcameraStreamChoice.libcameraName(ofFourCC: choice.fourcc), "RGB888")
    }

    func testASizeBeyondTheRangeIsClampedToItsLargest() throws {
        let choice = try LibcameraStreamChoice.choose(
            from: vimc, for: CameraFormatRequest(size: size(4096, 2304), framesPerSecond: 30))
        XCTAssertEqual(choice.size, size(4096, 2160))
    }

    func testACameraModulePrefersYUV420OverRGBAndSkipsRawBayer() throws {
        let choice = try LibcameraStreamChoice.choose(
            from: cameraModule3, for: CameraFormatRequest(size: size(1280, 720), framesPerSecond: 30))
        XCTAssertEqual(choice.fourcc, "YU12")
        XCTAssertEqual(choice.size, size(1280, 720))
        XCTAssertEqual(LibcameraStreamChoice.libcameraName(ofFourCC: choice.fourcc), "YUV420")
    }

    func testThePreferredFormatWinsAmongEquals() throws {
        let choice = try LibcameraStreamChoice.choose(
            from: cameraModule3, for: CameraFormatRequest(size: size(1920, 1080), framesPerSecond: 30, preferredFourCC: "NV12"))
        XCTAssertEqual(choice.fourcc, "NV12")
    }

    func testAnUnlistedSizeTakesTheSmallestLargerOne() throws {
        let choice = try LibcameraStreamChoice.choose(
            from: cameraModule3, for: CameraFormatRequest(size: size(800, 600), framesPerSecond: 30))
        XCTAssertEqual(choice.size, size(1280, 720))
    }

    func testOnlyRawBayerIsAnErrorNamingIt() {
        let raw = [LibcameraFormatOffer(name: "SRGGB10_CSI2P", sizes: [size(1920, 1080)])]
        XCTAssertThrowsError(try LibcameraStreamChoice.choose(
            from: raw, for: CameraFormatRequest(size: size(1920, 1080), framesPerSecond: 30))) { error in
            XCTAssertTrue("\(error)".contains("SRGGB10_CSI2P"), "\(error)")
        }
    }

    // MARK: Controls

    let moduleControls: Set<String> = ["AeEnable", "ExposureTime", "AnalogueGain", "AwbEnable", "ColourTemperature",
                                       "AfMode", "LensPosition", "Brightness", "Contrast", "ScalerCrop"]

    func testSettingsMapToLibcameraControlsInTheirUnits() {
        let plan = LibcameraControlPlan(zoom: nil, focus: .value(50), exposure: .value(100), whiteBalance: .automatic,
                                        brightness: -20, contrast: 150, offered: moduleControls, cropMaximum: nil,
                                        aspect: size(1280, 720))
        XCTAssertEqual(plan.settings, [
            .init("AeEnable", 0), .init("ExposureTime", 10_000),
            .init("AwbEnable", 1),
            .init("AfMode", LibcameraControlPlan.afModeManual), .init("LensPosition", 0.5),
            .init("Brightness", -0.2), .init("Contrast", 1.5),
        ])
        XCTAssertEqual(plan.notes.count, 5)
    }

    func testAutofocusIsContinuousAndMissingControlsAreNamed() {
        let plan = LibcameraControlPlan(zoom: 200, focus: .automatic, exposure: .automatic, whiteBalance: nil,
                                        brightness: nil, contrast: nil, offered: ["AeEnable"], cropMaximum: nil,
                                        aspect: size(1280, 720))
        XCTAssertEqual(plan.settings, [.init("AeEnable", 1)])
        XCTAssertNil(plan.crop)
        XCTAssertTrue(plan.notes.contains("focus: the camera has no AfMode control"), "\(plan.notes)")
        XCTAssertEqual(plan.outcomes.first, LibcameraControlPlan.Outcome(setting: "exposure", applied: "automatic"))
        XCTAssertEqual(plan.outcomes.first { $0.setting == "focus" }?.applied, nil)
        XCTAssertTrue(plan.notes.contains("zoom: the camera has no ScalerCrop control"), "\(plan.notes)")
    }

    func testZoomCropsTheCentreWithTheStreamsShape() {
        // Camera Module 3's sensor area (4608x2592, 16:9).
        let sensor = CropRectangle(x: 0, y: 0, width: 4608, height: 2592)
        XCTAssertEqual(LibcameraControlPlan.crop(zoomPercent: 200, within: sensor, aspect: size(1280, 720)),
                       CropRectangle(x: 1152, y: 648, width: 2304, height: 1296))
        // Below 100 %: the whole area.
        XCTAssertEqual(LibcameraControlPlan.crop(zoomPercent: 50, within: sensor, aspect: size(1280, 720)), sensor)
        // A 4:3 stream from a 16:9 sensor keeps 4:3, centred, inside an offset area.
        let offset = CropRectangle(x: 16, y: 8, width: 4608, height: 2592)
        let crop = LibcameraControlPlan.crop(zoomPercent: 100, within: offset, aspect: size(640, 480))
        XCTAssertEqual(crop, CropRectangle(x: 16 + 576, y: 8, width: 3456, height: 2592))
    }

    func testUSBCamerasAreToldApartByTheirIDs() {
        XCTAssertTrue(LibcameraStreamChoice.isUSBCamera(id: "\\_SB_.PCI0.XHC_.RHUB.HS08-8:1.0-0c45:6366"))
        XCTAssertTrue(LibcameraStreamChoice.isUSBCamera(id: "/base/scb/pcie@7d500000/pci@0,0/usb@0,0-1:1.0-046d:0825"))
        XCTAssertFalse(LibcameraStreamChoice.isUSBCamera(id: "/base/axi/pcie@120000/rp1/i2c@88000/imx708@1a"))
        XCTAssertFalse(LibcameraStreamChoice.isUSBCamera(id: "platform/vimc.0 Sensor B"))
        XCTAssertFalse(LibcameraStreamChoice.isUSBCamera(id: "-046D:0825"))
    }

    func testCameraSourceParsesLibcamera() {
        XCTAssertEqual(Configuration.CameraSource(parsing: "libcamera"), .libcamera(id: nil))
        XCTAssertEqual(Configuration.CameraSource(parsing: "libcamera:/base/soc/i2c0mux/i2c@1/imx708@1a"),
                       .libcamera(id: "/base/soc/i2c0mux/i2c@1/imx708@1a"))
        XCTAssertEqual(Configuration.CameraSource.libcamera(id: "platform/vimc.0 Sensor B").description,
                       "libcamera:platform/vimc.0 Sensor B")
        XCTAssertNil(Configuration.CameraSource(parsing: "libcamera:"))
    }
}
