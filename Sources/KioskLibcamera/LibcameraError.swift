import CLibcamera
import Glibc
import KioskCore

/// Every libcamera failure, mapped once from the shim's `klc_error` (`init(_:camera:call:)`):
/// which camera, which step, libcamera's or the kernel's words, and what to do. The shape
/// and its rendering are `DeviceError`'s.
public typealias LibcameraError = DeviceError<LibcameraErrorCode>

/// What kind of libcamera failure.
public enum LibcameraErrorCode: String, DeviceErrorCode {
    /// libcamera lists no camera (or none with the asked id).
    case notFound
    /// Another process holds the camera.
    case busy
    /// The camera cannot deliver what was asked, or offers nothing kioskcam records.
    case invalid
    /// The camera went away.
    case disconnected
    /// The camera has no such control.
    case unsupportedControl
    /// Anything else libcamera or the kernel reported.
    case system
}

extension DeviceError where Code == LibcameraErrorCode {
    /// Maps the shim's error once, with the hint that fits it.
    /// - Parameters:
    ///   - error: What the shim filled in.
    ///   - camera: The camera's id, when there is one.
    ///   - call: The shim's step ("klc_camera_configure").
    init(_ error: klc_error, camera: String?, call: String) {
        var message = error.message
        let text = withUnsafeBytes(of: &message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let code: Code
        let hint: String?
        switch Int32(error.code) {
        case Int32(KLC_NOT_FOUND.rawValue):
            code = .notFound
            hint = "list libcamera's cameras with `kioskcam probe` or `cam -l`; check the cable and `dmesg`, and on a Raspberry Pi `rpicam-hello --list-cameras`"
        case Int32(KLC_BUSY.rawValue):
            code = .busy
            hint = "another program holds the camera (rpicam-*, another kioskcam); stop it"
        case Int32(KLC_INVALID.rawValue):
            code = .invalid
            hint = "see what the camera offers with `kioskcam probe`; set camera.size and camera.pixel_format to one of those"
        case Int32(KLC_DISCONNECTED.rawValue):
            code = .disconnected
            hint = "the camera went away; check the cable and `dmesg`"
        case Int32(KLC_UNSUPPORTED.rawValue):
            code = .unsupportedControl
            hint = nil
        default:
            code = .system
            hint = nil
        }
        let errno = error.system_errno > 0 ? error.system_errno : nil
        self.init(code, subject: camera.map { "libcamera camera \($0)" }, call: call, errno: errno,
                  systemMessage: errno.map { String(cString: strerror($0)) }, detail: text, hint: hint)
    }
}
