import CLibcamera
import KioskCore
import KioskSources

/// libcamera's camera manager: which cameras it lists. libcamera allows one manager per
/// process; the shim shares it among every `LibcameraManager`, counted, and stops it when
/// the last one (and every camera opened through it) is gone.
// @unchecked: it holds the shim's handle, whose calls are thread-safe (libcamera's
// CameraManager is); it is freed once, in deinit.
public final class LibcameraManager: @unchecked Sendable {
    let handle: OpaquePointer

    /// libcamera's version kioskcam was built against, e.g. "0.0.3".
    public static var version: String { String(cString: klc_version()) }

    /// Starts libcamera's camera manager (it enumerates cameras through udev).
    /// - Throws: `LibcameraError` `.system` when it does not start.
    public init() throws(LibcameraError) {
        var error = klc_error()
        guard let handle = klc_manager_start(&error) else {
            throw LibcameraError(error, camera: nil, call: "CameraManager::start")
        }
        self.handle = handle
    }

    deinit { klc_manager_stop(handle) }

    /// The ids of the cameras libcamera lists now, in its order.
    public var cameraIDs: [String] {
        (0..<max(klc_manager_camera_count(handle), 0)).compactMap { index in
            var id = [CChar](repeating: 0, count: 256)
            guard klc_manager_camera_id(handle, Int32(index), &id, id.count) == 0 else { return nil }
            return String(cString: id)
        }
    }

    /// Describes every listed camera (its formats, sizes and controls), for `probe`.
    /// A camera that cannot be described is listed with the reason.
    public func describeCameras() -> [LibcameraCameraDescription] {
        cameraIDs.map { id in
            do {
                let camera = try LibcameraHandle(manager: self, id: id)
                return camera.describe()
            } catch {
                return LibcameraCameraDescription(id: id, model: "", formats: [], controls: [], error: "\(error)")
            }
        }
    }
}
