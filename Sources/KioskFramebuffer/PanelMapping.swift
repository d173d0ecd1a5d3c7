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
    package var logicalStepAlongPanelRow: (dx: Int, dy: Int) {
        switch rotation {
        case .none: (1, 0)
        case .quarter: (0, -1)
        case .half: (-1, 0)
        case .threeQuarters: (0, 1)
        }
    }
}

/// A picture in memory: base address, size and bytes per row. Not an owner.
package struct PixelPlane {
    package let base: UnsafeMutableRawPointer
    package let size: ScreenSize
    package let stride: Int

    package init(base: UnsafeMutableRawPointer, size: ScreenSize, stride: Int) {
        self.base = base
        self.size = size
        self.stride = stride
    }
}

package enum PanelCopy {
    /// Copies logical rectangle `rect` of `source` (cairo RGB24, 0x00RRGGBB words) onto
    /// the panel `destination` in its pixel layout, turned by `mapping`. Only the bytes
    /// of the rectangle are written: row padding (`line_length` beyond the visible
    /// width) and everything outside stay untouched.
    package static func copy(_ rect: ScreenRect, from source: PixelPlane, to destination: PixelPlane,
                     mapping: PanelMapping, packer: PixelPacker, format: FramebufferPixelFormat) {
        let logical = rect.intersection(ScreenRect(x: 0, y: 0, width: mapping.logicalSize.width, height: mapping.logicalSize.height))
        guard !logical.isEmpty else { return }
        let panel = mapping.panelRect(logical)
        let bpp = packer.bytesPerPixel
        if mapping.rotation == .none && format.matchesCairo && format.transparency.length == 0 {
            for row in panel.y..<panel.maxY {
                (destination.base + row * destination.stride + panel.x * 4)
                    .copyMemory(from: source.base + row * source.stride + panel.x * 4, byteCount: panel.width * 4)
            }
            return
        }
        let step = mapping.logicalStepAlongPanelRow
        let sourceStep = step.dy * source.stride / 4 + step.dx
        let words = source.base.assumingMemoryBound(to: UInt32.self)
        // The well-known layouts get their shifts as constants: this loop runs for every
        // pixel of the first frame, and must stay quick even in a debug build.
        let kind = FastLayout(format)
        let opaque = format.transparency.mask
        for row in panel.y..<panel.maxY {
            let start = mapping.logicalPoint(ScreenPoint(x: panel.x, y: row))
            var from = words + (start.y * source.stride / 4 + start.x)
            let target = destination.base + row * destination.stride + panel.x * bpp
            let end = target + panel.width * bpp
            switch kind {
            case .rgb565:
                var to = target.assumingMemoryBound(to: UInt16.self)
                while UnsafeMutableRawPointer(to) < end {
                    let p = from.pointee
                    to.pointee = UInt16(truncatingIfNeeded: (p &>> 8) & 0xF800 | (p &>> 5) & 0x07E0 | (p &>> 3) & 0x001F)
                    to += 1; from += sourceStep
                }
            case .bgr565:
                var to = target.assumingMemoryBound(to: UInt16.self)
                while UnsafeMutableRawPointer(to) < end {
                    let p = from.pointee
                    to.pointee = UInt16(truncatingIfNeeded: (p &<< 8) & 0xF800 | (p &>> 5) & 0x07E0 | (p &>> 19) & 0x001F)
                    to += 1; from += sourceStep
                }
            case .xrgb8888:
                var to = target.assumingMemoryBound(to: UInt32.self)
                while UnsafeMutableRawPointer(to) < end {
                    to.pointee = from.pointee & 0x00FF_FFFF | opaque
                    to += 1; from += sourceStep
                }
            case .xbgr8888:
                var to = target.assumingMemoryBound(to: UInt32.self)
                while UnsafeMutableRawPointer(to) < end {
                    let p = from.pointee
                    to.pointee = (p & 0xFF00) | (p &>> 16) & 0xFF | (p & 0xFF) &<< 16 | opaque
                    to += 1; from += sourceStep
                }
            case .other where bpp == 2:
                var to = target.assumingMemoryBound(to: UInt16.self)
                while UnsafeMutableRawPointer(to) < end {
                    to.pointee = UInt16(truncatingIfNeeded: packer.pack(from.pointee))
                    to += 1; from += sourceStep
                }
            case .other:
                var to = target.assumingMemoryBound(to: UInt32.self)
                while UnsafeMutableRawPointer(to) < end {
                    to.pointee = packer.pack(from.pointee)
                    to += 1; from += sourceStep
                }
            }
        }
    }

    /// The layouts with a hand-written loop; everything else goes through `PixelPacker`.
    /// 32-bit layouts with alpha in the top byte write it as 0xFF (opaque, for drivers that read it).
    package enum FastLayout {
        case rgb565, bgr565, xrgb8888, xbgr8888, other

        init(_ format: FramebufferPixelFormat) {
            let alphaUnusedOrTop = format.transparency.length == 0 || format.transparency == .init(offset: 24, length: 8)
            switch format {
            case .rgb565 where format.transparency.length == 0: self = .rgb565
            case .bgr565 where format.transparency.length == 0: self = .bgr565
            case _ where format.bitsPerPixel == 32 && alphaUnusedOrTop
                && FramebufferPixelFormat(bitsPerPixel: 32, red: format.red, green: format.green, blue: format.blue) == .xrgb8888:
                self = .xrgb8888
            case _ where format.bitsPerPixel == 32 && alphaUnusedOrTop
                && FramebufferPixelFormat(bitsPerPixel: 32, red: format.red, green: format.green, blue: format.blue) == .xbgr8888:
                self = .xbgr8888
            default: self = .other
            }
        }
    }

    /// Reads the whole panel back as the logical picture, RGBA bytes (the order
    /// `PNGEncoder` takes), undoing `mapping`'s turn.
    package static func readLogicalRGBA(from panel: PixelPlane, mapping: PanelMapping, packer: PixelPacker) -> [UInt8] {
        let size = mapping.logicalSize
        let bpp = packer.bytesPerPixel
        // 16-bit pixels go through a table of all 65536 values, each already as the
        // little-endian RGBA word; 32-bit ones are unpacked one by one.
        var table: [UInt32] = []
        if bpp == 2 {
            table = [UInt32](unsafeUninitializedCapacity: 65536) { buffer, count in
                for raw in 0..<65536 { buffer[raw] = rgbaWord(packer.unpack(UInt32(raw))) }
                count = 65536
            }
        }
        // Walking along a logical row, how far to step on the panel, in bytes.
        let step: Int
        switch mapping.rotation {
        case .none: step = bpp
        case .quarter: step = panel.stride
        case .half: step = -bpp
        case .threeQuarters: step = -panel.stride
        }
        var rgba = [UInt8](repeating: 0, count: size.width * size.height * 4)
        rgba.withUnsafeMutableBytes { out in
            table.withUnsafeBufferPointer { table in
                for y in 0..<size.height {
                    let first = mapping.panelPoint(ScreenPoint(x: 0, y: y))
                    var from = UnsafeRawPointer(panel.base + first.y * panel.stride + first.x * bpp)
                    var to = (out.baseAddress! + y * size.width * 4).assumingMemoryBound(to: UInt32.self)
                    let end = to + size.width
                    if bpp == 2 {
                        let lookup = table.baseAddress!
                        while to < end {
                            to.pointee = lookup[Int(from.loadUnaligned(as: UInt16.self))]
                            to += 1; from += step
                        }
                    } else {
                        while to < end {
                            to.pointee = rgbaWord(packer.unpack(from.loadUnaligned(as: UInt32.self)))
                            to += 1; from += step
                        }
                    }
                }
            }
        }
        return rgba
    }

    /// 0xAARRGGBB as the bytes R, G, B, A in memory (little-endian).
    @inline(__always)
    package static func rgbaWord(_ argb: UInt32) -> UInt32 {
        (argb &>> 16) & 0xFF | (argb & 0xFF00) | (argb & 0xFF) &<< 16 | 0xFF00_0000
    }
}
