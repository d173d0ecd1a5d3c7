/// A colour in BT.601 limited-range Y'CbCr, the space every supported pixel format uses.
public struct YCbCr: Sendable, Equatable {
    public var y: UInt8, cb: UInt8, cr: UInt8

    public init(y: UInt8, cb: UInt8, cr: UInt8) { (self.y, self.cb, self.cr) = (y, cb, cr) }

    /// Converts 8-bit RGB (BT.601, limited range).
    public init(red r: Int, green g: Int, blue b: Int) {
        func clamp(_ v: Int) -> UInt8 { UInt8(max(16, min(240, v))) }
        // `>> 8` floors (as the BT.601 integer formula intends); `/ 256` would round
        // negative chroma terms toward zero.
        y = clamp((66 * r + 129 * g + 25 * b + 128) >> 8 + 16)
        cb = clamp((-38 * r - 74 * g + 112 * b + 128) >> 8 + 128)
        cr = clamp((112 * r - 94 * g - 18 * b + 128) >> 8 + 128)
    }

    /// Peak white (Y 235): the converter takes full-range RGB.
    public static let white = YCbCr(red: 255, green: 255, blue: 255)
    public static let black = YCbCr(y: 16, cb: 128, cr: 128)
}

/// Draws the built-in camera's picture: colour bars, a box that moves one step per
/// frame (so dropped or repeated frames are visible), and a burned-in date, time and
/// frame number. Pure pixel arithmetic on a caller-owned buffer; the background is
/// rendered once, one row of each kind, so a frame costs a copy of each row plus the
/// moving parts.
public struct TestPatternRenderer: Sendable {
    public let format: VideoFormat
    /// The bars and the dark band, each as a frame two rows high: every row of the
    /// background is a row of one of them. A whole background frame kept instead
    /// (1.8 MiB at 720p YUYV) stayed resident for as long as the camera ran.
    private let barRows: [UInt8], bandRows: [UInt8]
    /// The planes of a frame and of the two-row strips (the same row lengths).
    private let framePlanes: [PlaneExtent], stripPlanes: [PlaneExtent]
    /// The first picture row of the dark band (negative when the band fills the frame).
    private let bandTop: Int
    /// Dots per glyph dot: the burned-in text's scale.
    public let glyphScale: Int

    /// The layouts the pattern is drawn in. Others (RGB, Bayer, greyscale and the rarer
    /// YUV orders) get YUYV: the built-in camera stands in for a camera, and every real
    /// layout is exercised by converting real frames (KioskMediaTests) and by vivid (HIL).
    public static let layouts: [PixelFormat] = [.yuyv, .uyvy, .yuv420, .nv12]

    /// - Parameter format: Size, rate and layout; a layout not in `layouts` becomes YUYV
    ///   (`format` says what is drawn).
    public init(format requested: VideoFormat) {
        var format = requested
        if !Self.layouts.contains(format.pixelFormat) { format.pixelFormat = .yuyv }
        self.format = format
        // Big enough to read, small enough that "YYYY-MM-DD HH:MM:SS #NNNNNN" (27 glyphs) fits.
        glyphScale = max(1, min(format.size.height / 120, (format.size.width - 8) / (27 * 6)))
        let colours: [YCbCr] = [
            YCbCr(red: 191, green: 191, blue: 191), YCbCr(red: 191, green: 191, blue: 0),
            YCbCr(red: 0, green: 191, blue: 191), YCbCr(red: 0, green: 191, blue: 0),
            YCbCr(red: 191, green: 0, blue: 191), YCbCr(red: 191, green: 0, blue: 0),
            YCbCr(red: 0, green: 0, blue: 191), YCbCr(red: 16, green: 16, blue: 16),
        ]
        let size = format.size
        var strip = format
        strip.size = FrameSize(width: size.width, height: 2)
        func drawStrip(_ draw: (inout YCbCrCanvas) -> Void) -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: strip.frameByteCount)
            bytes.withUnsafeMutableBytes { raw in
                var canvas = YCbCrCanvas(base: raw.baseAddress!, format: strip)
                draw(&canvas)
            }
            return bytes
        }
        let barWidth = (size.width + colours.count - 1) / colours.count
        barRows = drawStrip { canvas in
            for (index, colour) in colours.enumerated() {
                canvas.fill(x: index * barWidth, y: 0, width: barWidth, height: 2, colour)
            }
        }
        bandRows = drawStrip { $0.fill(x: 0, y: 0, width: size.width, height: 2, .black) }
        framePlanes = format.pixelFormat.planes(for: size)
        stripPlanes = strip.pixelFormat.planes(for: strip.size)
        // A dark band at the bottom keeps the burned-in text readable.
        bandTop = size.height - 12 * max(1, size.height / 120)
    }

    /// Writes the bars and the band: each plane's rows copied from the strips. A plane
    /// with fewer rows than the picture (4:2:0 chroma) holds a row for two picture rows,
    /// and is dark from the row that holds the band's first.
    func renderBackground(into base: UnsafeMutableRawPointer) {
        let height = format.size.height
        barRows.withUnsafeBytes { bars in
            bandRows.withUnsafeBytes { band in
                for (plane, strip) in zip(framePlanes, stripPlanes) {
                    let bandRow = plane.rows < height ? bandTop / 2 : bandTop
                    for row in 0..<plane.rows {
                        let source = (row >= bandRow ? band : bars).baseAddress! + strip.offset
                        (base + plane.offset + row * plane.rowBytes).copyMemory(from: source, byteCount: plane.rowBytes)
                    }
                }
            }
        }
    }

    /// Renders frame number `sequence` into `buffer`.
    /// - Parameters:
    ///   - buffer: At least `format.frameByteCount` bytes.
    ///   - sequence: The frame number; drives the moving box.
    ///   - caption: Text burned in at the bottom left (date and time, as ASCII);
    ///     the frame number follows it.
    ///   - clockMilliseconds: When set, the capture time (ms, wall clock, modulo 2^24)
    ///     burned in as the `clockStrip` blocks, for scripts/bench-web's glass-to-glass latency.
    public func render(into buffer: UnsafeMutableRawBufferPointer, sequence: Int, caption: [UInt8], clockMilliseconds: UInt32? = nil) {
        let size = format.size
        guard buffer.count >= format.frameByteCount, let base = buffer.baseAddress else { return }
        renderBackground(into: base)
        var canvas = YCbCrCanvas(base: base, format: format)
        let box = max(8, size.height / 8) & ~1
        let travel = max(1, size.width - box)
        let step = max(2, size.width / 120) & ~1
        var x = (sequence * step) % (2 * travel)
        if x > travel { x = 2 * travel - x }
        canvas.fill(x: x, y: size.height / 2 - box / 2, width: box, height: box, .white)

        let scale = glyphScale
        let textY = size.height - 10 * scale
        var textX = 2 * scale
        func draw(_ character: UInt8) {
            guard textX + 5 * scale <= size.width else { return }
            canvas.drawGlyph(character, x: textX, y: textY, scale: scale, colour: .white)
            textX += 6 * scale
        }
        for character in caption { draw(character) }
        draw(UInt8(ascii: " "))
        draw(UInt8(ascii: "#"))
        // The frame number, six digits, without building a string per frame.
        var divisor = 100_000
        while divisor > 0 {
            draw(UInt8(ascii: "0") + UInt8((sequence / divisor) % 10))
            divisor /= 10
        }
        if let clockMilliseconds {
            let strip = clockStrip
            guard strip.block > 0 else { return }
            for index in 0..<strip.count {
                let on = index == 0 || (index > 1 && clockMilliseconds >> UInt32(strip.count - 1 - index) & 1 == 1)
                canvas.fill(x: strip.x + index * strip.block, y: strip.y, width: strip.block, height: strip.block, on ? .white : .black)
            }
        }
    }

    /// Where the clock is drawn: `count` square blocks of `block` pixels in a row from
    /// (`x`, `y`): a white one and a black one (the levels a reader compares with), then
    /// `clockBits` bits, most significant first, white for 1. Blocks of 1/45 of the height
    /// (16 px at 720p) survive H.264 at any bit rate the encoder is set to.
    public var clockStrip: (x: Int, y: Int, block: Int, count: Int) {
        let size = format.size
        let count = 2 + Self.clockBits
        let block = min(max(4, size.height / 45), (size.width - 8) / count) & ~1
        return (x: block, y: block, block: max(0, block), count: count)
    }

    /// Bits of the burned-in clock: milliseconds modulo 2^24, 4.6 hours before it wraps.
    public static let clockBits = 24
}

extension TestPatternRenderer {
    /// Reads the burned-in frame number back from a decoded picture's luma (8-bit, one
    /// byte per pixel): tests check which frames a file holds (a recording that begins in
    /// the past, frames neither lost nor repeated) by decoding it, not by its length.
    /// - Parameters:
    ///   - captionLength: Characters of caption before " #" (0 for none).
    /// - Returns: The six-digit number, or nil when a digit cannot be read.
    public func readFrameNumber(luma: UnsafeRawBufferPointer, captionLength: Int = 0) -> Int? {
        let size = format.size
        guard luma.count >= size.pixelCount else { return nil }
        let scale = glyphScale
        let y = size.height - 10 * scale
        var number = 0
        for index in 0..<6 {
            let x = 2 * scale + (captionLength + 2 + index) * 6 * scale
            guard x + 5 * scale <= size.width else { return nil }
            var rows = [UInt8](repeating: 0, count: 7)
            for row in 0..<7 {
                for column in 0..<5 {
                    let px = x + column * scale + scale / 2, py = y + row * scale + scale / 2
                    if luma[py * size.width + px] > 128 { rows[row] |= 0x10 >> UInt8(column) }
                }
            }
            // The digit whose dots differ least (compression blurs an edge dot or two).
            var best: (digit: Int, misses: Int) = (0, Int.max)
            for digit in 0...9 {
                guard let glyph = TestPatternFont.rows(for: UInt8(ascii: "0") + UInt8(digit)) else { continue }
                let misses = zip(glyph, rows).reduce(0) { $0 + ($1.0 ^ $1.1).nonzeroBitCount }
                if misses < best.misses { best = (digit, misses) }
            }
            guard best.misses <= 3 else { return nil }
            number = number * 10 + best.digit
        }
        return number
    }
}

extension TestPatternRenderer {
    /// Reads the burned-in clock back from a picture's luma (8-bit, one byte per pixel), as
    /// scripts/bench-web's page does from the browser's video: each block's centre against
    /// the middle of the white and black reference blocks. Nil when the references are not
    /// clearly apart (no clock drawn).
    public func readClock(luma: UnsafeRawBufferPointer) -> UInt32? {
        let size = format.size, strip = clockStrip
        guard strip.block > 0, luma.count >= size.pixelCount else { return nil }
        func level(_ index: Int) -> Int {
            let x = strip.x + index * strip.block + strip.block / 2, y = strip.y + strip.block / 2
            return Int(luma[y * size.width + x])
        }
        let white = level(0), black = level(1)
        guard white - black > 64 else { return nil }
        var value: UInt32 = 0
        for index in 2..<strip.count {
            value = value << 1 | (level(index) * 2 > white + black ? 1 : 0)
        }
        return value
    }
}

/// Writes rectangles of one colour into any supported pixel layout (the test pattern,
/// and test frames elsewhere).
public struct YCbCrCanvas {
    let base: UnsafeMutableRawPointer
    let format: VideoFormat

    public init(base: UnsafeMutableRawPointer, format: VideoFormat) {
        self.base = base
        self.format = format
    }

    /// Fills a rectangle, clipped to the frame. Chroma is written at the format's
    /// subsampled resolution, so edges snap to even pixels.
    public mutating func fill(x: Int, y: Int, width: Int, height: Int, _ colour: YCbCr) {
        let w = format.size.width, h = format.size.height
        let x0 = max(0, x) & ~1, y0 = max(0, y)
        let x1 = min(w, x + width), y1 = min(h, y + height)
        guard x1 > x0, y1 > y0 else { return }
        let bytes = base.assumingMemoryBound(to: UInt8.self)
        switch format.pixelFormat {
        case .yuyv, .uyvy:
            let yuyv = format.pixelFormat == .yuyv
            let pair: (UInt8, UInt8, UInt8, UInt8) = yuyv
                ? (colour.y, colour.cb, colour.y, colour.cr) : (colour.cb, colour.y, colour.cr, colour.y)
            for row in y0..<y1 {
                var p = bytes + row * w * 2 + x0 * 2
                var col = x0
                while col + 1 < x1 + 1 && col < x1 {
                    p[0] = pair.0; p[1] = pair.1; p[2] = pair.2; p[3] = pair.3
                    p += 4
                    col += 2
                }
            }
        case .yuv420, .nv12:
            for row in y0..<y1 {
                (bytes + row * w + x0).update(repeating: colour.y, count: x1 - x0)
            }
            let cw = (w + 1) / 2, ch = (h + 1) / 2
            let cx0 = x0 / 2, cx1 = (x1 + 1) / 2, cy0 = y0 / 2, cy1 = (y1 + 1) / 2
            let chroma = bytes + w * h
            for row in cy0..<min(cy1, ch) {
                if format.pixelFormat == .yuv420 {
                    (chroma + row * cw + cx0).update(repeating: colour.cb, count: cx1 - cx0)
                    (chroma + cw * ch + row * cw + cx0).update(repeating: colour.cr, count: cx1 - cx0)
                } else {
                    var p = chroma + row * cw * 2 + cx0 * 2
                    for _ in cx0..<cx1 { p[0] = colour.cb; p[1] = colour.cr; p += 2 }
                }
            }
        default:
            break  // TestPatternRenderer.init draws only `TestPatternRenderer.layouts`.
        }
    }

    /// Draws one 5×7 glyph from `TestPatternFont`, each dot a `scale`×`scale` block.
    mutating func drawGlyph(_ character: UInt8, x: Int, y: Int, scale: Int, colour: YCbCr) {
        guard let rows = TestPatternFont.rows(for: character) else { return }
        for (rowIndex, bits) in rows.enumerated() {
            for column in 0..<5 where bits & (0x10 >> UInt8(column)) != 0 {
                fill(x: x + column * scale, y: y + rowIndex * scale, width: scale, height: scale, colour)
            }
        }
    }
}

/// A 5×7 dot font for the burned-in clock — the same idea as the kernel's vivid
/// driver, which carries its own font for its test patterns. The UI uses real fonts.
enum TestPatternFont {
    static func rows(for character: UInt8) -> [UInt8]? {
        switch character {
        case UInt8(ascii: "0"): [0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E]
        case UInt8(ascii: "1"): [0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E]
        case UInt8(ascii: "2"): [0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F]
        case UInt8(ascii: "3"): [0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E]
        case UInt8(ascii: "4"): [0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02]
        case UInt8(ascii: "5"): [0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E]
        case UInt8(ascii: "6"): [0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E]
        case UInt8(ascii: "7"): [0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08]
        case UInt8(ascii: "8"): [0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E]
        case UInt8(ascii: "9"): [0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C]
        case UInt8(ascii: ":"): [0x00, 0x0C, 0x0C, 0x00, 0x0C, 0x0C, 0x00]
        case UInt8(ascii: "-"): [0x00, 0x00, 0x00, 0x1F, 0x00, 0x00, 0x00]
        case UInt8(ascii: "."): [0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x0C]
        case UInt8(ascii: "#"): [0x0A, 0x0A, 0x1F, 0x0A, 0x1F, 0x0A, 0x0A]
        case UInt8(ascii: "/"): [0x01, 0x01, 0x02, 0x04, 0x08, 0x10, 0x10]
        default: nil
        }
    }
}
