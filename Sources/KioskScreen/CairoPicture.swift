import CCairo
import KioskCore

/// A picture read from a PNG file into a cairo surface (a thumbnail), owned once and
/// freed with it.
// @unchecked: a cairo surface (a C pointer), drawn only under the renderer's lock.
final class CairoPicture: @unchecked Sendable {
    let surface: OpaquePointer
    let size: ScreenSize

    /// nil when the file is missing, unreadable or not a PNG (cairo's status says which;
    /// the caller draws a placeholder either way).
    init?(png path: String) {
        guard let surface = cairo_image_surface_create_from_png(path) else { return nil }
        guard cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS else {
            cairo_surface_destroy(surface)
            return nil
        }
        self.surface = surface
        size = ScreenSize(width: Int(cairo_image_surface_get_width(surface)), height: Int(cairo_image_surface_get_height(surface)))
    }

    deinit { cairo_surface_destroy(surface) }

    /// Bytes held, for the cache's bound.
    var byteCount: Int { Int(cairo_image_surface_get_stride(surface)) * size.height }
}

extension CairoCanvas {
    /// Paints `surface` (`size`) scaled to fit `rect` with its aspect kept, centred.
    func paint(_ surface: OpaquePointer, size: ScreenSize, fittedInto rect: ScreenRect) {
        guard size.width > 0, size.height > 0, !rect.isEmpty else { return }
        let scale = min(Double(rect.width) / Double(size.width), Double(rect.height) / Double(size.height))
        let width = Double(size.width) * scale, height = Double(size.height) * scale
        cairo_save(context)
        cairo_rectangle(context, Double(rect.x), Double(rect.y), Double(rect.width), Double(rect.height))
        cairo_clip(context)
        cairo_translate(context, Double(rect.x) + (Double(rect.width) - width) / 2, Double(rect.y) + (Double(rect.height) - height) / 2)
        cairo_scale(context, scale, scale)
        cairo_set_source_surface(context, surface, 0, 0)
        cairo_paint(context)
        cairo_restore(context)
    }
}
