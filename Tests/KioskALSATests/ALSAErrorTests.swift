import Glibc
import KioskCore
import XCTest
@testable import KioskALSA

/// The message builder, for the failures this machine (no sound card) cannot produce.
final class ALSAErrorTests: XCTestCase {
    private let usbMic = ALSAPCMCapabilities(minRate: 8000, maxRate: 48000, rates: [8000, 16000, 44100, 48000],
                                             minChannels: 1, maxChannels: 2, supportsS16: true,
                                             minPeriodMicroseconds: 1000, maxPeriodMicroseconds: 1_000_000)

    func testUnsupportedRateNamesWhatTheDeviceOffersAndPlughw() {
        let error = ALSAError(device: "hw:1,0", operation: .setSampleRate(12345), result: -EINVAL, offered: usbMic)
        XCTAssertEqual(error.code, .unsupported)
        XCTAssertEqual(error.systemMessage, "Invalid argument")
        XCTAssertEqual(error.description, """
            set sample rate 12345 Hz failed for hw:1,0: Invalid argument (EINVAL). \
            The device offers 8000–48000 Hz (of the usual rates: 8000, 16000, 44100, 48000); \
            set microphone.sample_rate to one of those, or use `plughw:1,0` to let ALSA resample.
            """)
    }

    func testUnsupportedChannelsAndFormat() {
        let channels = ALSAError(device: "hw:2,0", operation: .setChannels(6), result: -EINVAL, offered: usbMic)
        XCTAssertTrue(channels.description.contains("set 6 channels failed"), channels.description)
        XCTAssertTrue(channels.description.contains("offers 1–2 channels"), channels.description)
        XCTAssertTrue(channels.description.contains("microphone.channels"), channels.description)
        XCTAssertTrue(channels.description.contains("`plughw:2,0`"), channels.description)

        let format = ALSAError(device: "hw:2,0", operation: .setSampleFormat, result: -EINVAL, offered: usbMic)
        XCTAssertTrue(format.description.contains("S16_LE"), format.description)
        XCTAssertTrue(format.description.contains("`plughw:2,0`"), format.description)

        let period = ALSAError(device: "dsnooped", operation: .setPeriod(milliseconds: 20), result: -EINVAL,
                               offered: usbMic)
        XCTAssertTrue(period.description.contains("periods of 1–1000 ms"), period.description)
    }

    func testBusyPermissionAndMissingHints() {
        let busy = ALSAError(device: "hw:1,0", operation: .open, result: -EBUSY)
        XCTAssertEqual(busy.code, .busy)
        XCTAssertTrue(busy.description.contains("another program is using it"), busy.description)
        XCTAssertTrue(busy.description.contains("dsnoop"), busy.description)

        for code in [EACCES, EPERM] {
            let denied = ALSAError(device: "hw:1,0", operation: .open, result: -code)
            XCTAssertEqual(denied.code, .permissionDenied)
            XCTAssertTrue(denied.description.contains("`audio` group"), denied.description)
        }
        for code in [ENOENT, ENODEV] {
            let missing = ALSAError(device: "hw:3,0", operation: .open, result: -code)
            XCTAssertEqual(missing.code, .deviceMissing)
            XCTAssertTrue(missing.description.contains("arecord -l"), missing.description)
            XCTAssertTrue(missing.description.contains("kioskcam probe"), missing.description)
        }
        let unplugged = ALSAError(device: "hw:3,0", operation: .read, result: -ENODEV)
        XCTAssertTrue(unplugged.description.contains("unplugged"), unplugged.description)
    }

    func testPositiveCodesAreNormalisedAndOtherFailuresHaveNoHint() {
        let error = ALSAError(device: "default", operation: .start, result: EIO)
        XCTAssertEqual(error.errno, EIO)
        XCTAssertEqual(error.code, .other)
        XCTAssertNil(error.hint)
        XCTAssertEqual(error.description, "start capture failed for default: Input/output error (EIO).")
    }

    func testPlugDeviceNames() {
        XCTAssertEqual(ALSAError.plugDeviceName(for: "hw:1,0"), "plughw:1,0")
        XCTAssertEqual(ALSAError.plugDeviceName(for: "hw:Loopback,1,0"), "plughw:Loopback,1,0")
        XCTAssertEqual(ALSAError.plugDeviceName(for: "plughw:1,0"), "plughw:1,0")
        XCTAssertEqual(ALSAError.plugDeviceName(for: "default"), "plughw:CARD,DEVICE")
    }

    func testFirstSampleTimeSubtractsTheChunkAndWhatIsStillQueued() {
        let stamp = MonotonicInstant(nanoseconds: 100_000_000_000)
        // 960 frames just read + 1920 still queued at 48 kHz = 60 ms before the stamp.
        let first = CaptureTiming.firstSample(stampedAt: stamp, framesInChunk: 960, framesAvailable: 1920,
                                              sampleRate: 48_000)
        XCTAssertEqual(stamp.nanoseconds(since: first), 60_000_000)
        XCTAssertEqual(CaptureTiming.firstSample(stampedAt: stamp, framesInChunk: 441, framesAvailable: 0,
                                                 sampleRate: 44_100), stamp.advanced(byNanoseconds: -10_000_000))
    }

    func testCaptureDevicesDoesNotCrashWithoutSoundCards() throws {
        let devices = ALSADevices.captureDevices()
        // Empty here (no /dev/snd); on a board every entry names a `hw:` device.
        for device in devices {
            XCTAssertTrue(device.name.hasPrefix("hw:"))
            XCTAssertTrue(device.capabilities != nil || device.error != nil)
        }
        let json = try JSONEncoder().encode(devices)
        XCTAssertEqual(try JSONDecoder().decode([ALSACaptureDevice].self, from: json), devices)
    }

    func testCaptureDeviceIsCodable() throws {
        let device = ALSACaptureDevice(name: "hw:1,0", card: 1, cardID: "Loopback", cardName: "Loopback", device: 0,
                                       deviceName: "Loopback PCM", subdevices: 8, capabilities: usbMic, error: nil)
        let json = try JSONEncoder().encode(device)
        XCTAssertEqual(try JSONDecoder().decode(ALSACaptureDevice.self, from: json), device)
        XCTAssertTrue(String(decoding: json, as: UTF8.self).contains("\"supportsS16\":true"))
    }

    /// EBUSY, EACCES and ENOENT keep the code and the hint they had before the device
    /// errors took one shape (`DeviceError`); the errno is named from the one table
    /// instead of "ALSA error -16".
    func testBusyDeniedAndMissingKeepTheirCodeAndHint() {
        let cases: [(Int32, ALSAError.Code, String)] = [
            (EBUSY, .busy, "The device is busy: another program is using it; stop it or use a dsnoop/`plughw:` device."),
            (EACCES, .permissionDenied,
             "Permission denied: add the user to the `audio` group (`usermod -aG audio USER`, then log in again)."),
            (ENOENT, .deviceMissing,
             "The device is missing: list capture devices with `arecord -l` or `kioskcam probe`; set microphone.source to \"alsa:NAME\" (e.g. alsa:plughw:1,0)."),
        ]
        for (errno, code, hint) in cases {
            let error = ALSAError(device: "hw:1,0", operation: .open, result: -errno)
            XCTAssertEqual(error.code, code, "\(errno)")
            XCTAssertEqual(error.hint, hint, "\(errno)")
            XCTAssertEqual(error.errno, errno)
            XCTAssertEqual(error.call, .open)
            XCTAssertEqual(error.description,
                           "open for capture failed for hw:1,0: \(String(cString: strerror(errno))) (\(ErrnoName.of(errno))). \(hint)")
        }
        // alsa-lib's own codes have words but are no errno.
        let own = ALSAError(device: "hw:1,0", operation: .open, result: -500_000)
        XCTAssertNil(own.errno)
        XCTAssertNotNil(own.systemMessage)
    }
}
