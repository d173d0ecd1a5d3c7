import CCairo
import KioskCore

/// The overlay's glyph atlas, rendered once per text height by cairo in DejaVu Sans Mono
/// Bold (a monospaced font: every character takes one cell, so a changed digit redraws
/// one cell and the text never shifts as the seconds tick).
public enum OverlayGlyphs {
    static let fontFamily = "DejaVu Sans Mono"

    /// Sets `context`'s font to the overlay's, at the size whose ascent + descent fill
    /// `height` pixels (measured at a trial size, then scaled): the atlas's cells and the
    /// preview's text (`PreviewOverlay`) alike.
    /// - Returns: The size and its extents; nil when the font has no height.
    static func selectFont(_ context: OpaquePointer, filling height: Double) -> (size: Double, extents: cairo_font_extents_t)? {
        cairo_select_font_face(context, fontFamily, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD)
        cairo_set_font_size(context, 100)
        var font = cairo_font_extents_t()
        cairo_font_extents(context, &font)
        guard font.ascent + font.descent > 0 else { return nil }
        let size = 100 * height / (font.ascent + font.descent)
        cairo_set_font_size(context, size)
        cairo_font_extents(context, &font)
        return (size, font)
    }

    /// An atlas of `GlyphAtlas.characters` whose cells are `cellHeight` pixels high.
    /// - Returns: nil when cairo cannot make the surface (out of memory) or the height is out of 8…540.
    @Sendable public static func atlas(cellHeight: Int) -> GlyphAtlas? {
        guard (8...540).contains(cellHeight) else { return nil }
        let characters = GlyphAtlas.characters
        // Measure at a trial size, then scale so that ascent + descent fill the cell.
        guard let probe = cairo_image_surface_create(CAIRO_FORMAT_A8, 1, 1) else { return nil }
        defer { cairo_surface_destroy(probe) }
        guard let measure = cairo_create(probe) else { return nil }
        defer { cairo_destroy(measure) }
        guard let (size, font) = selectFont(measure, filling: Double(cellHeight)) else { return nil }
        var extents = cairo_text_extents_t()
        cairo_text_extents(measure, "M", &extents)
        let cellWidth = max(1, Int(extents.x_advance.rounded(.up)))
        let width = cellWidth * characters.count
        guard let surface = cairo_image_surface_create(CAIRO_FORMAT_A8, Int32(width), Int32(cellHeight)) else { return nil }
        defer { cairo_surface_destroy(surface) }
        guard cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS, let context = cairo_create(surface) else { return nil }
        defer { cairo_destroy(context) }
        cairo_select_font_face(context, fontFamily, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD)
        cairo_set_font_size(context, size)
        cairo_set_source_rgba(context, 1, 1, 1, 1)
        for (index, character) in characters.enumerated() {
            // Each glyph clipped to its own cell, so an overhang never reaches a neighbour.
            cairo_save(context)
            cairo_rectangle(context, Double(index * cellWidth), 0, Double(cellWidth), Double(cellHeight))
            cairo_clip(context)
            cairo_move_to(context, Double(index * cellWidth), font.ascent.rounded())
            cairo_show_text(context, String(character))
            cairo_restore(context)
        }
        cairo_surface_flush(surface)
        let stride = Int(cairo_image_surface_get_stride(surface))
        guard let data = cairo_image_surface_get_data(surface) else { return nil }
        var coverage = [UInt8](repeating: 0, count: width * cellHeight)
        var glyphs: [Character: Int] = [:]
        for (index, character) in characters.enumerated() {
            glyphs[character] = index
            for row in 0..<cellHeight {
                for x in 0..<cellWidth {
                    coverage[(index * cellHeight + row) * cellWidth + x] = data[row * stride + index * cellWidth + x]
                }
            }
        }
        return GlyphAtlas(cellWidth: cellWidth, cellHeight: cellHeight, glyphs: glyphs, coverage: coverage)
    }
}
