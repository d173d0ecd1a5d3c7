import CAVUtil
import CSwScale
import Foundation
import KioskCore
import KioskMedia

/// The screen as a camera: what the framebuffer shows, copied a few times a second into
/// frames of a layout libswscale reads, for `kioskcam broadcast --source screen`.
///
/// A panel turned by `screen.rotation` is turned back, so the stream shows what the user
/// sees. A packed, unturned framebuffer is handed over by reference (no copy); otherwise
/// frames come from a small pool, and when the encoder still holds them all the frame is
/// skipped and counted rather than memory growing. A screen too large for the broadcast's
/// memory budget is scaled down here: libswscale reads the framebuffer (or the turned
/// picture) and writes 4:2:0 at the smaller size, which the encoder then takes as it is —
/// one conversion, not a scale followed by the encoder's own conversion.
public final class FramebufferCapture: VideoSource, Sendable {
    public let format: VideoFormat
    public var name: String { "screen \(framebuffer.path)" }
    private let framebuffer: Framebuffer
    private let rotation: ScreenRotation
    private let clock: MonotonicClock
    /// Frames to copy into; nil when the framebuffer's own pixels are handed over.
    private let pool: BufferPool?
    /// Scales the screen into `format` (4:2:0 at the asked size); nil at the screen's own
    /// size. Used only by the capture thread.
    private nonisolated(unsafe) let scaler: PixelConverter?
    private let stopRequested = Locked(false)
    private let skipped = Locked(0)
    private let thread = ThreadGroup()

    /// - Parameters:
    ///   - framebuffer: Opened for reading; the capture reads it until `stop()`, the
    ///     caller closes it after.
    ///   - framesPerSecond: How often the screen is read.
    ///   - framesInFlight: Frames the encoder may hold at once.
    ///   - size: The size to deliver (the broadcast plan's), or nil for the screen's own
    ///     (as the user sees it, turned).
    /// - Throws: `ScreenError.drawing` when libswscale cannot scale the screen's layout.
    public init(framebuffer: Framebuffer, rotation: ScreenRotation, framesPerSecond: Int, framesInFlight: Int,
                size: FrameSize? = nil, clock: MonotonicClock) throws(ScreenError) {
        self.framebuffer = framebuffer
        self.rotation = rotation
        self.clock = clock
        let rate = max(1, framesPerSecond)
        let unscaled: VideoFormat
        if rotation == .none, let layout = Self.pixelFormat(of: framebuffer.format) {
            unscaled = VideoFormat(size: FrameSize(width: framebuffer.size.width, height: framebuffer.size.height),
                                   pixelFormat: layout, framesPerSecond: rate)
        } else {
            // Turned, or a layout no camera format spells (vfb's BGR565): through the
            // screenshot path, RGBA bytes as the user sees them.
            let logical = PanelMapping(panelSize: framebuffer.size, rotation: rotation).logicalSize
            unscaled = VideoFormat(size: FrameSize(width: logical.width, height: logical.height), pixelFormat: .rgba32,
                                   framesPerSecond: rate)
        }
        if let size, size != unscaled.size {
            format = VideoFormat(size: size, pixelFormat: .yuv420, framesPerSecond: rate)
            do {
                // Bilinear: a screen's text stays legible at a fraction of bicubic's cost.
                scaler = try PixelConverter(source: unscaled, destinationSize: size, destinationFormat: AV_PIX_FMT_YUV420P,
                                            flags: kc_sws_bilinear() | kc_sws_full_chroma_input())
            } catch {
                throw ScreenError(.drawing, path: framebuffer.path, operation: "sws_getContext",
                                  detail: "libswscale cannot scale the \(unscaled) screen to \(size): \(error)")
            }
            pool = BufferPool(bufferCapacity: format.frameByteCount, count: max(1, framesInFlight))
        } else {
            format = unscaled
            scaler = nil
            pool = Self.readsByReference(framebuffer, rotation: rotation)
                ? nil : BufferPool(bufferCapacity: format.frameByteCount, count: max(1, framesInFlight))
        }
    }

    /// Whether a capture of `framebuffer` turned by `rotation` hands the framebuffer's own
    /// pixels over (packed rows in a camera layout, not turned): no frames are copied.
    public static func readsByReference(_ framebuffer: Framebuffer, rotation: ScreenRotation) -> Bool {
        rotation == .none && pixelFormat(of: framebuffer.format) != nil
            && framebuffer.stride == framebuffer.size.width * framebuffer.format.bytesPerPixel
    }

    /// The camera pixel format whose bytes are the framebuffer's pixels as they lie in
    /// memory (little-endian words), or nil.
    package static func pixelFormat(of format: FramebufferPixelFormat) -> PixelFormat? {
        switch format {
        case .xrgb8888: .xbgr32   // bytes B, G, R, X
        case .xbgr8888: .rgbx32   // bytes R, G, B, X
        case .rgb565: .rgb565
        default: nil
        }
    }

    /// Screen frames skipped because the encoder still held every frame of the pool.
    public var skippedFrames: Int { skipped.withLock { $0 } }

    public func start(into sink: CaptureSink) {
        stopRequested.withLock { $0 = false }
        thread.start(name: "kioskcam.screen.capture") { [self] in
            let period = format.frameDurationNanoseconds
            let start = clock.now()
            var sequence = 0
            while !stopRequested.withLock({ $0 }) {
                let due = start.advanced(byNanoseconds: Int64(sequence) * period)
                let wait = due.nanoseconds(since: clock.now())
                if wait > 0 {
                    // Woken early by `stop()`.
                    stopRequested.withLock(waitingUntil: { $0 }, deadline: Date(timeIntervalSinceNow: Double(wait) / 1e9)) { _ in }
                    continue
                }
                if let shared = sharedPicture() {
                    sink.deliver(VideoFrame(buffer: shared, format: format, timestamp: clock.now(), sequence: sequence))
                } else if let buffer = pool?.take() {
                    copyPicture(into: buffer)
                    sink.deliver(VideoFrame(buffer: buffer, format: format, timestamp: clock.now(), sequence: sequence))
                } else {
                    skipped.withLock { $0 += 1 }
                }
                sequence += 1
                // Behind by more than a second (a stalled machine): skip ahead, no burst.
                if clock.now().nanoseconds(since: start.advanced(byNanoseconds: Int64(sequence) * period)) > 1_000_000_000 {
                    sequence = Int(clock.now().nanoseconds(since: start) / period) + 1
                }
            }
            sink.videoSourceEnded(name, .stopped)
        }
    }

    public func stop() {
        stopRequested.withLock { $0 = true }
        stopRequested.wakeWaiters()
        thread.wait()
    }

    /// The framebuffer's own pixels as the frame, by reference, when its rows are packed
    /// and not turned: no copy (the encoder's converter reads the mapping; a frame drawn
    /// meanwhile may show half-drawn, as the panel itself would).
    private func sharedPicture() -> MediaBuffer? {
        guard pool == nil else { return nil }
        let plane = framebuffer.plane
        let rowBytes = format.size.width * framebuffer.format.bytesPerPixel
        return MediaBuffer(wrapping: plane.base, byteCount: rowBytes * format.size.height, onRelease: {})
    }

    private func copyPicture(into buffer: MediaBuffer) {
        guard let target = buffer.mutableBytes.baseAddress else { return }
        if let scaler {
            let plane = framebuffer.plane
            if scaler.source.pixelFormat != .rgba32 {
                // Straight from the mapping, its padded rows and all.
                scaler.convert(UnsafeRawPointer(plane.base), sourceRowBytes: plane.stride, intoPacked: target,
                               layout: format.pixelFormat, size: format.size)
            } else {
                framebuffer.logicalRGBA(rotation: rotation).withUnsafeBytes { bytes in
                    guard let source = bytes.baseAddress, bytes.count >= scaler.source.frameByteCount else { return }
                    scaler.convert(source, intoPacked: target, layout: format.pixelFormat, size: format.size)
                }
            }
            buffer.byteCount = format.frameByteCount
        } else if format.pixelFormat != .rgba32 {
            let rowBytes = format.size.width * framebuffer.format.bytesPerPixel
            let plane = framebuffer.plane
            for row in 0..<format.size.height {
                (target + row * rowBytes).copyMemory(from: plane.base + row * plane.stride, byteCount: rowBytes)
            }
            buffer.byteCount = rowBytes * format.size.height
        } else {
            let rgba = framebuffer.logicalRGBA(rotation: rotation)
            let count = min(rgba.count, buffer.capacity)
            rgba.withUnsafeBytes { bytes in
                if let source = bytes.baseAddress { target.copyMemory(from: source, byteCount: count) }
            }
            buffer.byteCount = count
        }
    }
}
