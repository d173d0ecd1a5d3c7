import CCairo
import KioskCore

/// A PNG read as grey levels, for pictures a person paints to tell kioskcam something
/// about the scene (the motion mask: black is "not here"). Read with cairo's PNG loader,
/// which the screen already links.
public enum GreyPicture {
    /// The picture's grey levels, row by row, or a sentence saying why not.
    public static func load(png path: String) -> Result<(width: Int, height: Int, pixels: [UInt8]), PictureError> {
        guard let surface = cairo_image_surface_create_from_png(path) else {
            return .failure(PictureError(message: "\(path): cairo could not allocate a surface"))
        }
        defer { cairo_surface_destroy(surface) }
        let status = cairo_surface_status(surface)
        guard status == CAIRO_STATUS_SUCCESS else {
            return .failure(PictureError(message: "\(path) is not a readable PNG (\(String(cString: cairo_status_to_string(status))))"))
        }
        cairo_surface_flush(surface)
        let width = Int(cairo_image_surface_get_width(surface)), height = Int(cairo_image_surface_get_height(surface))
        let stride = Int(cairo_image_surface_get_stride(surface))
        let format = cairo_image_surface_get_format(surface)
        guard width > 0, height > 0, width <= 8192, height <= 8192, stride >= width,
              let data = cairo_image_surface_get_data(surface) else {
            return .failure(PictureError(message: "\(path): a PNG of \(width)x\(height) is not a picture kioskcam can use (1…8192 pixels a side)"))
        }
        var pixels = [UInt8](repeating: 0, count: width * height)
        for y in 0..<height {
            let row = data + y * stride
            for x in 0..<width {
                switch format {
                case CAIRO_FORMAT_ARGB32, CAIRO_FORMAT_RGB24:
                    // Native-endian 0xAARRGGBB, premultiplied: a transparent pixel reads as black.
                    let pixel = UnsafeRawPointer(row + x * 4).loadUnaligned(as: UInt32.self)
                    let red = (pixel >> 16) & 0xFF, green = (pixel >> 8) & 0xFF, blue = pixel & 0xFF
                    pixels[y * width + x] = UInt8(truncatingIfNeeded: (red * 77 + green * 150 + blue * 29) >> 8)
                case CAIRO_FORMAT_A8:
                    pixels[y * width + x] = row[x]
                default:
                    return .failure(PictureError(message: "\(path): an unusual PNG layout; save it as 8-bit RGB or grey"))
                }
            }
        }
        return .success((width, height, pixels))
    }

    public struct PictureError: Error, Sendable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }
}
