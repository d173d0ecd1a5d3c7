/// Raw pixel layouts that cameras deliver and the pipeline accepts — every one that
/// libswscale (FFmpeg 5.1) can read, directly or by a zero-cost trick (see `KioskMedia`'s
/// `PixelFormat+Swscale.swift`).
///
/// Raw values are V4L2's fourccs, so logs match `v4l2-ctl` output; the doc comments give
/// the byte order in memory (V4L2's names say it the other way round for 32-bit RGB:
/// 'AR24', `V4L2_PIX_FMT_ABGR32`, is B, G, R, A in memory). Cases are declared in the
/// order the negotiation prefers them within one `PixelFormat.Cost`.
public enum PixelFormat: String, CaseIterable, Sendable, Codable {
    // 4:2:0 — what the encoder takes.
    /// Planar 4:2:0: Y plane, then U, then V (FFmpeg's yuv420p).
    case yuv420 = "YU12"
    /// Semi-planar 4:2:0: Y plane, then interleaved U V.
    case nv12 = "NV12"
    /// Planar 4:2:0: Y plane, then V, then U.
    case yvu420 = "YV12"
    /// Semi-planar 4:2:0: Y plane, then interleaved V U.
    case nv21 = "NV21"

    // 4:2:2.
    /// Packed 4:2:2, Y0 U Y1 V — the most common USB camera format.
    case yuyv = "YUYV"
    /// Packed 4:2:2, U Y0 V Y1.
    case uyvy = "UYVY"
    /// Semi-planar 4:2:2: Y plane, then interleaved U V at full height.
    case nv16 = "NV16"
    /// Semi-planar 4:2:2: Y plane, then interleaved V U at full height.
    case nv61 = "NV61"
    /// Packed 4:2:2, V Y0 U Y1.
    case vyuy = "VYUY"
    /// Planar 4:2:2: Y plane, then U, then V, each chroma plane half width, full height.
    case yuv422p = "422P"
    /// Packed 4:2:2, Y0 V Y1 U.
    case yvyu = "YVYU"

    // RGB (cheapest conversion first, as measured: see `Cost`).
    /// B, G, R — 3 bytes a pixel.
    case bgr24 = "BGR3"
    /// B, G, R, X (`V4L2_PIX_FMT_XBGR32`).
    case xbgr32 = "XR24"
    /// B, G, R, A (`V4L2_PIX_FMT_ABGR32`); the alpha byte is ignored.
    case abgr32 = "AR24"
    /// R, G, B, X (`V4L2_PIX_FMT_RGBX32`).
    case rgbx32 = "XB24"
    /// R, G, B, A (`V4L2_PIX_FMT_RGBA32`); the alpha byte is ignored.
    case rgba32 = "AB24"
    /// X, R, G, B (`V4L2_PIX_FMT_XRGB32`).
    case xrgb32 = "BX24"
    /// A, R, G, B (`V4L2_PIX_FMT_ARGB32`); the alpha byte is ignored.
    case argb32 = "BA24"
    /// X, B, G, R (`V4L2_PIX_FMT_BGRX32`).
    case bgrx32 = "RX24"
    /// A, B, G, R (`V4L2_PIX_FMT_BGRA32`); the alpha byte is ignored.
    case bgra32 = "RA24"
    /// B, G, R, X or A (`V4L2_PIX_FMT_BGR32`, deprecated by V4L2 but still offered).
    case bgr32 = "BGR4"
    /// X or A, R, G, B (`V4L2_PIX_FMT_RGB32`, deprecated by V4L2 but still offered).
    case rgb32 = "RGB4"
    /// R, G, B — 3 bytes a pixel.
    case rgb24 = "RGB3"
    /// 16-bit little-endian words rrrrrggg gggbbbbb (`V4L2_PIX_FMT_RGB565`).
    case rgb565 = "RGBP"
    /// The same words big-endian (`V4L2_PIX_FMT_RGB565X`).
    case rgb565x = "RGBR"

    // 8-bit Bayer: one colour per pixel, in a 2×2 mosaic named by its first two rows.
    /// B G / G R.
    case sbggr8 = "BA81"
    /// G B / R G.
    case sgbrg8 = "GBRG"
    /// G R / B G.
    case sgrbg8 = "GRBG"
    /// R G / G B.
    case srggb8 = "RGGB"

    // Luma only.
    /// 8-bit greyscale, one byte a pixel.
    case grey = "GREY"

    /// Bytes one frame of `size` occupies, tightly packed (no row padding) — exact for
    /// odd sizes too, rounding subsampled planes up as FFmpeg does.
    public func frameByteCount(_ size: FrameSize) -> Int {
        planes(for: size).reduce(0) { $0 + $1.byteCount }
    }

    /// Whether the layout samples colour on a grid coarser than the pixels (chroma
    /// subsampling, or a Bayer mosaic's 2×2 tile), so that a frame should have an even
    /// width and (for 4:2:0 and Bayer) an even height.
    public var needsEvenSize: Bool { geometry.sampling != .full }

    /// Where each plane of a tightly packed frame of `size` starts, and its rows.
    public func planes(for size: FrameSize) -> [PlaneExtent] {
        var offset = 0
        return geometry.planes.map { plane in
            let extent = PlaneExtent(offset: offset, rowBytes: plane.rowBytes(forWidth: size.width),
                                     rows: plane.rows(forHeight: size.height))
            offset += extent.byteCount
            return extent
        }
    }

    /// The planes and sampling of this layout. Both the V4L2 copy (`FramePacking`) and the
    /// FFmpeg plane pointers (`withPlanes`) are built from it, so they cannot disagree.
    public var geometry: PixelGeometry {
        switch self {
        case .yuv420, .yvu420: .init(sampling: .chroma420, planes: [.luma, .chroma420, .chroma420])
        case .nv12, .nv21: .init(sampling: .chroma420, planes: [.luma, .interleavedChroma420])
        case .yuyv, .uyvy, .vyuy, .yvyu: .init(sampling: .chroma422, planes: [.init(bytesPerGroup: 4, groupWidth: 2)])
        case .nv16, .nv61: .init(sampling: .chroma422, planes: [.luma, .init(bytesPerGroup: 2, groupWidth: 2)])
        case .yuv422p: .init(sampling: .chroma422, planes: [.luma, .init(bytesPerGroup: 1, groupWidth: 2), .init(bytesPerGroup: 1, groupWidth: 2)])
        case .bgr24, .rgb24: .init(sampling: .full, planes: [.init(bytesPerGroup: 3)])
        case .xbgr32, .abgr32, .rgbx32, .rgba32, .xrgb32, .argb32, .bgrx32, .bgra32, .bgr32, .rgb32:
            .init(sampling: .full, planes: [.init(bytesPerGroup: 4)])
        case .rgb565, .rgb565x: .init(sampling: .full, planes: [.init(bytesPerGroup: 2)])
        case .sbggr8, .sgbrg8, .sgrbg8, .srggb8: .init(sampling: .bayer, planes: [.luma])
        case .grey: .init(sampling: .full, planes: [.luma])
        }
    }

    /// What getting this layout into the encoder's 4:2:0 costs (negotiation rule 5).
    public var cost: Cost {
        switch self {
        case .yuv420, .nv12: .none
        case .yvu420, .nv21: .chromaOrder
        case .yuyv, .uyvy, .nv16, .nv61, .vyuy, .yuv422p, .yvyu: .chroma422
        case .bgr24, .xbgr32, .abgr32, .rgbx32, .rgba32, .xrgb32, .argb32, .bgrx32, .bgra32, .bgr32, .rgb32, .rgb24,
             .rgb565, .rgb565x: .rgb
        case .sbggr8, .sgbrg8, .sgrbg8, .srggb8: .bayer
        case .grey: .greyscale
        }
    }

    /// What it costs to turn a camera's frames into the recorder's 4:2:0, cheapest first —
    /// negotiation rule 5. Measured at 1280x720 on one x86-64 core with FFmpeg 5.1
    /// (`PixelConverterBenchmarkTests`: the minimum of 200 interleaved rounds): YUV
    /// reshuffles 0.2–1.7 ms; greyscale 1.1 ms; RGB 0.8 ms (BGR3, libswscale's special
    /// case), 2.6–2.8 ms (the 32-bit family, RGB3), 6.4 ms (RGB565, its generic path);
    /// decoding a JPEG to yuv420p 4.0 ms (a plain 57 KB frame) to 7.0 ms (a noisy 256 KB
    /// one, like a webcam's); 8-bit Bayer, demosaiced through RGB24, 4.1 ms. JPEG and Bayer
    /// cost about the same, and the camera's own processor demosaiced the JPEG's picture
    /// far better than libswscale's bilinear demosaic, so Bayer comes after JPEG.
    /// Greyscale is cheap but has no colour at all: a camera that offers it beside a colour
    /// layout is asked for colour.
    public enum Cost: Int, Comparable, Sendable, CaseIterable {
        /// YU12, NV12: the encoder takes them as they are.
        case none
        /// YV12, NV21: 4:2:0 with U and V the other way round — YV12's planes are swapped
        /// for free; libx264 takes NV21 as is, other encoders get it de-interleaved.
        case chromaOrder
        /// Packed 4:2:2, NV16, NV61, 422P: chroma halved vertically.
        case chroma422
        /// RGB: a colour-space conversion.
        case rgb
        /// MJPEG: every frame decoded on the CPU.
        case jpeg
        /// Bayer: demosaiced by libswscale, the lowest quality of the colour layouts.
        case bayer
        /// Greyscale: no colour.
        case greyscale

        public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

        /// Why a layout of this cost was chosen, for the negotiation's log line.
        public var phrase: String {
            switch self {
            case .none: "needs no conversion"
            case .chromaOrder: "is 4:2:0 with its chroma in the other order (reordered, not converted)"
            case .chroma422: "is 4:2:2 YUV (chroma halved vertically, cheaper than any RGB conversion)"
            case .rgb: "is RGB (a colour-space conversion, cheaper than decoding JPEG)"
            case .jpeg: "is JPEG (decoded on the CPU, better than demosaicing Bayer)"
            case .bayer: "is Bayer (demosaiced on the CPU, the lowest-quality colour)"
            case .greyscale: "is greyscale (no colour)"
            }
        }
    }
}

/// How a pixel layout's bytes are arranged: its planes, and how coarsely it samples colour.
public struct PixelGeometry: Sendable, Hashable {
    /// The grid colour is sampled on.
    public enum Sampling: Sendable, Hashable {
        /// Every pixel has its own colour (RGB, greyscale).
        case full
        /// 4:2:2 — one chroma pair per two pixels of a row.
        case chroma422
        /// 4:2:0 — one chroma pair per 2×2 pixels.
        case chroma420
        /// A Bayer mosaic: one colour per pixel, repeating every 2×2 pixels.
        case bayer
    }

    /// One plane: rows of pixel groups.
    public struct Plane: Sendable, Hashable {
        /// Bytes one group of `groupWidth` pixels takes in a row (packed 4:2:2: 4 bytes for 2 pixels).
        public var bytesPerGroup: Int
        /// Pixels one group covers horizontally: 2 for packed 4:2:2 and subsampled chroma.
        public var groupWidth: Int
        /// Picture rows one plane row covers: 2 for 4:2:0 chroma.
        public var rowsPerRow: Int

        public init(bytesPerGroup: Int, groupWidth: Int = 1, rowsPerRow: Int = 1) {
            self.bytesPerGroup = bytesPerGroup
            self.groupWidth = groupWidth
            self.rowsPerRow = rowsPerRow
        }

        /// One byte a pixel.
        public static let luma = Plane(bytesPerGroup: 1)
        /// U or V of planar 4:2:0.
        public static let chroma420 = Plane(bytesPerGroup: 1, groupWidth: 2, rowsPerRow: 2)
        /// Interleaved U V of semi-planar 4:2:0.
        public static let interleavedChroma420 = Plane(bytesPerGroup: 2, groupWidth: 2, rowsPerRow: 2)

        /// Bytes of one row of a picture `width` pixels wide (a partial group counts whole).
        public func rowBytes(forWidth width: Int) -> Int {
            bytesPerGroup * ((max(width, 0) + groupWidth - 1) / groupWidth)
        }

        /// Rows of a picture `height` pixels high (a partial row pair counts whole).
        public func rows(forHeight height: Int) -> Int {
            (max(height, 0) + rowsPerRow - 1) / rowsPerRow
        }

        /// This plane's row stride when the first plane's is `lumaStride`, by V4L2's rule for
        /// single-planar buffers: chroma rows are padded in proportion (YU12's chroma stride
        /// is half the luma's, NV12's equals it). `first` is the frame's first plane.
        public func stride(whenFirstPlaneStride lumaStride: Int, first: Plane) -> Int {
            lumaStride * bytesPerGroup * first.groupWidth / (groupWidth * first.bytesPerGroup)
        }
    }

    public var sampling: Sampling
    /// In memory order.
    public var planes: [Plane]

    public init(sampling: Sampling, planes: [Plane]) {
        self.sampling = sampling
        self.planes = planes
    }
}

/// Where one plane of a tightly packed frame lies.
public struct PlaneExtent: Sendable, Hashable {
    /// Bytes from the start of the frame.
    public var offset: Int
    public var rowBytes: Int
    public var rows: Int

    public init(offset: Int, rowBytes: Int, rows: Int) {
        self.offset = offset
        self.rowBytes = rowBytes
        self.rows = rows
    }

    public var byteCount: Int { rowBytes * rows }
}

/// A frame size in pixels.
public struct FrameSize: Hashable, Sendable, Codable, CustomStringConvertible {
    public var width: Int
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    public var pixelCount: Int { width * height }
    public var description: String { "\(width)x\(height)" }

    /// Parses "1280x720".
    public init?(parsing text: String) {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]) else { return nil }
        self.init(width: w, height: h)
    }
}

/// What a video source delivers: size, layout and nominal frame rate.
public struct VideoFormat: Hashable, Sendable, CustomStringConvertible {
    public var size: FrameSize
    public var pixelFormat: PixelFormat
    public var framesPerSecond: Int

    public init(size: FrameSize, pixelFormat: PixelFormat, framesPerSecond: Int) {
        self.size = size
        self.pixelFormat = pixelFormat
        self.framesPerSecond = framesPerSecond
    }

    public var frameByteCount: Int { pixelFormat.frameByteCount(size) }
    public var frameDurationNanoseconds: Int64 { 1_000_000_000 / Int64(max(framesPerSecond, 1)) }
    public var description: String { "\(size) \(pixelFormat.rawValue) @\(framesPerSecond)fps" }
}

/// What an audio source delivers: interleaved signed 16-bit PCM.
public struct AudioFormat: Hashable, Sendable, CustomStringConvertible {
    public var sampleRate: Int
    public var channels: Int

    public init(sampleRate: Int, channels: Int) {
        self.sampleRate = sampleRate
        self.channels = channels
    }

    public var bytesPerFrame: Int { 2 * channels }
    public var description: String { "\(sampleRate) Hz, \(channels) ch, S16" }
}
