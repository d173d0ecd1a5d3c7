/// Reads H.264 Annex B byte streams (NAL units after `00 00 01` / `00 00 00 01` start
/// codes), which every libavcodec H.264 encoder emits without a global header.
///
/// Why: some hardware encoders (the Raspberry Pi 4's `h264_v4l2m2m`) give no SPS/PPS at
/// open time — they arrive in-band with the first IDR, and not always again before later
/// IDRs (raspberrypi/linux#5150). A file needs them in its header, and a stream or a file
/// that begins at a later keyframe needs them in front of that keyframe; so they are
/// taken from the first packet that carries them and put back where they are missing.
/// Pure: every length comes from the bytes, is checked, and nothing can trap.
public enum H264AnnexB {
    /// NAL unit types that matter here (ITU-T H.264 table 7-1).
    public enum UnitType: UInt8, Sendable {
        case nonIDRSlice = 1
        case idrSlice = 5
        case sei = 6
        case sequenceParameterSet = 7
        case pictureParameterSet = 8
        case accessUnitDelimiter = 9
    }

    /// One NAL unit: where its payload (the header byte onwards, start code excluded) lies.
    public struct Unit: Sendable, Equatable {
        public var range: Range<Int>
        /// `nal_unit_type`, the header byte's low 5 bits.
        public var type: UInt8
    }

    /// The NAL units of an Annex B buffer, in order. Bytes before the first start code
    /// are ignored; trailing zero bytes of a unit belong to the next start code.
    public static func units(in bytes: UnsafeRawBufferPointer) -> [Unit] {
        var starts: [(codeStart: Int, payload: Int)] = []
        let count = bytes.count
        var index = 0
        while index + 2 < count {
            if bytes[index] == 0, bytes[index + 1] == 0, bytes[index + 2] == 1 {
                let codeStart = index > 0 && bytes[index - 1] == 0 ? index - 1 : index
                starts.append((codeStart, index + 3))
                index += 3
            } else {
                index += 1
            }
        }
        var units: [Unit] = []
        for (position, start) in starts.enumerated() {
            var end = position + 1 < starts.count ? starts[position + 1].codeStart : count
            while end > start.payload, bytes[end - 1] == 0 { end -= 1 }   // trailing_zero_8bits
            guard end > start.payload else { continue }
            units.append(Unit(range: start.payload..<end, type: bytes[start.payload] & 0x1F))
        }
        return units
    }

    /// The first SPS and PPS in `bytes` as Annex B (each after a 4-byte start code), the
    /// form libavformat accepts as H.264 extradata; nil unless both are there.
    public static func parameterSets(in bytes: UnsafeRawBufferPointer) -> [UInt8]? {
        let units = units(in: bytes)
        guard let sps = units.first(where: { $0.type == UnitType.sequenceParameterSet.rawValue }),
              let pps = units.first(where: { $0.type == UnitType.pictureParameterSet.rawValue }),
              sps.range.count >= 4 else { return nil }   // an SPS holds at least profile, flags, level
        return [0, 0, 0, 1] + Array(bytes[sps.range]) + [0, 0, 0, 1] + Array(bytes[pps.range])
    }

    /// Whether the access unit holds an IDR slice.
    public static func containsIDR(_ bytes: UnsafeRawBufferPointer) -> Bool {
        units(in: bytes).contains { $0.type == UnitType.idrSlice.rawValue }
    }

    /// Whether the access unit carries its own SPS and PPS.
    public static func containsParameterSets(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let types = Set(units(in: bytes).map(\.type))
        return types.contains(UnitType.sequenceParameterSet.rawValue) && types.contains(UnitType.pictureParameterSet.rawValue)
    }

    /// `profile_idc`, constraint flags and `level_idc` of an Annex B SPS+PPS block (for
    /// logs: "High 4.0"); nil when there is no SPS.
    public static func profileAndLevel(_ parameterSets: [UInt8]) -> (profile: UInt8, level: UInt8)? {
        parameterSets.withUnsafeBytes { raw in
            guard let sps = units(in: raw).first(where: { $0.type == UnitType.sequenceParameterSet.rawValue }),
                  sps.range.count >= 4 else { return nil }
            return (raw[sps.range.lowerBound + 1], raw[sps.range.lowerBound + 3])
        }
    }
}
