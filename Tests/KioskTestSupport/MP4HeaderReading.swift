import Foundation

/// What an MP4's header says about its length, read by the tests' own box walker (not
/// the code under test's `FragmentedMP4Scan`): players that trust the header show this.
public struct MP4HeaderLength: Equatable {
    /// The movie's timescale (`mvhd`), ticks per second.
    public var timescale: UInt64
    /// `mvhd`'s duration, in ticks; 0 when the writer never filled it in.
    public var movieTicks: UInt64
    /// `mehd`'s fragment duration, in ticks; nil when the file has no `mehd`.
    public var fragmentTicks: UInt64?

    public var movieSeconds: Double { timescale > 0 ? Double(movieTicks) / Double(timescale) : .nan }
    public var fragmentSeconds: Double? { fragmentTicks.map { timescale > 0 ? Double($0) / Double(timescale) : .nan } }

    public struct Unreadable: Error, CustomStringConvertible {
        public var description: String
    }

    /// Reads `mvhd` (and `mehd`, when there is one) from the file at `path`; version 0
    /// (32-bit) and version 1 (64-bit) boxes alike.
    public static func read(_ path: String) throws -> MP4HeaderLength {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        guard let mvhd = box(["moov", "mvhd"], in: bytes[...]), mvhd.count > 8 else {
            throw Unreadable(description: "\(path): no whole moov/mvhd")
        }
        let wide = mvhd[mvhd.startIndex + 8] == 1
        guard mvhd.count >= (wide ? 40 : 28) else { throw Unreadable(description: "\(path): a torn mvhd") }
        var length = MP4HeaderLength(timescale: number(mvhd, at: wide ? 28 : 20, width: 4),
                                     movieTicks: number(mvhd, at: wide ? 32 : 24, width: wide ? 8 : 4))
        if let mehd = box(["moov", "mvex", "mehd"], in: bytes[...]) {
            let wideMehd = mehd.count > 8 && mehd[mehd.startIndex + 8] == 1
            guard mehd.count >= (wideMehd ? 20 : 16) else { throw Unreadable(description: "\(path): a torn mehd") }
            length.fragmentTicks = number(mehd, at: 12, width: wideMehd ? 8 : 4)
        }
        return length
    }

    /// The box at `path` (e.g. `["moov", "mvhd"]`), its own 8-byte header included; nil
    /// when a level is missing or a size runs past its parent.
    public static func box(_ path: [String], in bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        guard let name = path.first else { return bytes }
        var at = bytes.startIndex
        while at + 8 <= bytes.endIndex {
            let size = Int(number(bytes, at: at - bytes.startIndex, width: 4))
            guard size >= 8, size <= bytes.endIndex - at else { return nil }
            let type = String(decoding: bytes[(at + 4)..<(at + 8)], as: UTF8.self)
            if type == name {
                let found = bytes[at..<(at + size)]
                return path.count == 1 ? found : box(Array(path.dropFirst()), in: found.dropFirst(8))
            }
            at += size
        }
        return nil
    }

    /// A big-endian number of `width` bytes, `offset` bytes into `bytes`.
    public static func number(_ bytes: ArraySlice<UInt8>, at offset: Int, width: Int) -> UInt64 {
        bytes.dropFirst(offset).prefix(width).reduce(0) { $0 << 8 | UInt64($1) }
    }
}
