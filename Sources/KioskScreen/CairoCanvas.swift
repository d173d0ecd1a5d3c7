import CCairo
import KioskCore

/// An sRGB colour with opacity, 0…1 per channel.
struct Colour: Sendable, Equatable {
    var red: Double, green: Double, blue: Double, alpha: Double

    init(_ hex: UInt32, alpha: Double = 1) {
        red = Double(hex >> 16 & 0xFF) / 255
        green = Double(hex >> 8 & 0xFF) / 255
        blue = Double(hex & 0xFF) / 255
        self.alpha = alpha
    }

    func withAlpha(_ alpha: Double) -> Colour {
        var copy = self
        copy.alpha = alpha
        return copy
    }
}

/// The one owner of a cairo image surface and its drawing context (the back buffer),
/// with the few drawing verbs the screens use. cairo's status is checked once, after
/// creation; drawing calls on a healthy context do not fail.
///
/// Text uses cairo's font selection (fontconfig) with DejaVu Sans, with antialiasing and
/// hinting pinned so the picture does not depend on the machine's fontconfig defaults.
final class CairoCanvas {
    let size: ScreenSize
    let surface: OpaquePointer
    let context: OpaquePointer
    /// Bytes a row of `pixels`.
    let stride: Int

    static let fontFamily = "DejaVu Sans"

    /// - Throws: `ScreenError.drawing` when cairo cannot make the surface (out of memory).
    init(size: ScreenSize, format: cairo_format_t = CAIRO_FORMAT_RGB24) throws(ScreenError) {
        self.size = size
        let surface = cairo_image_surface_create(format, Int32(size.width), Int32(size.height))!
        let status = cairo_surface_status(surface)
        guard status == CAIRO_STATUS_SUCCESS, let context = cairo_create(surface) else {
            cairo_surface_destroy(surface)
            throw ScreenError(.drawing, path: "memory", operation: "cairo_image_surface_create \(size)",
                              detail: String(cString: cairo_status_to_string(status)))
        }
        self.surface = surface
        self.context = context
        stride = Int(cairo_image_surface_get_stride(surface))
        let options = cairo_font_options_create()
        cairo_font_options_set_antialias(options, CAIRO_ANTIALIAS_GRAY)
        cairo_font_options_set_hint_style(options, CAIRO_HINT_STYLE_SLIGHT)
        cairo_font_options_set_hint_metrics(options, CAIRO_HINT_METRICS_OFF)
        cairo_set_font_options(context, options)
        cairo_font_options_destroy(options)
    }

    deinit {
        cairo_destroy(context)
        cairo_surface_destroy(surface)
    }

    /// The pixels, after cairo has finished drawing (0x00RRGGBB words, `stride` bytes a row).
    var pixels: UnsafeMutableRawPointer {
        cairo_surface_flush(surface)
        return UnsafeMutableRawPointer(cairo_image_surface_get_data(surface)!)
    }

    var plane: PixelPlane { PixelPlane(base: pixels, size: size, stride: stride) }

    /// Tells cairo the pixels were written from outside (libswscale).
    func markDirty() { cairo_surface_mark_dirty(surface) }

    // MARK: Shapes

    func setColour(_ colour: Colour) {
        cairo_set_source_rgba(context, colour.red, colour.green, colour.blue, colour.alpha)
    }

    func fill(_ rect: ScreenRect, _ colour: Colour) {
        setColour(colour)
        cairo_rectangle(context, Double(rect.x), Double(rect.y), Double(rect.width), Double(rect.height))
        cairo_fill(context)
    }

    func roundedRectPath(_ x: Double, _ y: Double, _ width: Double, _ height: Double, radius: Double) {
        let r = max(0, min(radius, width / 2, height / 2))
        cairo_new_sub_path(context)
        cairo_arc(context, x + width - r, y + r, r, -Double.pi / 2, 0)
        cairo_arc(context, x + width - r, y + height - r, r, 0, Double.pi / 2)
        cairo_arc(context, x + r, y + height - r, r, Double.pi / 2, Double.pi)
        cairo_arc(context, x + r, y + r, r, Double.pi, 3 * Double.pi / 2)
        cairo_close_path(context)
    }

    func fillRounded(_ rect: ScreenRect, radius: Double, _ colour: Colour) {
        setColour(colour)
        roundedRectPath(Double(rect.x), Double(rect.y), Double(rect.width), Double(rect.height), radius: radius)
        cairo_fill(context)
    }

    func strokeRounded(_ rect: ScreenRect, radius: Double, width: Double, _ colour: Colour) {
        setColour(colour)
        let half = width / 2
        roundedRectPath(Double(rect.x) + half, Double(rect.y) + half, Double(rect.width) - width, Double(rect.height) - width,
                        radius: radius - half)
        cairo_set_line_width(context, width)
        cairo_stroke(context)
    }

    func fillCircle(centreX: Double, centreY: Double, radius: Double, _ colour: Colour) {
        setColour(colour)
        cairo_new_sub_path(context)
        cairo_arc(context, centreX, centreY, radius, 0, 2 * Double.pi)
        cairo_fill(context)
    }

    func strokeCircle(centreX: Double, centreY: Double, radius: Double, width: Double, _ colour: Colour) {
        setColour(colour)
        cairo_new_sub_path(context)
        cairo_arc(context, centreX, centreY, radius, 0, 2 * Double.pi)
        cairo_set_line_width(context, width)
        cairo_stroke(context)
    }

    // MARK: Text

    enum Alignment { case leading, centre, trailing }

    func setFont(size: Double, bold: Bool = false) {
        cairo_select_font_face(context, Self.fontFamily, CAIRO_FONT_SLANT_NORMAL,
                               bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL)
        cairo_set_font_size(context, size)
    }

    /// The advance width of `text` in the current font.
    func textWidth(_ text: String) -> Double {
        var extents = cairo_text_extents_t()
        cairo_text_extents(context, text, &extents)
        return extents.x_advance
    }

    /// Draws one line of text vertically centred in `rect` (on the font's ascent and
    /// descent, so lines with and without descenders sit at the same height), shrinking
    /// the font if the text would not fit the width.
    func text(_ text: String, in rect: ScreenRect, size: Double, bold: Bool = false, colour: Colour,
              alignment: Alignment = .centre, padding: Double = 0) {
        guard !text.isEmpty else { return }
        setFont(size: size, bold: bold)
        let available = Double(rect.width) - 2 * padding
        var width = textWidth(text)
        if width > available, available > 0 {
            setFont(size: size * available / width, bold: bold)
            width = textWidth(text)
        }
        var font = cairo_font_extents_t()
        cairo_font_extents(context, &font)
        let x: Double
        switch alignment {
        case .leading: x = Double(rect.x) + padding
        case .centre: x = Double(rect.x) + (Double(rect.width) - width) / 2
        case .trailing: x = Double(rect.maxX) - padding - width
        }
        let baseline = Double(rect.y) + (Double(rect.height) + font.ascent - font.descent) / 2
        setColour(colour)
        cairo_move_to(context, x.rounded(), baseline.rounded())
        cairo_show_text(context, text)
        cairo_new_path(context)
    }

    // MARK: Pictures

    /// Paints `other`'s pixels with its top-left corner at (x, y).
    func paint(_ other: CairoCanvas, x: Int, y: Int) {
        cairo_save(context)
        cairo_set_source_surface(context, other.surface, Double(x), Double(y))
        cairo_rectangle(context, Double(x), Double(y), Double(other.size.width), Double(other.size.height))
        cairo_fill(context)
        cairo_restore(context)
    }
}
