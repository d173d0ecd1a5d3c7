/// The framebuffer lives in its own module (no cairo), so that kioskcam-broadcast can read
/// the screen without linking the drawing; everything that draws sees it through this one.
@_exported import KioskFramebuffer
