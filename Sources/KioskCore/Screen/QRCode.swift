/// A QR code symbol (ISO/IEC 18004) holding UTF-8 text in byte mode at error
/// correction level M, versions 1…10.
///
/// Level M restores up to ~15 % damaged codewords, which is plenty for a code
/// shown on a screen or printed label and read by a phone camera. Versions
/// above 10 are not needed for the short URLs this is meant for, and leaving
/// them out keeps the tables small.
///
/// Just over 400 lines as one thing: one algorithm (encode, Reed–Solomon, place, mask,
/// score), with its tables.
public struct QRCode: Sendable, Equatable {
    /// Symbol version 1…10; each step adds 4 modules per side.
    public let version: Int
    /// Modules per side: 17 + 4 · version (without the quiet zone).
    public let size: Int
    /// The data mask pattern 0…7 that was applied (the one with the lowest penalty).
    public let mask: Int
    /// Row-major, `true` = dark.
    private let modules: [Bool]

    /// Encodes `text` as UTF-8 bytes, picking the smallest version that fits.
    /// Returns nil when the text is longer than version 10-M can hold (213 bytes).
    public init?(text: String) {
        self.init(bytes: Array(text.utf8), forcedMask: nil)
    }

    /// Same as `init(text:)` but can force a mask, so tests can check that every
    /// mask pattern produces a readable symbol.
    init?(bytes: [UInt8], forcedMask: Int?) {
        guard let version = (1...10).first(where: { Self.fits(bytes.count, version: $0) }) else { return nil }
        let codewords = Self.finalCodewords(bytes, version: version)

        var base = Grid(version: version)
        base.drawFunctionPatterns()
        base.placeData(codewords)

        var best: (mask: Int, penalty: Int, grid: Grid)?
        for mask in 0..<8 where forcedMask == nil || forcedMask == mask {
            var candidate = base
            candidate.applyMask(mask)
            candidate.drawFormatInfo(mask: mask)
            let penalty = candidate.penalty()
            if penalty < best?.penalty ?? Int.max { best = (mask, penalty, candidate) }
        }
        guard let best else { return nil }  // only when forcedMask is outside 0…7
        self.version = version
        self.size = base.size
        self.mask = best.mask
        self.modules = best.grid.dark
    }

    /// Whether the module at column `x`, row `y` is dark. Anything outside the
    /// symbol (the quiet zone) is light.
    public func isDark(x: Int, y: Int) -> Bool {
        guard x >= 0, y >= 0, x < size, y < size else { return false }
        return modules[y * size + x]
    }
}

// MARK: - Tables for level M

extension QRCode {
    /// How the codewords of one version are split into Reed–Solomon blocks.
    /// Long messages are cut into several shorter blocks so that a burst of
    /// damage (a smudge) is spread over many blocks after interleaving.
    struct BlockLayout: Sendable {
        let ecPerBlock: Int
        let dataPerBlock: [Int]
        var dataCodewords: Int { dataPerBlock.reduce(0, +) }
    }

    /// Level M block structure for versions 1…10 (ISO/IEC 18004 Table 9).
    static let layouts: [BlockLayout] = [
        BlockLayout(ecPerBlock: 10, dataPerBlock: [16]),
        BlockLayout(ecPerBlock: 16, dataPerBlock: [28]),
        BlockLayout(ecPerBlock: 26, dataPerBlock: [44]),
        BlockLayout(ecPerBlock: 18, dataPerBlock: [32, 32]),
        BlockLayout(ecPerBlock: 24, dataPerBlock: [43, 43]),
        BlockLayout(ecPerBlock: 16, dataPerBlock: [27, 27, 27, 27]),
        BlockLayout(ecPerBlock: 18, dataPerBlock: [31, 31, 31, 31]),
        BlockLayout(ecPerBlock: 22, dataPerBlock: [38, 38, 39, 39]),
        BlockLayout(ecPerBlock: 22, dataPerBlock: [36, 36, 36, 37, 37]),
        BlockLayout(ecPerBlock: 26, dataPerBlock: [43, 43, 43, 43, 44]),
    ]

    /// Centre coordinates of alignment patterns per version (Annex E). They help
    /// the reader correct for perspective and lens distortion on larger symbols.
    static let alignmentCentres: [[Int]] = [
        [], [6, 18], [6, 22], [6, 26], [6, 30], [6, 34],
        [6, 22, 38], [6, 24, 42], [6, 26, 46], [6, 28, 50],
    ]

    /// Byte mode needs a 4-bit mode indicator and a character count, which grows
    /// from 8 to 16 bits at version 10 so that longer messages can be counted.
    static func countBits(version: Int) -> Int { version <= 9 ? 8 : 16 }

    static func fits(_ byteCount: Int, version: Int) -> Bool {
        let needed = 4 + countBits(version: version) + 8 * byteCount
        return byteCount < (1 << countBits(version: version))
            && needed <= layouts[version - 1].dataCodewords * 8
    }
}

// MARK: - Bit stream and error correction

extension QRCode {
    /// Builds the data codewords: mode, count, the bytes, then a terminator and
    /// padding so that the reader sees a well-defined end and the fixed-size
    /// symbol is completely filled.
    static func dataCodewords(_ bytes: [UInt8], version: Int) -> [UInt8] {
        let capacityBits = layouts[version - 1].dataCodewords * 8
        var bits: [Bool] = []
        func append(_ value: Int, _ count: Int) {
            for shift in stride(from: count - 1, through: 0, by: -1) { bits.append((value >> shift) & 1 == 1) }
        }
        append(0b0100, 4)  // byte mode
        append(bytes.count, countBits(version: version))
        for byte in bytes { append(Int(byte), 8) }
        append(0, min(4, capacityBits - bits.count))  // terminator, shortened if space is short
        append(0, (8 - bits.count % 8) % 8)           // fill to a byte boundary

        var out: [UInt8] = []
        for start in stride(from: 0, to: bits.count, by: 8) {
            out.append(bits[start..<start + 8].reduce(0) { $0 << 1 | ($1 ? 1 : 0) })
        }
        // The alternating pad bytes are chosen by the standard so that empty space
        // doesn't form long uniform runs that could look like patterns.
        var pad: UInt8 = 0xEC
        while out.count < capacityBits / 8 {
            out.append(pad)
            pad = pad == 0xEC ? 0x11 : 0xEC
        }
        return out
    }

    /// Splits data into blocks, adds Reed–Solomon codewords to each, and
    /// interleaves them (first byte of every block, then the second, …) so that
    /// local damage in the symbol is shared between blocks.
    static func finalCodewords(_ bytes: [UInt8], version: Int) -> [UInt8] {
        let layout = layouts[version - 1]
        let data = dataCodewords(bytes, version: version)
        var dataBlocks: [[UInt8]] = []
        var offset = 0
        for length in layout.dataPerBlock {
            dataBlocks.append(Array(data[offset..<offset + length]))
            offset += length
        }
        let ecBlocks = dataBlocks.map { reedSolomon($0, ecCount: layout.ecPerBlock) }

        var out: [UInt8] = []
        for i in 0..<(layout.dataPerBlock.max() ?? 0) {
            for block in dataBlocks where i < block.count { out.append(block[i]) }
        }
        for i in 0..<layout.ecPerBlock {
            for block in ecBlocks { out.append(block[i]) }
        }
        return out
    }

    /// GF(256) with the QR field polynomial x⁸+x⁴+x³+x²+1 (0x11D). `exp[i]` is
    /// αⁱ; the table is doubled so products never need a modulo.
    enum GF {
        static let exp: [UInt8] = {
            var table = [UInt8](repeating: 0, count: 512)
            var x = 1
            for i in 0..<255 {
                table[i] = UInt8(x)
                x <<= 1
                if x & 0x100 != 0 { x ^= 0x11D }
            }
            for i in 255..<512 { table[i] = table[i - 255] }
            return table
        }()

        static let log: [Int] = {
            var table = [Int](repeating: 0, count: 256)
            for i in 0..<255 { table[Int(exp[i])] = i }
            return table
        }()

        static func multiply(_ a: UInt8, _ b: UInt8) -> UInt8 {
            a == 0 || b == 0 ? 0 : exp[log[Int(a)] + log[Int(b)]]
        }
    }

    /// The error correction codewords are the remainder of data·xⁿ divided by
    /// the generator (x−α⁰)(x−α¹)…(x−αⁿ⁻¹). Appending them makes the whole
    /// block a multiple of the generator, which is what lets a reader find and
    /// fix errors.
    static func reedSolomon(_ data: [UInt8], ecCount: Int) -> [UInt8] {
        var generator: [UInt8] = [1]  // highest power first
        for i in 0..<ecCount {
            var next = [UInt8](repeating: 0, count: generator.count + 1)
            for (j, coefficient) in generator.enumerated() {
                next[j] ^= coefficient
                next[j + 1] ^= GF.multiply(coefficient, GF.exp[i])
            }
            generator = next
        }
        var remainder = [UInt8](repeating: 0, count: ecCount)
        for byte in data {
            let factor = byte ^ (remainder.first ?? 0)
            remainder = Array(remainder.dropFirst()) + [0]
            for k in 0..<ecCount { remainder[k] ^= GF.multiply(generator[k + 1], factor) }
        }
        return remainder
    }

    /// BCH code: append the remainder of value·x^(degree of poly) divided by
    /// `poly`, so that a reader can correct misread bits in these small fields.
    static func bch(_ value: Int, poly: Int, polyDegree: Int) -> Int {
        var remainder = value << polyDegree
        for shift in stride(from: 30, through: polyDegree, by: -1) where remainder & (1 << shift) != 0 {
            remainder ^= poly << (shift - polyDegree)
        }
        return value << polyDegree | remainder
    }

    /// 15-bit format information: level M (00) and the mask, BCH(15,5)-protected,
    /// then XORed with 0x5412 so it can never be all light.
    static func formatBits(mask: Int) -> Int { bch(0b00 << 3 | mask, poly: 0x537, polyDegree: 10) ^ 0x5412 }

    /// 18-bit version information (v7+), BCH(18,6). Larger symbols are hard to
    /// count module by module, so the version is written out explicitly.
    static func versionBits(version: Int) -> Int { bch(version, poly: 0x1F25, polyDegree: 12) }
}

// MARK: - Module grid

extension QRCode {
    /// The symbol while it is being built; `reserved` marks function modules that
    /// data and masking must leave alone.
    struct Grid: Sendable {
        let version: Int
        let size: Int
        var dark: [Bool]
        var reserved: [Bool]

        init(version: Int) {
            self.version = version
            size = 17 + 4 * version
            dark = Array(repeating: false, count: size * size)
            reserved = dark
        }

        subscript(x: Int, y: Int) -> Bool { dark[y * size + x] }

        mutating func setFunction(_ x: Int, _ y: Int, _ isDark: Bool) {
            guard x >= 0, y >= 0, x < size, y < size else { return }
            dark[y * size + x] = isDark
            reserved[y * size + x] = true
        }

        mutating func drawFunctionPatterns() {
            // Timing patterns: alternating modules on row and column 6 let the
            // reader find each module's position across the symbol.
            for i in 0..<size {
                setFunction(6, i, i % 2 == 0)
                setFunction(i, 6, i % 2 == 0)
            }
            // Finder patterns (7×7 rings) in three corners give position and
            // orientation; the light ring at distance 4 is the separator.
            for (cx, cy) in [(3, 3), (size - 4, 3), (3, size - 4)] {
                for dy in -4...4 {
                    for dx in -4...4 {
                        let ring = max(abs(dx), abs(dy))
                        setFunction(cx + dx, cy + dy, ring != 2 && ring != 4)
                    }
                }
            }
            // Alignment patterns (5×5) everywhere on the grid of centres except
            // where they would overlap a finder pattern.
            let centres = QRCode.alignmentCentres[version - 1]
            let last = centres.count - 1
            for (i, cx) in centres.enumerated() {
                for (j, cy) in centres.enumerated() {
                    if (i == 0 && j == 0) || (i == 0 && j == last) || (i == last && j == 0) { continue }
                    for dy in -2...2 {
                        for dx in -2...2 { setFunction(cx + dx, cy + dy, max(abs(dx), abs(dy)) != 1) }
                    }
                }
            }
            drawFormatInfo(mask: 0)  // reserves the area; redrawn once the mask is known
            if version >= 7 {
                let bits = QRCode.versionBits(version: version)
                for i in 0..<18 {
                    let isDark = (bits >> i) & 1 == 1
                    let a = size - 11 + i % 3, b = i / 3
                    setFunction(a, b, isDark)  // top-right block
                    setFunction(b, a, isDark)  // bottom-left block (transposed)
                }
            }
        }

        /// Two copies of the format bits, around the top-left finder and split
        /// between the other two, so one smudge can't destroy both. Bit 14 (most
        /// significant) is outermost. The always-dark module sits next to the
        /// bottom-left copy.
        mutating func drawFormatInfo(mask: Int) {
            let bits = QRCode.formatBits(mask: mask)
            func bit(_ i: Int) -> Bool { (bits >> i) & 1 == 1 }
            for i in 0..<15 {
                // Copy 1: down column 8 (skipping the timing row), then left along row 8.
                switch i {
                case 0...5: setFunction(8, i, bit(i))
                case 6: setFunction(8, 7, bit(i))
                case 7: setFunction(8, 8, bit(i))
                case 8: setFunction(7, 8, bit(i))
                default: setFunction(14 - i, 8, bit(i))
                }
                // Copy 2: row 8 under the top-right finder, then column 8 by the bottom-left one.
                if i < 8 { setFunction(size - 1 - i, 8, bit(i)) } else { setFunction(8, size - 15 + i, bit(i)) }
            }
            setFunction(8, size - 8, true)
        }

        /// Codeword bits go up and down in two-module-wide columns from the
        /// bottom-right corner, most significant bit first, skipping function
        /// modules and the vertical timing column. Left-over modules (remainder
        /// bits) stay light.
        mutating func placeData(_ codewords: [UInt8]) {
            let totalBits = codewords.count * 8
            var index = 0
            var right = size - 1
            while right >= 1 {
                if right == 6 { right = 5 }
                let upward = ((size - 1 - right) / 2) % 2 == 0
                for step in 0..<size {
                    let y = upward ? size - 1 - step : step
                    for x in [right, right - 1] where !reserved[y * size + x] && index < totalBits {
                        dark[y * size + x] = (codewords[index / 8] >> (7 - index % 8)) & 1 == 1
                        index += 1
                    }
                }
                right -= 2
            }
        }

        /// Masks break up patterns in the data that might confuse a reader (for
        /// example something that looks like a finder). Only data modules flip.
        mutating func applyMask(_ mask: Int) {
            for y in 0..<size {
                for x in 0..<size where !reserved[y * size + x] && QRCode.maskFlips(mask, x: x, y: y) {
                    dark[y * size + x].toggle()
                }
            }
        }

        /// Penalty score of the four rules in ISO/IEC 18004 §7.8.3; lower is
        /// easier to read.
        func penalty() -> Int {
            var score = 0
            let rows = (0..<size).map { y in (0..<size).map { x in self[x, y] } }
            let columns = (0..<size).map { x in (0..<size).map { y in self[x, y] } }
            for line in rows + columns {
                // Rule 1: runs of five or more same-coloured modules (3 + extra length).
                var runLength = 1
                for i in 1...line.count {
                    if i < line.count && line[i] == line[i - 1] {
                        runLength += 1
                    } else {
                        if runLength >= 5 { score += runLength - 2 }
                        runLength = 1
                    }
                }
                // Rule 3: 1:1:3:1:1 finder-like pattern with four light modules on
                // either side; outside the symbol counts as light (quiet zone).
                let padded = [Bool](repeating: false, count: 4) + line + [Bool](repeating: false, count: 4)
                let finderLike: [Bool] = [true, false, true, true, true, false, true]
                let light4 = [Bool](repeating: false, count: 4)
                for start in 0...(padded.count - 11) {
                    let window = Array(padded[start..<start + 11])
                    if window == light4 + finderLike || window == finderLike + light4 { score += 40 }
                }
            }
            // Rule 2: each 2×2 block of one colour.
            for y in 0..<(size - 1) {
                for x in 0..<(size - 1) {
                    let c = self[x, y]
                    if self[x + 1, y] == c && self[x, y + 1] == c && self[x + 1, y + 1] == c { score += 3 }
                }
            }
            // Rule 4: 10 points for every full 5 % that dark modules deviate from half.
            let total = size * size
            let darkCount = dark.reduce(0) { $0 + ($1 ? 1 : 0) }
            score += abs(darkCount * 20 - total * 10) / total * 10
            return score
        }
    }

    /// The eight mask conditions (i = row = y, j = column = x); a true result
    /// flips the module.
    static func maskFlips(_ mask: Int, x j: Int, y i: Int) -> Bool {
        switch mask {
        case 0: return (i + j) % 2 == 0
        case 1: return i % 2 == 0
        case 2: return j % 3 == 0
        case 3: return (i + j) % 3 == 0
        case 4: return (i / 2 + j / 3) % 2 == 0
        case 5: return (i * j) % 2 + (i * j) % 3 == 0
        case 6: return ((i * j) % 2 + (i * j) % 3) % 2 == 0
        default: return ((i + j) % 2 + (i * j) % 3) % 2 == 0
        }
    }
}
