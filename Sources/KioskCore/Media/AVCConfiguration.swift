/// An MP4 track's H.264 decoder configuration (`avcC`, ISO/IEC 14496-15 §5.3.3): the
/// SPS and PPS a decoder needs before the first picture, and the NAL length size.
///
/// Why: a smart cut re-encodes the first GOP and copies the rest. An MP4 track has one
/// `avcC`, so both parts' parameter sets must live in it side by side, under different
/// ids — the re-encoded head references its own SPS/PPS, the copied tail the original.
/// Pure: every length comes from the bytes and is checked; nothing can trap.
public struct AVCConfiguration: Equatable, Sendable {
    public var profile: UInt8
    public var compatibility: UInt8
    public var level: UInt8
    /// Bytes in front of each NAL unit in a sample: 1, 2 or 4.
    public var lengthSize: Int
    /// Each SPS as a NAL unit (header byte first, no start code).
    public var sequenceParameterSets: [[UInt8]]
    public var pictureParameterSets: [[UInt8]]
    /// What follows the PPS list (High profile's chroma/bit-depth fields), kept as is.
    public var trailer: [UInt8]

    /// Reads an `avcC` payload (what libavformat keeps as an MP4 H.264 stream's extradata);
    /// nil for Annex B extradata or anything truncated or malformed.
    public init?(parsing bytes: [UInt8]) {
        guard bytes.count >= 7, bytes[0] == 1 else { return nil }
        profile = bytes[1]
        compatibility = bytes[2]
        level = bytes[3]
        let size = Int(bytes[4] & 0x03) + 1
        guard size != 3 else { return nil }
        lengthSize = size
        var offset = 6
        func list(count: Int) -> [[UInt8]]? {
            var units: [[UInt8]] = []
            for _ in 0..<count {
                guard offset + 2 <= bytes.count else { return nil }
                let length = Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
                offset += 2
                guard length > 0, offset + length <= bytes.count else { return nil }
                units.append(Array(bytes[offset..<offset + length]))
                offset += length
            }
            return units
        }
        guard let sps = list(count: Int(bytes[5] & 0x1F)) else { return nil }
        guard offset < bytes.count else { return nil }
        let ppsCount = Int(bytes[offset])
        offset += 1
        guard let pps = list(count: ppsCount) else { return nil }
        sequenceParameterSets = sps
        pictureParameterSets = pps
        trailer = Array(bytes[offset...])
    }

    public init(profile: UInt8, compatibility: UInt8, level: UInt8, lengthSize: Int,
                sequenceParameterSets: [[UInt8]], pictureParameterSets: [[UInt8]], trailer: [UInt8] = []) {
        self.profile = profile
        self.compatibility = compatibility
        self.level = level
        self.lengthSize = lengthSize
        self.sequenceParameterSets = sequenceParameterSets
        self.pictureParameterSets = pictureParameterSets
        self.trailer = trailer
    }

    /// The `avcC` payload. Lists longer than the format holds (31 SPS, 255 PPS) and
    /// units over 64 KiB are cut off, as no encoder makes them.
    public var bytes: [UInt8] {
        var out: [UInt8] = [1, profile, compatibility, level, 0xFC | UInt8((lengthSize - 1) & 0x03)]
        let sps = sequenceParameterSets.prefix(31).filter { $0.count <= 0xFFFF }
        let pps = pictureParameterSets.prefix(255).filter { $0.count <= 0xFFFF }
        out.append(0xE0 | UInt8(sps.count))
        for unit in sps { out += [UInt8(unit.count >> 8), UInt8(unit.count & 0xFF)] + unit }
        out.append(UInt8(pps.count))
        for unit in pps { out += [UInt8(unit.count >> 8), UInt8(unit.count & 0xFF)] + unit }
        return out + trailer
    }

    /// Why a second set of parameter sets cannot join this configuration.
    public enum MergeProblem: Error, Equatable, CustomStringConvertible {
        case unreadable(String)
        case sameID(Int)
        case otherProfile(ours: UInt8, theirs: UInt8)

        public var description: String {
            switch self {
            case let .unreadable(what): "the \(what) cannot be read"
            case let .sameID(id): "both use parameter set id \(id)"
            case let .otherProfile(ours, theirs): "the recording is H.264 profile \(ours), the re-encode profile \(theirs)"
            }
        }
    }

    /// This configuration with one more SPS and PPS (a re-encoded part's), so a track
    /// can hold pictures that reference either.
    /// - Throws: `MergeProblem` when the new sets cannot be read, reuse an id already
    ///   here, or are of another profile (the `avcC` names one profile for the track).
    public func adding(sequenceParameterSet sps: [UInt8], pictureParameterSet pps: [UInt8]) throws(MergeProblem) -> AVCConfiguration {
        guard let newSPS = H264ParameterSetIDs.sequenceParameterSet(sps), sps.count >= 4 else { throw .unreadable("new SPS") }
        guard let newPPS = H264ParameterSetIDs.pictureParameterSet(pps) else { throw .unreadable("new PPS") }
        guard sps[1] == profile else { throw .otherProfile(ours: profile, theirs: sps[1]) }
        for existing in sequenceParameterSets {
            guard let id = H264ParameterSetIDs.sequenceParameterSet(existing) else { throw .unreadable("recording's SPS") }
            if id == newSPS { throw .sameID(id) }
        }
        for existing in pictureParameterSets {
            guard let ids = H264ParameterSetIDs.pictureParameterSet(existing) else { throw .unreadable("recording's PPS") }
            if ids.pps == newPPS.pps { throw .sameID(ids.pps) }
        }
        var merged = self
        merged.sequenceParameterSets.append(sps)
        merged.pictureParameterSets.append(pps)
        // The constraint flags both sets meet, the higher level of the two.
        merged.compatibility &= sps[2]
        merged.level = max(level, sps[3])
        return merged
    }
}

/// The ids at the start of SPS and PPS NAL units (H.264 §7.3.2.1, §7.3.2.2): Exp-Golomb
/// numbers read from the RBSP (emulation-prevention bytes removed).
public enum H264ParameterSetIDs {
    /// `seq_parameter_set_id` of an SPS NAL unit (header byte first); nil when malformed.
    public static func sequenceParameterSet(_ unit: [UInt8]) -> Int? {
        guard unit.count >= 5, unit[0] & 0x1F == H264AnnexB.UnitType.sequenceParameterSet.rawValue else { return nil }
        var reader = BitReader(rbsp: Array(unit[4...]))
        guard let id = reader.unsignedExpGolomb(), id <= 31 else { return nil }
        return id
    }

    /// `pic_parameter_set_id` and `seq_parameter_set_id` of a PPS NAL unit; nil when malformed.
    public static func pictureParameterSet(_ unit: [UInt8]) -> (pps: Int, sps: Int)? {
        guard unit.count >= 2, unit[0] & 0x1F == H264AnnexB.UnitType.pictureParameterSet.rawValue else { return nil }
        var reader = BitReader(rbsp: Array(unit[1...]))
        guard let pps = reader.unsignedExpGolomb(), pps <= 255, let sps = reader.unsignedExpGolomb(), sps <= 31 else { return nil }
        return (pps, sps)
    }

    /// Reads bits MSB first from an escaped NAL payload.
    struct BitReader {
        private var bytes: [UInt8] = []
        private var position = 0

        init(rbsp escaped: [UInt8]) {
            var zeros = 0
            for byte in escaped {
                if zeros >= 2 && byte == 3 { zeros = 0; continue }   // emulation_prevention_three_byte
                zeros = byte == 0 ? zeros + 1 : 0
                bytes.append(byte)
            }
        }

        mutating func bit() -> Int? {
            guard position < bytes.count * 8 else { return nil }
            defer { position += 1 }
            return Int(bytes[position / 8] >> (7 - UInt8(position % 8))) & 1
        }

        /// ue(v); nil past the end or beyond 31 leading zeros (no id is that large).
        mutating func unsignedExpGolomb() -> Int? {
            var zeros = 0
            while true {
                guard let bit = bit() else { return nil }
                if bit == 1 { break }
                zeros += 1
                if zeros > 31 { return nil }
            }
            var value = 0
            for _ in 0..<zeros {
                guard let bit = bit() else { return nil }
                value = value << 1 | bit
            }
            return (1 << zeros) - 1 + value
        }
    }
}

extension H264AnnexB {
    /// An Annex B access unit as an MP4 sample: each NAL unit behind a big-endian length
    /// of `lengthSize` bytes, units of the `dropping` types left out (parameter sets that
    /// belong in the `avcC`). Nil when a unit is too long for the length size.
    public static func lengthPrefixed(_ bytes: UnsafeRawBufferPointer, lengthSize: Int,
                                      dropping dropped: Set<UInt8> = []) -> [UInt8]? {
        guard [1, 2, 4].contains(lengthSize) else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        for unit in units(in: bytes) where !dropped.contains(unit.type) {
            let length = unit.range.count
            guard lengthSize == 4 || length < 1 << (8 * lengthSize) else { return nil }
            for shift in stride(from: 8 * (lengthSize - 1), through: 0, by: -8) {
                out.append(UInt8(truncatingIfNeeded: length >> shift))
            }
            out += bytes[unit.range]
        }
        return out
    }
}
