import CEvdev
import Foundation
import KioskCore
import KioskTestSupport
import SystemPackage
import XCTest
@testable import KioskInput

/// The decoder's own copies of the kernel's constants equal linux/input.h's, and the
/// wrapper's errors say what failed and what to do — no device needed.
final class EvdevConstantsTests: XCTestCase {
    func testSwiftConstantsEqualTheKernelHeaders() {
        let pairs: [(String, UInt16, UInt32)] = [
            ("EV_SYN", EvdevCode.EV_SYN, kc_EV_SYN), ("EV_KEY", EvdevCode.EV_KEY, kc_EV_KEY), ("EV_REL", EvdevCode.EV_REL, kc_EV_REL),
            ("EV_ABS", EvdevCode.EV_ABS, kc_EV_ABS), ("EV_MSC", EvdevCode.EV_MSC, kc_EV_MSC),
            ("SYN_REPORT", EvdevCode.SYN_REPORT, kc_SYN_REPORT), ("SYN_MT_REPORT", EvdevCode.SYN_MT_REPORT, kc_SYN_MT_REPORT),
            ("SYN_DROPPED", EvdevCode.SYN_DROPPED, kc_SYN_DROPPED), ("MSC_TIMESTAMP", EvdevCode.MSC_TIMESTAMP, kc_MSC_TIMESTAMP),
            ("BTN_TOUCH", EvdevCode.BTN_TOUCH, kc_BTN_TOUCH), ("BTN_LEFT", EvdevCode.BTN_LEFT, kc_BTN_LEFT),
            ("BTN_TOOL_PEN", EvdevCode.BTN_TOOL_PEN, kc_BTN_TOOL_PEN), ("BTN_TOOL_FINGER", EvdevCode.BTN_TOOL_FINGER, kc_BTN_TOOL_FINGER),
            ("KEY_MAX", EvdevCode.KEY_MAX, kc_KEY_MAX),
            ("ABS_X", EvdevCode.ABS_X, kc_ABS_X), ("ABS_Y", EvdevCode.ABS_Y, kc_ABS_Y), ("ABS_PRESSURE", EvdevCode.ABS_PRESSURE, kc_ABS_PRESSURE),
            ("ABS_MT_SLOT", EvdevCode.ABS_MT_SLOT, kc_ABS_MT_SLOT), ("ABS_MT_TOUCH_MAJOR", EvdevCode.ABS_MT_TOUCH_MAJOR, kc_ABS_MT_TOUCH_MAJOR),
            ("ABS_MT_WIDTH_MAJOR", EvdevCode.ABS_MT_WIDTH_MAJOR, kc_ABS_MT_WIDTH_MAJOR),
            ("ABS_MT_POSITION_X", EvdevCode.ABS_MT_POSITION_X, kc_ABS_MT_POSITION_X),
            ("ABS_MT_POSITION_Y", EvdevCode.ABS_MT_POSITION_Y, kc_ABS_MT_POSITION_Y),
            ("ABS_MT_TRACKING_ID", EvdevCode.ABS_MT_TRACKING_ID, kc_ABS_MT_TRACKING_ID),
            ("ABS_MT_PRESSURE", EvdevCode.ABS_MT_PRESSURE, kc_ABS_MT_PRESSURE), ("ABS_MAX", EvdevCode.ABS_MAX, kc_ABS_MAX),
            ("INPUT_PROP_POINTER", EvdevCode.INPUT_PROP_POINTER, kc_INPUT_PROP_POINTER),
            ("INPUT_PROP_DIRECT", EvdevCode.INPUT_PROP_DIRECT, kc_INPUT_PROP_DIRECT),
        ]
        for (name, swift, kernel) in pairs {
            XCTAssertEqual(UInt32(swift), kernel, name)
        }
        // libevdev names the codes the same way the decoder's descriptions do.
        for (name, swift, _) in pairs where ["ABS_", "SYN_", "BTN_", "MSC_"].contains(where: name.hasPrefix) {
            let type = name.hasPrefix("ABS_") ? EvdevCode.EV_ABS : name.hasPrefix("SYN_") ? EvdevCode.EV_SYN
                : name.hasPrefix("MSC_") ? EvdevCode.EV_MSC : EvdevCode.EV_KEY
            XCTAssertEqual(libevdev_event_code_get_name(UInt32(type), UInt32(swift)).map { String(cString: $0) }, name)
        }
    }

    func testOpeningWhatIsNotAnInputDeviceSaysSo() throws {
        do {
            _ = try EvdevDevice(path: "/dev/input/event-that-does-not-exist")
            XCTFail("opened a missing node")
        } catch {
            XCTAssertEqual(error.code, .noSuchDevice)
            XCTAssertTrue(error.description.contains("open failed for /dev/input/event-that-does-not-exist"), error.description)
            XCTAssertTrue(error.description.contains("ENOENT"), error.description)
            XCTAssertTrue(error.description.contains("touch.device"), error.description)
        }
        do {
            _ = try EvdevDevice(path: "/dev/null")
            XCTFail("opened /dev/null as an input device")
        } catch {
            XCTAssertEqual(error.code, .notAnInputDevice, error.description)
            XCTAssertTrue(error.description.contains("libevdev_new_from_fd failed for /dev/null"), error.description)
        }
    }

    func testPermissionErrorsNameTheInputGroup() {
        let error = InputError(path: "/dev/input/event3", operation: "open", errno: .permissionDenied)
        XCTAssertEqual(error.code, .permissionDenied)
        XCTAssertTrue(error.description.contains("EACCES"))
        XCTAssertTrue(error.description.contains("`input` group"), error.description)
        let gone = InputError(path: "/dev/input/event3", operation: "libevdev_next_event", errno: .operationNotSupportedByDevice)
        XCTAssertEqual(gone.code, .unplugged)
        let uinput = InputError(path: "/dev/uinput", operation: "libevdev_uinput_create_from_device", errno: .noSuchFileOrDirectory)
        XCTAssertEqual(uinput.code, .uinputUnavailable)
        XCTAssertTrue(uinput.description.contains("modprobe uinput"))
    }

    func testDiscoveryInAFolderWithoutInputDevices() throws {
        let folder = TemporaryDirectory()
        // Files named like event nodes that are not devices: listed as failures, never chosen.
        _ = FileManager.default.createFile(atPath: folder.path + "/event0", contents: Data("x".utf8))
        _ = FileManager.default.createFile(atPath: folder.path + "/mouse0", contents: nil)
        try FileManager.default.createDirectory(atPath: folder.path + "/by-path", withIntermediateDirectories: true)
        XCTAssertEqual(TouchscreenDiscovery.eventNodes(in: folder.path), [folder.path + "/event0"])
        let report = TouchscreenDiscovery.scan(directory: folder.path)
        XCTAssertNil(report.best)
        XCTAssertEqual(report.failures.map(\.subject), [folder.path + "/event0"])
        XCTAssertEqual(report.failures.first?.code, .notAnInputDevice)

        // A panel on such a folder opens nothing, does not fail, and has only the hotplug fd.
        var notices: [TouchPanel.Notice] = []
        let panel = TouchPanel(settings: Configuration.Touch(), screen: ScreenSize(width: 800, height: 480), directory: folder.path)
        panel.onNotice = { notices.append($0) }
        let started = panel.start()
        XCTAssertEqual(notices, [], "start()'s notices are its return value, not told twice")
        notices += started
        XCTAssertEqual(panel.devices, [])
        XCTAssertNotNil(panel.hotplugDescriptor, "inotify works on any directory")
        XCTAssertEqual(panel.pollDescriptors, [panel.hotplugDescriptor!])
        XCTAssertEqual(notices.count, 1, "\(notices)")   // event0 could not be read
        XCTAssertNil(panel.nextDeadline)
        // A new file in the folder wakes the hotplug descriptor; it is judged once.
        _ = FileManager.default.createFile(atPath: folder.path + "/event7", contents: nil)
        var fds = [pollfd(fd: panel.hotplugDescriptor!, events: Int16(POLLIN), revents: 0)]
        XCTAssertEqual(poll(&fds, 1, 2000), 1, "inotify reported the new node")
        XCTAssertEqual(panel.handleReadable(fd: panel.hotplugDescriptor!), [])
        XCTAssertEqual(notices.count, 2, "\(notices)")
        XCTAssertTrue(notices.last?.description.contains("event7") ?? false, "\(notices)")
        panel.close()
        panel.close()
        XCTAssertEqual(panel.pollDescriptors, [])
    }

    func testNoneOpensNothing() {
        var settings = Configuration.Touch()
        settings.device = .none
        let panel = TouchPanel(settings: settings, screen: ScreenSize(width: 800, height: 480))
        XCTAssertEqual(panel.start(), [])
        XCTAssertEqual(panel.pollDescriptors, [])
    }

    /// EBUSY, EACCES and ENOENT keep the code and the hint they had before the device
    /// errors took one shape (`DeviceError`).
    func testBusyDeniedAndMissingKeepTheirCodeAndHint() {
        let cases: [(Errno, InputError.Code, String?)] = [
            (.resourceBusy, .system, nil),
            (.permissionDenied, .permissionDenied,
             "add the user to the `input` group (`sudo usermod -aG input $USER`, then log in again), or run as root"),
            (.noSuchFileOrDirectory, .noSuchDevice,
             "no such input device: list them with `kioskcam input-monitor` or `ls -l /dev/input/by-path`; set touch.device to the right /dev/input/eventN, or \"auto\""),
        ]
        for (errno, code, hint) in cases {
            let error = InputError(path: "/dev/input/event3", operation: "open", errno: errno)
            XCTAssertEqual(error.code, code, "\(errno)")
            XCTAssertEqual(error.hint, hint, "\(errno)")
            XCTAssertEqual(error.errno, errno.rawValue)
            XCTAssertTrue(error.description.hasPrefix("open failed for /dev/input/event3: \(errno.description) (\(ErrnoName.of(errno.rawValue)))"),
                          error.description)
        }
        let uinput = InputError(path: "/dev/uinput", operation: "open", errno: .permissionDenied)
        XCTAssertEqual(uinput.code, .uinputUnavailable)
    }
}
