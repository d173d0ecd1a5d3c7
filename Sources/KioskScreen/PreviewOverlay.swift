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

    /// The text's height and the box's padding on a picture `pictureHeight` pixels high.
    private func metrics(pictureHeight: Int) -> (text: Int, padding: Int) {
        let text = max(8, Int((heightFraction * Double(pictureHeight)).rounded()))
        return (text, max(2, text / 6))
    }

    /// The box it takes on a picture of `size` (for tests and the drawing).
    func box(on size: ScreenSize, textWidth: Double) -> ScreenRect {
        let (height, padding) = metrics(pictureHeight: size.height)
        let width = min(size.width, Int(textWidth.rounded(.up)) + 2 * padding)
        let boxHeight = min(size.height, height + padding)
        let x = position == .topLeft || position == .bottomLeft ? 0 : size.width - width
        let y = position == .topLeft || position == .topRight ? 0 : size.height - boxHeight
        return ScreenRect(x: x, y: y, width: width, height: boxHeight)
    }

    func draw(on canvas: CairoCanvas) {
        guard !text.isEmpty, canvas.size.width > 0, canvas.size.height > 0 else { return }
        let context = canvas.context
        let (height, padding) = metrics(pictureHeight: canvas.size.height)
        cairo_save(context)
        defer { cairo_restore(context) }
        guard let (_, font) = OverlayGlyphs.selectFont(context, filling: Double(height)) else { return }
        var extents = cairo_text_extents_t()
        cairo_text_extents(context, text, &extents)
        let rect = box(on: canvas.size, textWidth: extents.x_advance)
        canvas.fill(rect, Colour(0x000000))
        cairo_set_source_rgb(context, 1, 1, 1)
        cairo_move_to(context, Double(rect.x + padding), (Double(rect.y) + Double(padding) / 2 + font.ascent).rounded())
        cairo_show_text(context, text)
        cairo_new_path(context)
    }
}
