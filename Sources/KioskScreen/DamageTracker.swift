import KioskCore

/// Finds what changed between the picture just drawn and the one on the panel, so only
/// those pixels are copied (a PIN digit touches a few thousand pixels, not 384 000).
///
/// Comparing pixels rather than tracking which model fields changed cannot miss
/// anything a drawing routine touched. The panel's picture is remembered as one 64-bit
/// fingerprint per tile of 16×16 pixels (12 KiB for 800×480), not as a copy of it
/// (1.5 MiB, resident for as long as the screen runs). Every step of a fingerprint (xor
/// in 8 bytes, or 4, multiply by an odd constant, xor-shift) can be undone, so two tiles
/// that differ in a single word never share one; tiles that differ more do with a
/// chance of 2⁻⁶⁴.
struct DamageTracker {
    /// Rows compared together; a band's changed tiles become one rectangle.
    static let bandHeight = 16
    /// Pixels across a tile.
    static let tileWidth = 16

    let size: ScreenSize
    private let tilesAcross: Int, bands: Int
    /// The fingerprints of the picture on the panel, band by band; empty when unknown.
    private var shown: [UInt64] = []

    init(size: ScreenSize) {
        self.size = size
        tilesAcross = (max(0, size.width) + Self.tileWidth - 1) / Self.tileWidth
        bands = (max(0, size.height) + Self.bandHeight - 1) / Self.bandHeight
    }

    /// Whether a picture is remembered as the panel's (after a `damage`, until `forget`).
    var remembersPanel: Bool { !shown.isEmpty }

    /// The rectangles where `picture` (32-bit pixels, `size`) differs from the picture
    /// remembered, each band's changed tiles as one, bands with overlapping columns
    /// merged; the whole screen when nothing is remembered. Remembers `picture`.
    /// A picture of another size is not read: nothing is damage, and nothing remembered.
    mutating func damage(_ picture: PixelPlane) -> [ScreenRect] {
        guard size.width > 0, size.height > 0, picture.size == size else {
            shown = []
            return []
        }
        guard remembersPanel else {
            shown = (0..<bands * tilesAcross).map { fingerprint(picture, tile: $0 % tilesAcross, band: $0 / tilesAcross) }
            return [ScreenRect(x: 0, y: 0, width: size.width, height: size.height)]
        }
        var rects: [ScreenRect] = []
        for band in 0..<bands {
            var first = -1, last = -1
            for tile in 0..<tilesAcross {
                let now = fingerprint(picture, tile: tile, band: band)
                if now != shown[band * tilesAcross + tile] {
                    shown[band * tilesAcross + tile] = now
                    if first < 0 { first = tile }
                    last = tile
                }
            }
            guard first >= 0 else { continue }
            let top = band * Self.bandHeight, left = first * Self.tileWidth
            let rect = ScreenRect(x: left, y: top, width: min(size.width, (last + 1) * Self.tileWidth) - left,
                                  height: min(size.height, top + Self.bandHeight) - top)
            if let previous = rects.last, previous.maxY == rect.y, previous.x < rect.maxX, rect.x < previous.maxX {
                rects[rects.count - 1] = previous.union(rect)
            } else {
                rects.append(rect)
            }
        }
        return rects
    }

    /// Takes `area` of `picture` as shown (copied to the panel on its own); the rest of
    /// the tiles it touches must already be on the panel as `picture` has them.
    mutating func remember(_ area: ScreenRect, of picture: PixelPlane) {
        guard !area.isEmpty, remembersPanel, picture.size == size else { return }
        let firstBand = max(0, area.y / Self.bandHeight), lastBand = min(bands - 1, (area.maxY - 1) / Self.bandHeight)
        let firstTile = max(0, area.x / Self.tileWidth), lastTile = min(tilesAcross - 1, (area.maxX - 1) / Self.tileWidth)
        guard firstBand <= lastBand, firstTile <= lastTile else { return }
        for band in firstBand...lastBand {
            for tile in firstTile...lastTile {
                shown[band * tilesAcross + tile] = fingerprint(picture, tile: tile, band: band)
            }
        }
    }

    /// Forgets the panel's picture: the next `damage` is the whole screen.
    mutating func forget() { shown = [] }

    /// The fingerprint of one tile's pixels (a part-tile at the right or bottom edge): four lanes, each an
    /// invertible chain, so that the multiplications overlap (0.13 ms for 800×480 against
    /// 0.10 ms for comparing with a copy, on this VM), folded into one by rotating xors,
    /// which keeps a one-word difference a difference.
    private func fingerprint(_ picture: PixelPlane, tile: Int, band: Int) -> UInt64 {
        let left = tile * Self.tileWidth, top = band * Self.bandHeight
        let rowBytes = min(Self.tileWidth, size.width - left) * 4, bottom = min(size.height, top + Self.bandHeight)
        var lanes: (UInt64, UInt64, UInt64, UInt64) = (0x6A09_E667_F3BC_C908, 0xBB67_AE85_84CA_A73B,
                                                       0x3C6E_F372_FE94_F82B, 0xA54F_F53A_5F1D_36F1)
        @inline(__always) func mix(_ lane: inout UInt64, _ word: UInt64) {
            lane = (lane ^ word) &* 0x9E37_79B9_7F4A_7C15
            lane ^= lane >> 32
        }
        for row in top..<bottom {
            let start = picture.base + row * picture.stride + left * 4
            var offset = 0
            while offset + 32 <= rowBytes {
                mix(&lanes.0, start.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                mix(&lanes.1, start.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self))
                mix(&lanes.2, start.loadUnaligned(fromByteOffset: offset + 16, as: UInt64.self))
                mix(&lanes.3, start.loadUnaligned(fromByteOffset: offset + 24, as: UInt64.self))
                offset += 32
            }
            // A part-tile at the right edge: what is left, 4 bytes (one pixel) at a time.
            while offset < rowBytes {
                mix(&lanes.0, UInt64(start.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
                offset += 4
            }
        }
        return lanes.0 ^ lanes.1.rotated(16) ^ lanes.2.rotated(32) ^ lanes.3.rotated(48)
    }
}

private extension UInt64 {
    func rotated(_ bits: UInt64) -> UInt64 { self << bits | self >> (64 - bits) }
}
