import KioskCore

/// Where the logical picture (what the user sees, `logicalSize`) lands on the panel
/// (the framebuffer's own rows and columns), for each `ScreenRotation`.
///
/// Rotation 90 draws the picture turned a quarter clockwise: the picture's top-left
/// corner lands at the panel's top-right, its left column along the panel's top row.
/// Rotation 270 is the opposite turn, 180 is upside down.
public struct PanelMapping: Sendable, Equatable {
    public let rotation: ScreenRotation
    /// The picture the user sees.
    public let logicalSize: ScreenSize
    /// The framebuffer's visible area.
    public let panelSize: ScreenSize

    public init(panelSize: ScreenSize, rotation: ScreenRotation) {
        self.rotation = rotation
        self.panelSize = panelSize
        logicalSize = rotation.swapsAxes ? panelSize.swapped : panelSize
    }

    /// The panel pixel showing logical pixel `point`.
    public func panelPoint(_ point: ScreenPoint) -> ScreenPoint {
        let w = logicalSize.width, h = logicalSize.height
        switch rotation {
        case .none: return point
        case .quarter: return ScreenPoint(x: h - 1 - point.y, y: point.x)
        case .half: return ScreenPoint(x: w - 1 - point.x, y: h - 1 - point.y)
        case .threeQuarters: return ScreenPoint(x: point.y, y: w - 1 - point.x)
        }
    }

    /// The logical pixel a panel pixel shows (the inverse of `panelPoint`).
    public func logicalPoint(_ point: ScreenPoint) -> ScreenPoint {
        let w = logicalSize.width, h = logicalSize.height
        switch rotation {
        case .none: return point
        case .quarter: return ScreenPoint(x: point.y, y: h - 1 - point.x)
        case .half: return ScreenPoint(x: w - 1 - point.x, y: h - 1 - point.y)
        case .threeQuarters: return ScreenPoint(x: w - 1 - point.y, y: point.x)
        }
    }

    /// The panel rectangle covering logical rectangle `rect`.
    public func panelRect(_ rect: ScreenRect) -> ScreenRect {
        guard !rect.isEmpty else { return rect }
        let a = panelPoint(ScreenPoint(x: rect.x, y: rect.y))
        let b = panelPoint(ScreenPoint(x: rect.maxX - 1, y: rect.maxY - 1))
        return ScreenRect(x: min(a.x, b.x), y: min(a.y, b.y), width: abs(a.x - b.x) + 1, height: abs(a.y - b.y) + 1)
    }

    /// Walking along a panel row from left to right, how far to step in the logical
    /// picture, in (x, y) logical pixels.
    var logicalStepAlongPanelRow: (dx: Int, dy: Int) {
        switch rotation {
        case .none: (1, 0)
        case .quarter: (0, -1)
        case .half: (-1, 0)
        case .threeQuarters: (0, 1)
        }
    }
}

/// A picture in memory: base address, size and bytes per row. Not an owner.
struct PixelPlane {
    let base: UnsafeMutableRawPointer
    let size: ScreenSize
    let stride: Int
}

enum PanelCopy {
    /// Copies logical rectangle `rect` of `source` (cairo RGB24, 0x00RRGGBB words) onto
    /// the panel `destination` in its pixel layout, turned by `mapping`. Only the bytes
    /// of the rectangle are written: row padding (`line_length` beyond the visible
    /// width) and everything outside stay untouched.
    static func copy(_ rect: ScreenRect, from source: PixelPlane, to destination: PixelPlane,
                     mapping: PanelMapping, packer: PixelPacker, format: FramebufferPixelFormat) {
        let logical = rect.intersection(ScreenRect(x: 0, y: 0, width: mapping.logicalSize.width, height: mapping.logicalSize.height))
        guard !logical.isEmpty else { return }
        let panel = mapping.panelRect(logical)
        let bpp = packer.bytesPerPixel
        if mapping.rotation == .none && format.matchesCairo {
            for row in panel.y..<panel.maxY {
                (destination.base + row * destination.stride + panel.x * 4)
                    .copyMemory(from: source.base + row * source.stride + panel.x * 4, byteCount: panel.width * 4)
            }
            return
        }
        let step = mapping.logicalStepAlongPanelRow
        let sourceStep = step.dy * source.stride / 4 + step.dx
        let words = source.base.assumingMemoryBound(to: UInt32.self)
        for row in panel.y..<panel.maxY {
            let start = mapping.logicalPoint(ScreenPoint(x: panel.x, y: row))
            var index = start.y * source.stride / 4 + start.x
            let target = destination.base + row * destination.stride + panel.x * bpp
            if bpp == 2 {
                let out = target.assumingMemoryBound(to: UInt16.self)
                for column in 0..<panel.width {
                    out[column] = UInt16(truncatingIfNeeded: packer.pack(words[index]))
                    index += sourceStep
                }
            } else {
                let out = target.assumingMemoryBound(to: UInt32.self)
                for column in 0..<panel.width {
                    out[column] = packer.pack(words[index])
                    index += sourceStep
                }
            }
        }
    }

    /// Reads the whole panel back as the logical picture, RGBA bytes (the order
    /// `PNGEncoder` takes), undoing `mapping`'s turn.
    static func readLogicalRGBA(from panel: PixelPlane, mapping: PanelMapping, packer: PixelPacker) -> [UInt8] {
        let size = mapping.logicalSize
        var rgba = [UInt8](repeating: 0, count: size.width * size.height * 4)
        rgba.withUnsafeMutableBytes { out in
            for y in 0..<size.height {
                for x in 0..<size.width {
                    let p = mapping.panelPoint(ScreenPoint(x: x, y: y))
                    let address = panel.base + p.y * panel.stride + p.x * packer.bytesPerPixel
                    let raw: UInt32 = packer.bytesPerPixel == 2
                        ? UInt32(address.loadUnaligned(as: UInt16.self)) : address.loadUnaligned(as: UInt32.self)
                    let xrgb = packer.unpack(raw)
                    let o = (y * size.width + x) * 4
                    out[o] = UInt8(truncatingIfNeeded: xrgb >> 16)
                    out[o + 1] = UInt8(truncatingIfNeeded: xrgb >> 8)
                    out[o + 2] = UInt8(truncatingIfNeeded: xrgb)
                    out[o + 3] = 255
                }
            }
        }
        return rgba
    }
}
