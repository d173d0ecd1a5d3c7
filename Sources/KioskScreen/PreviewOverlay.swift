import CCairo
import KioskCore

/// `[overlay]` on the screen's preview (`overlay.preview = true`): the same text, white
/// on a black box at the same corner and the same share of the picture's height, drawn
/// by cairo in the same font (DejaVu Sans Mono Bold) onto the preview's own RGB copy —
/// never into the camera's frame, which other branches share.
public struct PreviewOverlay: Sendable, Equatable {
    public var text: String
    public var position: OverlayPosition
    /// The text's height as a share of the preview's height.
    public var heightFraction: Double

    public init(text: String, position: OverlayPosition, heightFraction: Double) {
        self.text = text
        self.position = position
        self.heightFraction = heightFraction
    }

    /// The box it takes on a picture of `size` (for tests and the drawing).
    func box(on size: ScreenSize, textWidth: Double) -> ScreenRect {
        let height = max(8, Int((heightFraction * Double(size.height)).rounded()))
        let padding = max(2, height / 6)
        let width = min(size.width, Int(textWidth.rounded(.up)) + 2 * padding)
        let boxHeight = min(size.height, height + padding)
        let x = position == .topLeft || position == .bottomLeft ? 0 : size.width - width
        let y = position == .topLeft || position == .topRight ? 0 : size.height - boxHeight
        return ScreenRect(x: x, y: y, width: width, height: boxHeight)
    }

    func draw(on canvas: CairoCanvas) {
        guard !text.isEmpty, canvas.size.width > 0, canvas.size.height > 0 else { return }
        let context = canvas.context
        let height = max(8, (heightFraction * Double(canvas.size.height)).rounded())
        cairo_save(context)
        defer { cairo_restore(context) }
        cairo_select_font_face(context, OverlayGlyphs.fontFamily, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD)
        // The font size whose ascent + descent fill the text's height, as the atlas does.
        cairo_set_font_size(context, 100)
        var font = cairo_font_extents_t()
        cairo_font_extents(context, &font)
        guard font.ascent + font.descent > 0 else { return }
        cairo_set_font_size(context, 100 * height / (font.ascent + font.descent))
        cairo_font_extents(context, &font)
        var extents = cairo_text_extents_t()
        cairo_text_extents(context, text, &extents)
        let rect = box(on: canvas.size, textWidth: extents.x_advance)
        canvas.fill(rect, Colour(0x000000))
        let padding = Double(max(2, Int(height) / 6))
        cairo_set_source_rgb(context, 1, 1, 1)
        cairo_move_to(context, (Double(rect.x) + padding).rounded(), (Double(rect.y) + padding / 2 + font.ascent).rounded())
        cairo_show_text(context, text)
        cairo_new_path(context)
    }
}
