/// Choosing a libcamera camera's video stream, and mapping our camera settings to its
/// controls — pure, so every rule is unit-tested without a camera. `KioskLibcamera`
/// turns the camera's StreamFormats into `LibcameraFormatOffer`s and asks `choose`; the
/// rules are `CameraFormatNegotiation`'s (a V4L2 camera's), so the same configuration
/// picks the same kind of format from either: YUV420/NV12 first (no conversion), 4:2:2
/// next, then RGB (vimc gives only RGB888/BGR888).
public enum LibcameraStreamChoice {
    /// libcamera's pixel format names (DRM fourccs, little-endian words) and the V4L2
    /// fourcc of the same bytes in memory. libcamera's "RGB888" is B, G, R in memory —
    /// V4L2's BGR3 — and "XRGB8888" is B, G, R, X: V4L2's XR24.
    public static let fourccOfName: [String: String] = [
        "YUV420": "YU12", "NV12": "NV12", "YVU420": "YV12", "NV21": "NV21",
        "YUYV": "YUYV", "UYVY": "UYVY", "VYUY": "VYUY", "YVYU": "YVYU",
        "NV16": "NV16", "NV61": "NV61", "YUV422": "422P",
        "RGB888": "BGR3", "BGR888": "RGB3",
        "XRGB8888": "XR24", "ARGB8888": "AR24", "XBGR8888": "XB24", "ABGR8888": "AB24",
        "RGBX8888": "BX24", "BGRX8888": "RX24", "RGBA8888": "BA24", "BGRA8888": "RA24",
        "RGB565": "RGBP", "R8": "GREY", "MJPEG": "MJPG",
    ]

    /// The V4L2 fourcc of a libcamera format name, nil for ones kioskcam cannot record
    /// (packed Bayer, 10-bit YUV, …).
    public static func fourcc(ofLibcameraName name: String) -> String? {
        guard let fourcc = fourccOfName[name], CameraDelivery(fourcc: fourcc) != nil else { return nil }
        return fourcc
    }

    /// The libcamera name of a fourcc that `fourcc(ofLibcameraName:)` gave.
    public static func libcameraName(ofFourCC fourcc: String) -> String? {
        fourccOfName.first { $0.value == fourcc }?.key
    }

    /// Whether a libcamera camera id is a USB (UVC) camera's: libcamera's uvcvideo
    /// pipeline ends its ids with the USB vendor and product ("…-046d:0825"). `auto`
    /// leaves those to the V4L2 source, which drives UVC cameras directly (with their
    /// controls at run time), as it did before libcamera support.
    public static func isUSBCamera(id: String) -> Bool {
        let tail = Array(id.utf8.suffix(10))
        guard tail.count == 10, tail[0] == UInt8(ascii: "-"), tail[5] == UInt8(ascii: ":") else { return false }
        let hex = tail[1...4] + tail[6...9]
        return hex.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }
    }

    /// Picks the format and size to configure. libcamera lists no frame rates per size,
    /// so the rate is asked for (FrameDurationLimits) and the camera's pace is what counts.
    /// - Parameters:
    ///   - offers: The stream's formats as libcamera names them.
    ///   - request: The configured size, rate and preferred fourcc (`camera.pixel_format`).
    /// - Returns: The choice (its `fourcc` a V4L2 fourcc; `libcameraName(ofFourCC:)` gives
    ///   the name to configure) with a one-line reason.
    /// - Throws: `CameraFormatNegotiationError` when no offered format is recordable.
    public static func choose(from offers: [LibcameraFormatOffer],
                              for request: CameraFormatRequest) throws(CameraFormatNegotiationError) -> CameraFormatChoice {
        let translated = offers.map { offer -> CameraFormatOffer in
            // Unknown names keep libcamera's name, so errors list them as not recordable.
            let fourcc = fourcc(ofLibcameraName: offer.name) ?? offer.name
            // Listed sizes, and the range: a pipeline's ISP or scaler makes any size in the
            // range, so an exact request inside it wins over a listed larger size.
            var sizes = offer.sizes.map { CameraSizeOffer(.discrete($0), rates: .unknown) }
            if let range = offer.range {
                sizes.append(CameraSizeOffer(.stepwise(minimum: range.minimum, maximum: range.maximum,
                                                       step: FrameSize(width: max(range.step.width, 1),
                                                                       height: max(range.step.height, 1))),
                                             rates: .unknown))
            }
            return CameraFormatOffer(fourcc: fourcc, description: offer.name, sizes: sizes)
        }
        return try CameraFormatNegotiation.choose(from: translated, for: request)
    }
}

/// One pixel format of a libcamera stream: discrete sizes, or a range (or both).
public struct LibcameraFormatOffer: Hashable, Sendable, Codable {
    public struct SizeRange: Hashable, Sendable, Codable {
        public var minimum: FrameSize
        public var maximum: FrameSize
        /// 0x0 when libcamera gives no steps.
        public var step: FrameSize

        public init(minimum: FrameSize, maximum: FrameSize, step: FrameSize) {
            self.minimum = minimum
            self.maximum = maximum
            self.step = step
        }
    }

    /// libcamera's name, e.g. "NV12", "RGB888".
    public var name: String
    public var sizes: [FrameSize]
    public var range: SizeRange?

    public init(name: String, sizes: [FrameSize], range: SizeRange? = nil) {
        self.name = name
        self.sizes = sizes
        self.range = range
    }
}
