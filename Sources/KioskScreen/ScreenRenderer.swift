import Glibc
import KioskCore
import KioskMedia

/// Draws the screens with cairo into a back buffer the size of the logical
/// screen, then copies what changed onto the framebuffer, turned and packed into the
/// panel's pixel layout.
///
/// Threading: `render` is meant for one UI thread; `updatePreview` may come from
/// another (whoever holds the newest camera frame). A lock serialises the two, which is
/// why this is an `@unchecked Sendable` class: cairo surfaces and the swscale context are
/// not thread-safe, and each call holds the lock for one conversion or one frame.
/// `updatePreview` converts at once, so the caller can recycle the frame's buffer as
/// soon as it returns; `render` draws whatever picture was converted last. Neither
/// ever waits for the camera, so capture and encoding are never slowed by the screen.
// @unchecked: cairo surfaces and the swscale context (C pointers), used only under `lock` (see above).
public final class ScreenRenderer: @unchecked Sendable {
    public let framebuffer: Framebuffer
    public let mapping: PanelMapping
    /// Where everything sits, in logical pixels (for hit testing touches too).
    public let layout: ScreenLayout

    private let lock = Lock()
    let canvas: CairoCanvas
    /// What the panel shows, as fingerprints (damage is where the canvas differs).
    private var damageTracker: DamageTracker
    private let packer: PixelPacker
    private(set) var scaler: PreviewScaler?
    /// How the camera is mounted: the preview is turned upright (`camera.rotation`, `camera.mirror`).
    public let previewOrientation: PictureOrientation
    private(set) var hasPreview = false
    private var blanked = false
    private var statistics = RenderStatistics()
    /// The model drawn last: a player's picture redraws it (`presentMediaPicture`).
    private var lastModel: ScreenModel?
    /// The player's current picture or the photo shown, and whose it is.
    var mediaPicture: CairoCanvas?
    var mediaPicturePath: String?
    /// Thumbnails read from their PNGs, bounded: about 64 of 192x108 (5 MiB).
    var thumbnails = BoundedCache<String, CairoPicture>(maximumCost: 6 << 20, maximumCount: 64)
    /// The lock screen's QR code and the address it was made for: the PIN screen is drawn
    /// again at every key press and status change, the address changes almost never.
    var webQRCode: (url: String, code: QRCode?)?

    /// - Parameters:
    ///   - framebuffer: Where the picture goes; must be writable.
    ///   - rotation: How the panel is turned relative to the picture (config `screen.rotation`).
    ///   - previewOrientation: How the camera is mounted (config `camera.rotation`, `camera.mirror`).
    /// - Throws: `ScreenError.invalidGeometry` for a read-only framebuffer, `.drawing` when
    ///   cairo cannot allocate the back buffer.
    public init(framebuffer: Framebuffer, rotation: ScreenRotation, previewOrientation: PictureOrientation = .upright) throws(ScreenError) {
        self.previewOrientation = previewOrientation
        guard framebuffer.isWritable else {
            throw ScreenError(.invalidGeometry, path: framebuffer.path, operation: "draw",
                              detail: "the framebuffer was opened read-only")
        }
        self.framebuffer = framebuffer
        mapping = PanelMapping(panelSize: framebuffer.size, rotation: rotation)
        layout = ScreenLayout(size: mapping.logicalSize)
        canvas = try CairoCanvas(size: mapping.logicalSize)
        damageTracker = DamageTracker(size: mapping.logicalSize)
        packer = PixelPacker(framebuffer.format)
    }

    /// The logical screen size (the panel's, with axes swapped for 90 and 270).
    public var size: ScreenSize { mapping.logicalSize }

    // MARK: Preview

    /// Converts `frame` into the cached preview picture, scaled to fit the preview area
    /// (letter-boxed). Call at `screen.preview_fps` with the newest frame.
    /// - Throws: `ScreenError.drawing` when libswscale cannot convert the frame's format.
    public func updatePreview(_ frame: VideoFrame, overlay: PreviewOverlay? = nil) throws(ScreenError) {
        try lock.withLock { () throws(ScreenError) in
            guard frame.buffer.byteCount >= frame.format.frameByteCount else {
                throw ScreenError(.drawing, path: "memory", operation: "preview",
                                  detail: "the frame has \(frame.buffer.byteCount) bytes, \(frame.format) needs \(frame.format.frameByteCount)")
            }
            let area = ScreenSize(width: layout.preview.width, height: layout.preview.height)
            if scaler?.source != frame.format {
                let upright = previewOrientation.turnedSize(frame.format.size)
                scaler = try PreviewScaler(source: frame.format, destinationSize: PreviewScaler.fittedSize(upright, in: area),
                                           orientation: previewOrientation)
            }
            scaler?.scale(frame)
            if let overlay, let canvas = scaler?.destination { overlay.draw(on: canvas) }
            hasPreview = true
        }
    }

    /// Forgets the preview picture (camera lost): the live screen shows a placeholder.
    public func clearPreview() {
        lock.withLock { hasPreview = false }
    }

    // MARK: Rendering

    /// Draws `model` and copies the changed rectangles onto the framebuffer.
    /// - Returns: The rectangles copied, in logical pixels (empty when nothing changed).
    @discardableResult
    public func render(_ model: ScreenModel) -> [ScreenRect] {
        lock.withLock { renderLocked(model) }
    }

    /// Puts the player's next picture (or a photo) on the media view at once, from the
    /// player's thread: the picture is copied, and the last model is drawn again with it.
    /// - Parameters:
    ///   - pixels: `size` pixels in cairo's RGB24 memory layout (B, G, R, unused).
    ///   - path: The recording it belongs to; a picture of anything else is not drawn.
    /// - Returns: false when the pixels are short or cairo could not make the picture.
    @discardableResult
    public func presentMediaPicture(_ pixels: UnsafeRawBufferPointer, size picture: FrameSize, for path: String) -> Bool {
        lock.withLock {
            guard picture.width > 0, picture.height > 0, pixels.count >= picture.width * picture.height * 4,
                  let source = pixels.baseAddress else { return false }
            let wanted = ScreenSize(width: picture.width, height: picture.height)
            if mediaPicture?.size != wanted { mediaPicture = try? CairoCanvas(size: wanted) }
            guard let target = mediaPicture else { return false }
            let base = target.pixels
            for row in 0..<picture.height {
                (base + row * target.stride).copyMemory(from: source + row * picture.width * 4, byteCount: picture.width * 4)
            }
            target.markDirty()
            mediaPicturePath = path
            if let model = lastModel, model.page == .media, !presentPlayerPictureOnly(model) { renderLocked(model) }
            return true
        }
    }

    /// Forgets the player's picture (the player or photo closed).
    public func clearMediaPicture() {
        lock.withLock {
            mediaPicture = nil
            mediaPicturePath = nil
        }
    }

    /// A video's next picture on the player page drawn last: only the picture area and
    /// what lies over it (the time, the REC badge) are drawn again and copied — the
    /// buttons and scrubber have not changed, and a whole page drawn and compared at 30
    /// pictures a second is most of what the player costs beyond decoding and scaling.
    /// - Returns: false when the page is anything else (the caller draws it whole).
    private func presentPlayerPictureOnly(_ model: ScreenModel) -> Bool {
        guard damageTracker.remembersPanel, !blanked, let media = model.media, media.page == .player, media.message == nil,
              let item = media.currentItem, item.kind.isMovie, mediaPicturePath == item.path else { return false }
        let start = monotonicNanoseconds()
        drawPlayerPicture(media)
        drawPlayerTime(media)
        var area = media.layout.picture
        if model.recordingState != .idle {
            let badge = mediaRecordingBadge(media)
            drawRecordingBadge(model, in: badge)
            area = area.union(badge)
        }
        area = area.intersection(ScreenRect(x: 0, y: 0, width: size.width, height: size.height))
        guard !area.isEmpty else { return true }
        PanelCopy.copy(area, from: canvas.plane, to: framebuffer.plane, mapping: mapping, packer: packer, format: framebuffer.format)
        damageTracker.remember(area, of: canvas.plane)
        statistics.record(damage: [area], nanoseconds: monotonicNanoseconds() - start)
        return true
    }

    @discardableResult
    private func renderLocked(_ model: ScreenModel) -> [ScreenRect] {
        do {
            lastModel = model
            let start = monotonicNanoseconds()
            switch model.page {
            case .live: drawLive(model)
            case .pin: drawPin(model)
            case .blank: canvas.fill(ScreenRect(x: 0, y: 0, width: size.width, height: size.height), Palette.black)
            case .media: drawMedia(model)
            }
            let damage = damageTracker.damage(canvas.plane)     // the whole screen the first time
            for rect in damage {
                PanelCopy.copy(rect, from: canvas.plane, to: framebuffer.plane, mapping: mapping, packer: packer, format: framebuffer.format)
            }
            // Blank after the black picture is out (a driver that cannot blank shows black),
            // unblank only once the next picture is there.
            if (model.page == .blank) != blanked {
                blanked = model.page == .blank
                framebuffer.setBlanked(blanked)
            }
            statistics.record(damage: damage, nanoseconds: monotonicNanoseconds() - start)
            return damage
        }
    }

    /// Makes the next `render` copy the whole screen (after something else drew on the
    /// panel, such as the console).
    public func invalidate() {
        lock.withLock { damageTracker.forget() }
    }

    /// How long renders took and how much they copied.
    public var renderStatistics: RenderStatistics { lock.withLock { statistics } }

    // MARK: Screenshots

    /// What the framebuffer shows, as the user sees it, as a PNG.
    /// - Throws: `ScreenError.drawing` when the PNG encoder fails.
    public func screenshotPNG() throws(ScreenError) -> [UInt8] {
        let rgba = lock.withLock { framebuffer.logicalRGBA(rotation: mapping.rotation) }
        return try Screenshot.png(rgba: rgba, size: size, path: framebuffer.path)
    }
}

/// Totals of `ScreenRenderer.render`, for the benchmark and the daemon's status.
public struct RenderStatistics: Sendable, Equatable {
    public var frames = 0
    public var copiedPixels = 0
    public var lastNanoseconds: Int64 = 0
    public var maximumNanoseconds: Int64 = 0

    mutating func record(damage: [ScreenRect], nanoseconds: Int64) {
        frames += 1
        copiedPixels += damage.reduce(0) { $0 + $1.width * $1.height }
        lastNanoseconds = nanoseconds
        maximumNanoseconds = max(maximumNanoseconds, nanoseconds)
    }
}

/// PNG files of what a framebuffer shows.
public enum Screenshot {
    /// Encodes RGBA rows as PNG.
    /// - Throws: `ScreenError.drawing` naming the framebuffer when the encoder fails.
    public static func png(rgba: [UInt8], size: ScreenSize, path: String) throws(ScreenError) -> [UInt8] {
        do throws(MediaError) {
            return try PNGEncoder.encode(rgba, size: FrameSize(width: size.width, height: size.height), layout: .rgba)
        } catch {
            throw ScreenError(.drawing, path: path, operation: "encode screenshot PNG", detail: error.description)
        }
    }

    /// What `framebuffer` shows, turned back by `rotation`, as a PNG.
    public static func png(of framebuffer: Framebuffer, rotation: ScreenRotation) throws(ScreenError) -> [UInt8] {
        let mapping = PanelMapping(panelSize: framebuffer.size, rotation: rotation)
        return try png(rgba: framebuffer.logicalRGBA(rotation: rotation), size: mapping.logicalSize, path: framebuffer.path)
    }
}

/// CLOCK_MONOTONIC in nanoseconds, for render timings.
func monotonicNanoseconds() -> Int64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
}
