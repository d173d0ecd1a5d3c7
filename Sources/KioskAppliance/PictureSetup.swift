import Foundation
import KioskCore
import KioskScreen
import Logging

extension OverlaySpec {
    /// The overlay `[overlay]` describes, with cairo's glyphs; nil when its text is empty.
    /// - Parameter fields: The fields it shows; the appliance keeps them to set `{event}`.
    public static func configured(_ configuration: Configuration, fields: OverlayFields) -> OverlaySpec? {
        guard let text = configuration.overlay.template else { return nil }
        return OverlaySpec(text: text, position: configuration.overlay.position,
                           heightFraction: configuration.overlay.sizePercent / 100,
                           orientation: configuration.camera.orientation, fields: fields,
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
            case .success(let picture): mask.picture = picture
            case .failure(let error): return .failure(error)
            }
        }
        return .success(mask)
    }
}
