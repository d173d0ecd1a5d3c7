/// The growing waveform of the sound recording in progress, for the live screen: one
/// column per level update, drawn left to right, scaled so the loudest column so far
/// fills the height, mirrored around a centre line like `WaveformRaster` draws a file.
///
/// Memory is bounded: past `maximumColumns` neighbouring columns are merged in pairs
/// (their louder one kept) and each later column takes twice as many updates, so an
/// hour-long recording costs the same as a minute.
public struct LiveWaveform: Sendable, Equatable {
    /// The most columns kept; a screen is narrower, so merging never shows.
    public static let maximumColumns = 2048

    /// Amplitude per column, 0…1 of full scale.
    public private(set) var amplitudes: [Float] = []
    /// The loudest amplitude added so far (the scale's full height).
    public private(set) var loudest: Float = 0
    /// Level updates per column (a power of two).
    public private(set) var updatesPerColumn = 1
    /// The level update the last column came from (a status repeats the same levels).
    public private(set) var lastUpdate: MonotonicInstant?
    private var pendingUpdates = 0

    public init() {}

    /// Whether nothing was added yet.
    public var isEmpty: Bool { amplitudes.isEmpty }

    /// Adds one level update once: a repeat of the last one (same `updatedAt`) is ignored.
    /// - Parameter levels: The microphone's levels; the loudest channel's RMS is drawn.
    public mutating func add(_ levels: AudioLevels) {
        guard levels.updatedAt != lastUpdate, let loudestChannel = levels.rmsDBFS.max() else { return }
        lastUpdate = levels.updatedAt
        add(amplitude: Self.amplitude(dBFS: loudestChannel))
    }

    /// Adds one amplitude (0…1 of full scale; NaN or below 0 counts as silence, above 1 as 1).
    public mutating func add(amplitude: Float) {
        let value = amplitude.isNaN ? 0 : min(1, max(0, amplitude))
        loudest = max(loudest, value)
        if pendingUpdates > 0, let last = amplitudes.last {
            amplitudes[amplitudes.count - 1] = max(last, value)
        } else {
            amplitudes.append(value)
        }
        pendingUpdates += 1
        if pendingUpdates >= updatesPerColumn { pendingUpdates = 0 }
        if amplitudes.count >= Self.maximumColumns, pendingUpdates == 0 { halve() }
    }

    /// The columns as `WaveformReducer` gives them for a file: symmetric low/high pairs.
    public var columns: WaveformColumns { WaveformColumns(amplitudes.map { (min: -$0, max: $0) }) }

    /// One rectangle a pixel column, left to right, inside `rect` shrunk by `inset`: one
    /// column per pixel while they fit (the waveform grows), else squeezed to the width
    /// (each pixel the loudest of its columns). Every bar is at least the centre row.
    public func bars(in rect: ScreenRect, inset: Int) -> [ScreenRect] {
        let area = rect.inset(by: max(0, inset))
        guard !area.isEmpty, !amplitudes.isEmpty else { return [] }
        let count = amplitudes.count
        let pixels = min(count, area.width)
        let centre = area.y + area.height / 2
        // Rows either side of the centre row that stay inside the area.
        let half = Float((area.height - 1) / 2)
        let scale: Float = loudest > 0 ? 1 / loudest : 0
        var bars: [ScreenRect] = []
        bars.reserveCapacity(pixels)
        for x in 0..<pixels {
            let first = x * count / pixels
            let end = max(first + 1, (x + 1) * count / pixels)
            let amplitude = amplitudes[first..<min(end, count)].max() ?? 0
            let reach = min((area.height - 1) / 2, Int((amplitude * scale * half).rounded()))
            bars.append(ScreenRect(x: area.x + x, y: centre - reach, width: 1, height: 2 * reach + 1))
        }
        return bars
    }

    /// A level in dBFS as a fraction of full scale: 10^(dBFS/20); the meter's floor is 0.
    public static func amplitude(dBFS: Double) -> Float {
        guard dBFS.isFinite, dBFS > AudioLevelMeter.floorDBFS else { return 0 }
        return Float(exponential(min(0, dBFS) / 20 * 2.302585092994045684))
    }

    /// e^x for x ≤ 0 without libm: x = k·ln 2 + r with |r| ≤ ln 2 / 2, e^r as a series.
    static func exponential(_ x: Double) -> Double {
        guard x > -700 else { return 0 }
        let ln2 = 0.693147180559945309
        let k = (x / ln2).rounded()
        let r = x - k * ln2
        var term = 1.0, sum = 1.0
        for n in 1...20 {
            term *= r / Double(n)
            sum += term
        }
        return sum * Double(sign: .plus, exponent: Int(k), significand: 1)
    }

    private mutating func halve() {
        var merged: [Float] = []
        merged.reserveCapacity(amplitudes.count / 2 + 1)
        var index = 0
        while index < amplitudes.count {
            merged.append(max(amplitudes[index], index + 1 < amplitudes.count ? amplitudes[index + 1] : 0))
            index += 2
        }
        amplitudes = merged
        updatesPerColumn *= 2
    }
}
