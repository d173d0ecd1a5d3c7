/// The picture of a sound recording: its samples reduced to one lowest/highest pair per
/// pixel column, drawn as vertical lines mirrored around a centre line. Pure arithmetic;
/// decoding the file and writing the PNG live in KioskMedia (`WaveformRenderer`).

/// One lowest/highest sample pair per pixel column, in -1…1 (full scale), left to right.
///
/// A collection of `(min: Float, max: Float)`; `Array(columns)` gives the plain pairs.
/// A column no sample fell into (a file shorter than expected) reads (0, 0): silence.
public struct WaveformColumns: RandomAccessCollection, Sendable, Equatable {
    public typealias Element = (min: Float, max: Float)

    private var minima: [Float]
    private var maxima: [Float]

    /// Columns from explicit pairs (tests, or a picture of something already reduced).
    public init(_ extents: [(min: Float, max: Float)]) {
        minima = extents.map(\.min)
        maxima = extents.map(\.max)
    }

    /// `count` silent columns.
    public init(silentCount count: Int) {
        minima = Array(repeating: 0, count: Swift.max(0, count))
        maxima = minima
    }

    init(minima: [Float], maxima: [Float]) {
        self.minima = minima
        self.maxima = maxima
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { minima.count }
    public subscript(position: Int) -> Element { (minima[position], maxima[position]) }
}

/// Reduces a whole recording, chunk by chunk, to one min/max pair per pixel column
/// without keeping its samples: memory depends on the column count, never on the length.
///
/// Frames are assigned to columns by index, `column = frame * columns / totalFrames`, so
/// column `c` holds frames `⌈c·T/C⌉ ..< ⌈(c+1)·T/C⌉`. When there are fewer frames than
/// columns, a frame spans several columns and each shows it.
///
/// The frame count comes from the container (kioskcam's files always state it). When
/// it is unknown (`totalFrames <= 0`) the reducer accumulates, then rebins: it keeps
/// between 4 and 8 buckets per column, each covering a power-of-two number of frames,
/// halving their number (merging neighbours) whenever they reach 8 per column; `columns`
/// then assigns each bucket by its middle frame to the column that frame belongs to.
/// Up to 8 frames per column the result is exact; beyond, a column's edge is off by at
/// most one bucket (≤ ¼ column). One pass either way.
///
/// A known count that turns out short (the decoder gives more frames than the container
/// said) puts the surplus into the last column; callers that mind re-run with the real
/// count (`WaveformRenderer` does when the surplus exceeds one column). A count that
/// turns out long leaves the columns past the last frame silent.
public struct WaveformReducer: Sendable {
    /// The number of columns (pixels across).
    public let columnCount: Int
    /// The expected frame count; nil when unknown (accumulate-then-rebin).
    public let totalFrames: Int?
    /// Frames added so far.
    public private(set) var framesAdded = 0

    // Per column when the count is known, per bucket when it is not. Empty: +inf/-inf.
    private var lows: [Float]
    private var highs: [Float]
    // Known count: the column being filled and the first frame of the next one.
    private var column = 0
    private var nextBoundary = 0
    // Unknown count: frames per bucket (a power of two) and the most buckets kept.
    private var bucketFrames = 1
    private let bucketLimit: Int

    /// - Parameters:
    ///   - totalFrames: Frames the recording holds (all channels mixed to one); 0 or less
    ///     if unknown.
    ///   - columns: Pixel columns to reduce to (at least 1).
    public init(totalFrames: Int, columns: Int) {
        columnCount = max(1, columns)
        bucketLimit = 8 * columnCount
        // A count so large that frame × column would overflow is no real recording's.
        if totalFrames > 0, totalFrames <= Int.max / (2 * (columnCount + 1)) {
            self.totalFrames = totalFrames
            lows = Array(repeating: .infinity, count: columnCount)
            highs = Array(repeating: -.infinity, count: columnCount)
            nextBoundary = (totalFrames + columnCount - 1) / columnCount
        } else {
            self.totalFrames = nil
            lows = []
            highs = []
            lows.reserveCapacity(bucketLimit)
            highs.reserveCapacity(bucketLimit)
        }
    }

    /// Adds the next run of mono samples, full scale at -1…1 (louder values are kept as
    /// they are and clipped when drawn; NaN is ignored).
    public mutating func add(_ samples: UnsafeBufferPointer<Float>) {
        if totalFrames == nil { addToBuckets(samples) } else { addToColumns(samples) }
    }

    /// Adds the next run of mono 16-bit samples (full scale 32768).
    public mutating func add(_ samples: UnsafeBufferPointer<Int16>) {
        withUnsafeTemporaryAllocation(of: Float.self, capacity: 1024) { converted in
            var start = 0
            while start < samples.count {
                let count = min(converted.count, samples.count - start)
                for index in 0..<count { converted[index] = Float(samples[start + index]) / 32768 }
                add(UnsafeBufferPointer(rebasing: converted[0..<count]))
                start += count
            }
        }
    }

    /// The columns for everything added so far.
    public var columns: WaveformColumns {
        guard let totalFrames else { return rebinnedColumns() }
        return Self.filled(minima: lows, maxima: highs, totalFrames: totalFrames, framesAdded: framesAdded)
    }

    private mutating func addToColumns(_ samples: UnsafeBufferPointer<Float>) {
        guard let total = totalFrames else { return }
        var index = 0
        while index < samples.count {
            if framesAdded >= total {
                Self.extend(&lows[columnCount - 1], &highs[columnCount - 1], samples, index..<samples.count)
                framesAdded += samples.count - index
                return
            }
            let end = min(samples.count, index + (nextBoundary - framesAdded))
            Self.extend(&lows[column], &highs[column], samples, index..<end)
            framesAdded += end - index
            index = end
            if framesAdded == nextBoundary, framesAdded < total {
                column = min(columnCount - 1, framesAdded * columnCount / total)
                nextBoundary = min(total, ((column + 1) * total + columnCount - 1) / columnCount)
            }
        }
    }

    private mutating func addToBuckets(_ samples: UnsafeBufferPointer<Float>) {
        var index = 0
        while index < samples.count {
            var bucket = framesAdded / bucketFrames
            if bucket >= bucketLimit {
                halveBuckets()
                bucket = framesAdded / bucketFrames
            }
            if bucket == lows.count {
                lows.append(.infinity)
                highs.append(-.infinity)
            }
            let end = min(samples.count, index + (bucket + 1) * bucketFrames - framesAdded)
            Self.extend(&lows[bucket], &highs[bucket], samples, index..<end)
            framesAdded += end - index
            index = end
        }
    }

    private mutating func halveBuckets() {
        let merged = (lows.count + 1) / 2
        for index in 0..<merged {
            let second = min(2 * index + 1, lows.count - 1)
            lows[index] = min(lows[2 * index], lows[second])
            highs[index] = max(highs[2 * index], highs[second])
        }
        lows.removeLast(lows.count - merged)
        highs.removeLast(highs.count - merged)
        bucketFrames *= 2
    }

    private func rebinnedColumns() -> WaveformColumns {
        guard framesAdded > 0 else { return WaveformColumns(silentCount: columnCount) }
        var minima = [Float](repeating: .infinity, count: columnCount)
        var maxima = [Float](repeating: -.infinity, count: columnCount)
        for bucket in lows.indices {
            let start = bucket * bucketFrames
            let middle = start + (min(bucketFrames, framesAdded - start) - 1) / 2
            let target = min(columnCount - 1, middle * columnCount / framesAdded)
            minima[target] = min(minima[target], lows[bucket])
            maxima[target] = max(maxima[target], highs[bucket])
        }
        return Self.filled(minima: minima, maxima: maxima, totalFrames: framesAdded, framesAdded: framesAdded)
    }

    /// Replaces empty columns: one inside a frame that was added (more columns than
    /// frames) shows that frame, i.e. the column before it; one past the last frame
    /// added is silence.
    private static func filled(minima: [Float], maxima: [Float], totalFrames: Int, framesAdded: Int) -> WaveformColumns {
        var minima = minima, maxima = maxima
        let count = minima.count
        for column in 0..<count where minima[column] > maxima[column] {
            let coveringFrame = column * totalFrames / count
            if column > 0, coveringFrame < framesAdded {
                minima[column] = minima[column - 1]
                maxima[column] = maxima[column - 1]
            } else {
                minima[column] = 0
                maxima[column] = 0
            }
        }
        return WaveformColumns(minima: minima, maxima: maxima)
    }

    private static func extend(_ low: inout Float, _ high: inout Float, _ samples: UnsafeBufferPointer<Float>,
                               _ range: Range<Int>) {
        var lowest = low, highest = high
        // Comparisons with NaN are false, so a NaN sample changes nothing.
        for index in range {
            let value = samples[index]
            if value < lowest { lowest = value }
            if value > highest { highest = value }
        }
        low = lowest
        high = highest
    }
}

/// An 8-bit sRGB colour.
public struct RGBColour: Sendable, Equatable, CustomStringConvertible {
    public var red: UInt8, green: UInt8, blue: UInt8

    public init(red: UInt8, green: UInt8, blue: UInt8) { (self.red, self.green, self.blue) = (red, green, blue) }

    /// "#RRGGBB".
    public var description: String {
        let digits = Array("0123456789ABCDEF")
        return "#" + String([red, green, blue].flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
    }
}

/// How packed RGB pixels are laid out in a buffer, rows top to bottom, no padding.
public enum RGBPixelLayout: Sendable, Equatable {
    /// Red, green, blue: 3 bytes a pixel.
    case rgb24
    /// Red, green, blue, alpha (always opaque here): 4 bytes a pixel.
    case rgba

    public var bytesPerPixel: Int { self == .rgb24 ? 3 : 4 }

    /// Bytes of a `size` picture.
    public func byteCount(_ size: FrameSize) -> Int { size.width * size.height * bytesPerPixel }
}

/// The colours of a waveform picture.
public struct WaveformColours: Sendable, Equatable {
    public var background: RGBColour
    public var waveform: RGBColour
    /// The centre line, visible where the sound is silent (a flat line) and hidden under
    /// the waveform elsewhere.
    public var centreLine: RGBColour

    public init(background: RGBColour, waveform: RGBColour, centreLine: RGBColour) {
        self.background = background
        self.waveform = waveform
        self.centreLine = centreLine
    }

    /// Bright light blue on a dark slate, with a paler tint of the same blue as centre line.
    public static let standard = WaveformColours(
        background: RGBColour(red: 0x12, green: 0x16, blue: 0x1C),
        waveform: RGBColour(red: 0x4F, green: 0xC3, blue: 0xF7),
        centreLine: RGBColour(red: 0xB3, green: 0xE5, blue: 0xFC))
}

/// Draws `WaveformColumns` as a picture: each column a vertical line from
/// `centre - max·half` to `centre - min·half` (rows grow downwards), so a symmetric
/// signal is drawn mirrored around the centre line, and a silent column leaves only the
/// centre line. The centre row is `height / 2` and `half` is `height / 2` pixels: in a
/// 100-pixel picture a ±0.5 column covers rows 25…75. Values beyond ±1 are clipped.
public enum WaveformRaster {
    /// The smallest picture drawn.
    public static let minimumSize = FrameSize(width: 16, height: 16)
    /// The largest picture drawn (a 8192-pixel-wide picture holds 8192 columns).
    public static let maximumSize = FrameSize(width: 8192, height: 2048)

    /// Whether `size` lies within `minimumSize`…`maximumSize`.
    public static func allows(_ size: FrameSize) -> Bool {
        (minimumSize.width...maximumSize.width).contains(size.width)
            && (minimumSize.height...maximumSize.height).contains(size.height)
    }

    /// Draws the picture into `pixels`, which is resized to `width × height` pixels.
    /// - Parameters:
    ///   - columns: Usually `width` of them; otherwise each pixel column shows the
    ///     columns that fall into it (or the one it falls into). None: silence.
    ///   - width: Pixels across; 0 or less gives an empty buffer.
    ///   - height: Pixels down; 0 or less gives an empty buffer.
    ///   - layout: RGB24 or RGBA (opaque).
    ///   - pixels: The picture, rows top to bottom, no padding.
    ///   - colours: Background, waveform and centre line.
    public static func render(columns: WaveformColumns, width: Int, height: Int, layout: RGBPixelLayout = .rgb24,
                              into pixels: inout [UInt8], colours: WaveformColours = .standard) {
        guard width > 0, height > 0 else {
            pixels = []
            return
        }
        let bytesPerPixel = layout.bytesPerPixel
        let rowBytes = width * bytesPerPixel
        if pixels.count != rowBytes * height {
            pixels = [UInt8](repeating: 0, count: rowBytes * height)
        }
        pixels.withUnsafeMutableBufferPointer { buffer in
            func paint(_ x: Int, _ y: Int, _ colour: RGBColour) {
                let offset = y * rowBytes + x * bytesPerPixel
                buffer[offset] = colour.red
                buffer[offset + 1] = colour.green
                buffer[offset + 2] = colour.blue
                if bytesPerPixel == 4 { buffer[offset + 3] = 255 }
            }
            for y in 0..<height {
                for x in 0..<width { paint(x, y, colours.background) }
            }
            let centre = height / 2
            for x in 0..<width { paint(x, centre, colours.centreLine) }
            guard !columns.isEmpty else { return }
            let half = Float(height) / 2
            for x in 0..<width {
                let (low, high) = extent(of: columns, pixel: x, width: width)
                let top = max(0, centre - Int((high * half).rounded()))
                let bottom = min(height - 1, centre - Int((low * half).rounded()))
                // Only the centre row: silence, shown by the centre line.
                if top == centre && bottom == centre { continue }
                guard top <= bottom else { continue }
                for y in top...bottom { paint(x, y, colours.waveform) }
            }
        }
    }

    /// The clipped extent of the columns pixel `x` shows.
    private static func extent(of columns: WaveformColumns, pixel x: Int, width: Int) -> (Float, Float) {
        let count = columns.count
        let first = x * count / width
        let end = max(first + 1, (x + 1) * count / width)
        var low = Float.infinity, high = -Float.infinity
        for index in first..<min(end, count) {
            let column = columns[index]
            low = min(low, column.min.isNaN ? 0 : column.min)
            high = max(high, column.max.isNaN ? 0 : column.max)
        }
        if low > high { (low, high) = (high, low) }
        return (min(1, max(-1, low)), min(1, max(-1, high)))
    }
}
