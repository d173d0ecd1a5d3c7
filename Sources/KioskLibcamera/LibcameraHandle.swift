import CLibcamera
import KioskCore
import KioskSources

/// One camera handle of the shim: owned once, closed (stopped, released, buffers
/// unmapped) in deinit — which, because every frame lent out in a mapped buffer holds
/// the handle, happens only after the last such frame is let go.
// @unchecked: it holds the shim's pointer. Describing, configuring, start and stop run on
// the opening thread before streaming and after it; dequeue/requeue on the capture thread
// only; set_control from any thread (the shim locks its pending list).
final class LibcameraHandle: @unchecked Sendable {
    let pointer: OpaquePointer
    let id: String
    /// Keeps the shared manager alive while this camera is open.
    let manager: LibcameraManager

    /// Gets a camera by id (nil: the first).
    /// - Throws: `LibcameraError` `.notFound`, or `.system`.
    init(manager: LibcameraManager, id: String?) throws(LibcameraError) {
        var error = klc_error()
        guard let pointer = klc_camera_get(manager.handle, id, &error) else {
            throw LibcameraError(error, camera: id, call: "CameraManager::get")
        }
        self.pointer = pointer
        self.manager = manager
        var text = [CChar](repeating: 0, count: 256)
        klc_camera_id(pointer, &text, text.count)
        self.id = String(cString: text)
    }

    deinit { klc_camera_close(pointer) }

    var model: String {
        var text = [CChar](repeating: 0, count: 256)
        klc_camera_model(pointer, &text, text.count)
        return String(cString: text)
    }

    /// The VideoRecording stream's formats with their sizes.
    /// - Throws: `LibcameraError` `.invalid` when the camera gives no configuration.
    func formatOffers() throws(LibcameraError) -> [LibcameraFormatOffer] {
        var error = klc_error()
        let count = klc_camera_format_count(pointer, &error)
        guard count >= 0 else { throw LibcameraError(error, camera: id, call: "generateConfiguration") }
        var offers: [LibcameraFormatOffer] = []
        for index in 0..<count {
            var name = [CChar](repeating: 0, count: 64)
            guard klc_camera_format_name(pointer, index, &name, name.count) == 0 else { continue }
            var sizes = [klc_size_range](repeating: klc_size_range(), count: 64)
            let listed = max(0, Int(klc_camera_format_sizes(pointer, index, &sizes, Int32(sizes.count))))
            var range = klc_size_range()
            let ranged = klc_camera_format_range(pointer, index, &range) == 1
            offers.append(LibcameraFormatOffer(
                name: String(cString: name),
                sizes: sizes.prefix(listed).compactMap { Self.size($0.max_width, $0.max_height) },
                range: ranged ? Self.range(range) : nil))
        }
        return offers
    }

    /// Sizes from libcamera, checked: nothing empty or beyond 16384 (the shim's numbers
    /// come from drivers).
    static func size(_ width: UInt32, _ height: UInt32) -> FrameSize? {
        guard (1...16384).contains(width), (1...16384).contains(height) else { return nil }
        return FrameSize(width: Int(width), height: Int(height))
    }

    static func range(_ range: klc_size_range) -> LibcameraFormatOffer.SizeRange? {
        guard let minimum = size(range.min_width, range.min_height), let maximum = size(range.max_width, range.max_height),
              minimum.width <= maximum.width, minimum.height <= maximum.height else { return nil }
        return LibcameraFormatOffer.SizeRange(minimum: minimum, maximum: maximum,
                                              step: FrameSize(width: Int(min(range.width_step, 16384)),
                                                              height: Int(min(range.height_step, 16384))))
    }

    var controls: [LibcameraCameraDescription.Control] {
        (0..<max(klc_camera_control_count(pointer), 0)).compactMap { index in
            var info = klc_control_info()
            guard klc_camera_control(pointer, index, &info) == 0 else { return nil }
            var name = info.name
            let text = withUnsafeBytes(of: &name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            return LibcameraCameraDescription.Control(name: text, minimum: info.minimum, maximum: info.maximum,
                                                      defaultValue: info.default_value)
        }
    }

    /// The largest ScalerCrop, nil when the camera has no digital zoom.
    var scalerCropMaximum: CropRectangle? {
        var rectangle = klc_rectangle()
        guard klc_camera_scaler_crop_maximum(pointer, &rectangle) == 1,
              rectangle.width > 0, rectangle.height > 0, rectangle.width <= 65536, rectangle.height <= 65536 else { return nil }
        return CropRectangle(x: Int(rectangle.x), y: Int(rectangle.y), width: Int(rectangle.width), height: Int(rectangle.height))
    }

    func describe() -> LibcameraCameraDescription {
        do {
            return LibcameraCameraDescription(id: id, model: model, formats: try formatOffers(), controls: controls, error: nil)
        } catch {
            return LibcameraCameraDescription(id: id, model: model, formats: [], controls: controls, error: error.description)
        }
    }

    /// Sets a control by libcamera's name, for the next request.
    /// - Throws: `LibcameraError` `.unsupportedControl` when the camera lacks it.
    func setControl(_ name: String, _ value: Double) throws(LibcameraError) {
        var error = klc_error()
        guard klc_camera_set_control(pointer, name, value, &error) == 0 else {
            throw LibcameraError(error, camera: id, call: "set \(name)")
        }
    }

    /// AfWindows of one rectangle, for the next request.
    /// - Throws: `LibcameraError` `.unsupportedControl` when the camera lacks AfWindows.
    func setAutofocusWindow(_ window: CropRectangle) throws(LibcameraError) {
        var error = klc_error()
        let rectangle = klc_rectangle(x: Int32(clamping: window.x), y: Int32(clamping: window.y),
                                      width: UInt32(clamping: window.width), height: UInt32(clamping: window.height))
        guard klc_camera_set_af_window(pointer, rectangle, &error) == 0 else {
            throw LibcameraError(error, camera: id, call: "set AfWindows")
        }
    }

    func setScalerCrop(_ crop: CropRectangle) throws(LibcameraError) {
        var error = klc_error()
        let rectangle = klc_rectangle(x: Int32(clamping: crop.x), y: Int32(clamping: crop.y),
                                      width: UInt32(clamping: crop.width), height: UInt32(clamping: crop.height))
        guard klc_camera_set_scaler_crop(pointer, rectangle, &error) == 0 else {
            throw LibcameraError(error, camera: id, call: "set ScalerCrop")
        }
    }
}
