import Foundation
import KioskCore
import KioskScreen
import Logging

extension OverlaySpec {
    /// The overlay `[overlay]` describes, with cairo's glyphs; nil when its text is empty.
    /// - Parameter fields: The fields it shows; the appliance keeps them to set `{event}`.
    /// - Parameter orientation: The camera's mounting (nil: `camera.rotation` and `mirror`).
    public static func configured(_ configuration: Configuration, fields: OverlayFields,
                                  orientation: PictureOrientation? = nil) -> OverlaySpec? {
        guard let text = configuration.overlay.template else { return nil }
        return OverlaySpec(text: text, position: configuration.overlay.position,
                           heightFraction: configuration.overlay.sizePercent / 100,
                           orientation: orientation ?? configuration.camera.orientation, fields: fields,
                           atlasMaker: OverlayGlyphs.atlas(cellHeight:))
    }
}

extension OverlayFields {
    /// `{device_name}`: `mqtt.device_name` when set, else the host's name.
    public static func configured(_ configuration: Configuration, deviceID: String?) -> OverlayFields {
        let name = configuration.mqtt.deviceName.isEmpty ? ProcessInfo.processInfo.hostName : configuration.mqtt.deviceName
        return OverlayFields(deviceName: name, deviceID: deviceID ?? "")
    }
}

extension PrivacyMask {
    /// The masks `[privacy]` describes: the rectangles and the PNG (read with cairo). A PNG
    /// that cannot be read is an error: starting without the mask would show what it hides.
    public static func configured(_ configuration: Configuration) -> Result<PrivacyMask, GreyPicture.PictureError> {
        var mask = PrivacyMask(regions: configuration.privacy.masks)
        if let path = configuration.privacy.maskPicture {
            switch GreyPicture.load(png: path) {
            case .success(let picture): mask.shown.picture = picture
            case .failure(let error): return .failure(error)
            }
        }
        return .success(mask)
    }
}

/// The overlay and the privacy masks of a configuration drawn on a mid-grey picture as
/// the recording shows it (upright): `kioskcam config overlay`, for seeing the result
/// before a camera records it, and the reference the hardware tests compare recordings with.
public enum PictureMarksPreview {
    /// A planar 4:2:0 picture (`camera.size`, turned by `camera.rotation`) with the masks
    /// black and the overlay's text for `unixSeconds` on top, as the encoder draws them.
    public static func render(_ configuration: Configuration, unixSeconds: Double, deviceID: String = "",
                              frame: Int = 0) -> Result<(size: FrameSize, pixels: [UInt8]), GreyPicture.PictureError> {
        let shown = configuration.camera.orientation.turnedSize(configuration.camera.size)
        let format = VideoFormat(size: shown, pixelFormat: .yuv420, framesPerSecond: configuration.camera.framesPerSecond)
        var pixels = [UInt8](repeating: 128, count: format.frameByteCount)
        let mask: PrivacyMask
        switch PrivacyMask.configured(configuration) {
        case .success(let configured): mask = configured
        case .failure(let error): return .failure(error)
        }
        let fields = OverlayFields.configured(configuration, deviceID: deviceID)
        pixels.withUnsafeMutableBytes { bytes in
            guard let base = bytes.baseAddress, let planes = PicturePlanes(packed: base, byteCount: bytes.count, format: format) else { return }
            mask.plan(for: shown, orientation: .upright).apply(to: planes)
            // Drawn as shown: the picture is already the turned one.
            OverlaySpec.configured(configuration, fields: fields, orientation: .upright)?.makeStamp()
                .draw(into: planes, unixSeconds: unixSeconds, frame: frame)
        }
        return .success((shown, pixels))
    }
}
