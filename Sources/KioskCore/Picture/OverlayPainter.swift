/// Glyphs drawn once, as coverage (0…255) in cells of one size, so the overlay's text is
/// composed by copying cells rather than by running a font engine per frame. The
/// appliance's atlas is rendered by cairo (`KioskScreen`), in a monospaced font;
/// `dots(cellHeight:)` makes one from the test pattern's dot font, without C.
public struct GlyphAtlas: Sendable {
    public let cellWidth: Int
    public let cellHeight: Int
    /// Coverage of each glyph: `cellHeight` rows of `cellWidth`, glyph after glyph.
    public let coverage: [UInt8]
    /// Each character's glyph (an index into the cells).
    public let glyphs: [Character: Int]

    /// - Returns: nil when the cells are empty or `coverage` does not hold one cell per glyph.
    public init?(cellWidth: Int, cellHeight: Int, glyphs: [Character: Int], coverage: [UInt8]) {
        let cells = (glyphs.values.max() ?? -1) + 1
        guard cellWidth > 0, cellHeight > 0, cells > 0, glyphs.values.allSatisfy({ $0 >= 0 }),
              coverage.count >= cells * cellWidth * cellHeight else { return nil }
        self.cellWidth = cellWidth
        self.cellHeight = cellHeight
        self.glyphs = glyphs
        self.coverage = coverage
    }

    /// The glyph drawn for `character`: its own, else "?", else none (a blank cell).
    public func glyph(for character: Character) -> Int? { glyphs[character] ?? glyphs["?"] }

    /// The characters every atlas should hold: printable ASCII and Latin-1.
    public static let characters: [Character] = (0x20...0x7E).compactMap { Unicode.Scalar($0).map(Character.init) }
        + (0xA0...0xFF).compactMap { Unicode.Scalar($0).map(Character.init) }

    /// An atlas from the test pattern's 5×7 dot font (digits and `-:./#`), each dot a
    /// square block: no font engine, for tests and as the fallback.
    public static func dots(cellHeight: Int) -> GlyphAtlas? {
        let scale = max(1, cellHeight / 9)
        let width = 6 * scale, height = 9 * scale
        let characters: [Character] = Array(" 0123456789:-./#")
        var coverage = [UInt8](repeating: 0, count: characters.count * width * height)
        var glyphs: [Character: Int] = [:]
        for (index, character) in characters.enumerated() {
            glyphs[character] = index
            guard let ascii = character.asciiValue, let rows = TestPatternFont.rows(for: ascii) else { continue }
            for (row, bits) in rows.enumerated() {
                for column in 0..<5 where bits & (0x10 >> UInt8(column)) != 0 {
                    for dy in 0..<scale {
                        for dx in 0..<scale {
                            coverage[index * width * height + (scale + row * scale + dy) * width + column * scale + dx] = 255
                        }
                    }
                }
            }
        }
        return GlyphAtlas(cellWidth: width, cellHeight: height, glyphs: glyphs, coverage: coverage)
    }
}

/// Renders an atlas whose cells are `cellHeight` pixels high (nil if it cannot).
public typealias GlyphAtlasMaker = @Sendable (_ cellHeight: Int) -> GlyphAtlas?

/// Where the overlay sits in the picture as shown.
public enum OverlayPosition: String, Sendable, CaseIterable {
    case topLeft = "top-left"
    case topRight = "top-right"
    case bottomLeft = "bottom-left"
    case bottomRight = "bottom-right"
}

/// Burns one line of text, white on a black box, into pictures of one size: the box is
/// composed upright (as shown) once, only the cells whose character changed are drawn
/// again, the box is turned into the camera's orientation (so that the player's display
/// matrix shows it upright), and each frame only copies its rows in. Used by one thread.
public final class OverlayPainter {
    public let sensor: FrameSize
    public let orientation: PictureOrientation
    public let position: OverlayPosition
    public let atlas: GlyphAtlas
    public let fullRange: Bool
    /// The text last asked for, and the characters the box shows (as many as fit).
    private var lastText: String?
    private var shown: [Character] = []
    /// The box as shown (luma, `shownRect`'s size) and turned into the camera's pixels.
    private var upright: [UInt8] = []
    private var turned: [UInt8] = []
    /// Each plane's neutral bytes for the layout drawn into last (chroma under the box).
    private var neutral: (format: PixelFormat, groups: [[UInt8]])?
    public private(set) var shownRect = PixelRect(x: 0, y: 0, width: 0, height: 0)
    public private(set) var sensorRect = PixelRect(x: 0, y: 0, width: 0, height: 0)
    /// Glyph cells drawn so far (a cell is drawn again only when its character changes).
    public private(set) var cellsDrawn = 0

    private var boxLuma: UInt8 { fullRange ? 0 : 16 }
    private var textLuma: UInt8 { fullRange ? 255 : 235 }

    /// - Parameters:
    ///   - sensor: The size of the camera's pictures (before turning).
    ///   - heightFraction: The text's height as a fraction of the shown picture's.
    /// - Returns: nil when no atlas can be made for that height.
    public init?(sensor: FrameSize, orientation: PictureOrientation, position: OverlayPosition, heightFraction: Double,
                 fullRange: Bool = false, atlasMaker: GlyphAtlasMaker) {
        let shownSize = orientation.turnedSize(sensor)
        let fraction = heightFraction.isFinite ? min(max(heightFraction, 0.01), 0.5) : 0.04
        let cellHeight = max(8, Int((fraction * Double(shownSize.height)).rounded()))
        guard let atlas = atlasMaker(cellHeight) else { return nil }
        self.sensor = sensor
        self.orientation = orientation
        self.position = position
        self.atlas = atlas
        self.fullRange = fullRange
    }

    /// The padding around the text and the margin to the picture's edges: even, so that
    /// the box starts and ends on the chroma grid.
    private var padding: Int { max(2, atlas.cellHeight / 8) & ~1 }
    private var margin: Int { max(2, atlas.cellHeight / 2) & ~1 }

    /// Where the cell of character `column` lies in the picture as shown (for reading the text back).
    public func shownCellRect(_ column: Int) -> PixelRect {
        PixelRect(x: shownRect.x + padding + column * atlas.cellWidth, y: shownRect.y + padding, width: atlas.cellWidth,
                  height: atlas.cellHeight)
    }

    /// Draws `text` into `picture` (planar or semi-planar YUV of this painter's size).
    /// - Returns: False when nothing was drawn: another size or layout, or no room.
    @discardableResult
    public func draw(_ text: String, into picture: PicturePlanes) -> Bool {
        guard picture.size == sensor, picture.format.hasLumaPlane, picture.fullRange == fullRange else { return false }
        if text != lastText {
            lastText = text
            compose(Array(text))
        }
        guard !sensorRect.isEmpty else { return false }
        let width = sensorRect.width
        turned.withUnsafeBytes { band in
            guard let source = band.baseAddress else { return }
            for row in 0..<sensorRect.height {
                (picture.bases[0] + (sensorRect.y + row) * picture.strides[0] + sensorRect.x)
                    .copyMemory(from: source + row * width, byteCount: width)
            }
        }
        if neutral?.format != picture.format { neutral = (picture.format, picture.format.blackGroups(fullRange: fullRange)) }
        let groups = neutral?.groups ?? []
        for plane in 1..<max(1, groups.count) { picture.fill(sensorRect, plane: plane, pattern: groups[plane]) }
        return true
    }

    /// Lays the box out for `characters` (anew when their count changed) and draws the
    /// cells that changed.
    private func compose(_ characters: [Character]) {
        let shownSize = orientation.turnedSize(sensor)
        let cell = (width: atlas.cellWidth, height: atlas.cellHeight)
        let room = shownSize.width - 2 * margin - 2 * padding
        let columns = min(characters.count, max(0, room / cell.width))
        let characters = Array(characters.prefix(columns))
        let boxWidth = (2 * padding + columns * cell.width + 1) & ~1
        let boxHeight = (2 * padding + cell.height + 1) & ~1
        var redraw: [Int] = []
        if columns != shown.count || upright.isEmpty || shownRect.isEmpty {
            guard columns > 0, boxHeight + 2 * margin <= shownSize.height else {
                shown = characters
                upright = []
                shownRect = PixelRect(x: 0, y: 0, width: 0, height: 0)
                sensorRect = shownRect
                return
            }
            let x = position == .topLeft || position == .bottomLeft ? margin : (shownSize.width - margin - boxWidth) & ~1
            let y = position == .topLeft || position == .topRight ? margin : (shownSize.height - margin - boxHeight) & ~1
            shownRect = PixelRect(x: x, y: y, width: boxWidth, height: boxHeight)
            sensorRect = orientation.sensorRect(ofShown: shownRect, sensor: sensor)
            upright = [UInt8](repeating: boxLuma, count: boxWidth * boxHeight)
            redraw = Array(0..<columns)
        } else {
            redraw = (0..<columns).filter { characters[$0] != shown[$0] }
            guard !redraw.isEmpty else { return }
        }
        shown = characters
        let box = boxLuma, ink = Int(textLuma) - Int(boxLuma)
        for column in redraw {
            let glyph = atlas.glyph(for: characters[column])
            let left = padding + column * cell.width
            for row in 0..<cell.height {
                let line = (padding + row) * shownRect.width + left
                for x in 0..<cell.width {
                    let coverage = glyph.map { Int(atlas.coverage[($0 * cell.height + row) * cell.width + x]) } ?? 0
                    upright[line + x] = UInt8(Int(box) + (ink * coverage + 127) / 255)
                }
            }
        }
        cellsDrawn += redraw.count
        if orientation.isUpright {
            turned = upright
        } else {
            let turnedSize = orientation.inverse.turnedSize(FrameSize(width: shownRect.width, height: shownRect.height))
            if turned.count != turnedSize.width * turnedSize.height { turned = [UInt8](repeating: 0, count: turnedSize.width * turnedSize.height) }
            let width = shownRect.width, height = shownRect.height
            upright.withUnsafeBytes { source in
                turned.withUnsafeMutableBytes { destination in
                    _ = orientation.inverse.turn(plane: source, width: width, height: height, sourceStride: width,
                                                 into: destination, destinationStride: turnedSize.width)
                }
            }
        }
    }
}
