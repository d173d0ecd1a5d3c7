/// RTP payloads of one encoded packet, made once on the encoder thread and shared by
/// every client: each client writes its own 12-byte header (sequence number, SSRC) in
/// front of the same payload bytes.
public struct RTPPayload: Sendable, Equatable {
    public var bytes: [UInt8]
    /// The last packet of an access unit (H.264) or of an AAC frame.
    public var marker: Bool

    public init(bytes: [UInt8], marker: Bool) {
        self.bytes = bytes
        self.marker = marker
    }
}

/// H.264 over RTP, RFC 6184 packetization mode 1: a NAL unit that fits is sent alone
/// (single NAL unit packet), a bigger one in FU-A fragments; SPS and PPS go together in
/// one STAP-A in front of every IDR, so that a client joining at any keyframe decodes.
/// Access unit delimiters are dropped (the marker bit ends an access unit).
public enum H264RTPPacketizer {
    /// The payloads of one access unit (Annex B), in order, the marker on the last.
    /// - Parameters:
    ///   - parameterSets: SPS and PPS (NAL units, no start codes) sent before an IDR
    ///     that does not carry its own.
    ///   - maximumPayload: Bytes per RTP payload (the MTU less IP, UDP and RTP headers).
    public static func payloads(accessUnit bytes: UnsafeRawBufferPointer, parameterSets: [[UInt8]],
                                maximumPayload: Int = 1400) -> [RTPPayload] {
        let limit = max(16, maximumPayload)
        let units = H264AnnexB.units(in: bytes).filter(isSent)
        var out: [RTPPayload] = []
        let hasIDR = units.contains { $0.type == H264AnnexB.UnitType.idrSlice.rawValue }
        let hasSPS = units.contains { $0.type == H264AnnexB.UnitType.sequenceParameterSet.rawValue }
        if hasIDR, !hasSPS, !parameterSets.isEmpty {
            out.append(contentsOf: aggregate(parameterSets, limit: limit))
        }
        for unit in units {
            let nal = bytes[unit.range]
            if nal.count <= limit {
                out.append(RTPPayload(bytes: Array(nal), marker: false))
                continue
            }
            let header = nal[nal.startIndex]
            let indicator = (header & 0xE0) | 28                 // F, NRI; type 28 = FU-A
            var offset = nal.startIndex + 1
            var first = true
            while offset < nal.endIndex {
                let size = min(limit - 2, nal.endIndex - offset)
                let last = offset + size == nal.endIndex
                var fuHeader = header & 0x1F
                if first { fuHeader |= 0x80 }
                if last { fuHeader |= 0x40 }
                out.append(RTPPayload(bytes: [indicator, fuHeader] + nal[offset..<(offset + size)], marker: false))
                offset += size
                first = false
            }
        }
        if !out.isEmpty { out[out.count - 1].marker = true }
        return out
    }

    /// NAL unit types 1–23 except the delimiter: 0 and 24–31 are unspecified in H.264 and
    /// would read as RTP's own aggregation and fragment units.
    public static func isSent(_ unit: H264AnnexB.Unit) -> Bool {
        (1...23).contains(unit.type) && unit.type != H264AnnexB.UnitType.accessUnitDelimiter.rawValue
    }

    /// SPS and PPS in one STAP-A (type 24), or one packet each when they do not fit.
    static func aggregate(_ units: [[UInt8]], limit: Int) -> [RTPPayload] {
        let usable = units.filter { !$0.isEmpty && $0.count <= 0xFFFF && [7, 8].contains($0[0] & 0x1F) }
        let total = 1 + usable.reduce(0) { $0 + 2 + $1.count }
        guard usable.count > 1, total <= limit else {
            return usable.filter { $0.count <= limit }.map { RTPPayload(bytes: $0, marker: false) }
        }
        let nri = usable.map { $0[0] & 0x60 }.max() ?? 0x60
        var bytes: [UInt8] = [nri | 24]
        for unit in usable {
            bytes.append(UInt8(unit.count >> 8))
            bytes.append(UInt8(unit.count & 0xFF))
            bytes.append(contentsOf: unit)
        }
        return [RTPPayload(bytes: bytes, marker: false)]
    }

    /// SPS and PPS as NAL units from extradata in either form libavcodec gives: Annex B
    /// (libx264 with a global header, hardware encoders' first keyframe) or `avcC`.
    public static func parameterSets(extradata: [UInt8]) -> [[UInt8]] {
        if let configuration = AVCConfiguration(parsing: extradata) {
            return configuration.sequenceParameterSets + configuration.pictureParameterSets
        }
        return extradata.withUnsafeBytes { raw in
            H264AnnexB.units(in: raw)
                .filter { $0.type == H264AnnexB.UnitType.sequenceParameterSet.rawValue || $0.type == H264AnnexB.UnitType.pictureParameterSet.rawValue }
                .map { Array(raw[$0.range]) }
        }
    }
}

/// AAC over RTP, RFC 3640 `mpeg4-generic` in AAC-hbr mode: one raw AAC frame per packet
/// behind a 16-bit AU-headers-length and one AU header (13-bit size, 3-bit index).
public enum AACRTPPacketizer {
    /// The largest frame the 13-bit size field can say.
    public static let maximumFrameBytes = 8191

    /// The payload of one AAC frame, or nil for an empty or oversized one.
    public static func payload(frame: UnsafeRawBufferPointer) -> RTPPayload? {
        guard !frame.isEmpty, frame.count <= maximumFrameBytes else { return nil }
        let size = frame.count << 3
        return RTPPayload(bytes: [0x00, 0x10, UInt8(size >> 8), UInt8(size & 0xFF)] + Array(frame), marker: true)
    }
}

/// The 12-byte RTP header (RFC 3550 §5.1): version 2, no padding, extension or CSRCs.
public enum RTPHeader {
    public static let size = 12

    public static func write(payloadType: UInt8, marker: Bool, sequence: UInt16, timestamp: UInt32, ssrc: UInt32,
                             into bytes: inout [UInt8]) {
        bytes.append(0x80)
        bytes.append((marker ? 0x80 : 0) | (payloadType & 0x7F))
        append16(sequence, &bytes)
        append32(timestamp, &bytes)
        append32(ssrc, &bytes)
    }

    static func append16(_ value: UInt16, _ bytes: inout [UInt8]) {
        bytes.append(UInt8(value >> 8))
        bytes.append(UInt8(value & 0xFF))
    }

    static func append32(_ value: UInt32, _ bytes: inout [UInt8]) {
        bytes.append(UInt8(value >> 24))
        bytes.append(UInt8((value >> 16) & 0xFF))
        bytes.append(UInt8((value >> 8) & 0xFF))
        bytes.append(UInt8(value & 0xFF))
    }
}

/// An RTCP sender report (RFC 3550 §6.4.1) with no report blocks, and an SDES CNAME in
/// the same compound packet: what a client needs to put sound and picture on one clock.
public enum RTCPSenderReport {
    /// - Parameters:
    ///   - ntpSeconds: Wall-clock time of `rtpTimestamp`, seconds since 1900.
    public static func compound(ssrc: UInt32, ntpSeconds: Double, rtpTimestamp: UInt32, packets: UInt32, octets: UInt32,
                                cname: String) -> [UInt8] {
        var bytes: [UInt8] = [0x80, 200, 0, 6]
        RTPHeader.append32(ssrc, &bytes)
        let whole = ntpSeconds.isFinite && ntpSeconds > 0 ? min(ntpSeconds, Double(UInt32.max)) : 0
        let integer = UInt32(whole.rounded(.down))
        let fraction = UInt32(min(Double(UInt32.max), ((whole - Double(integer)) * 4_294_967_296).rounded(.down)))
        RTPHeader.append32(integer, &bytes)
        RTPHeader.append32(fraction, &bytes)
        RTPHeader.append32(rtpTimestamp, &bytes)
        RTPHeader.append32(packets, &bytes)
        RTPHeader.append32(octets, &bytes)
        // SDES: one chunk, CNAME, null-terminated, padded to 32 bits.
        let name = Array(cname.utf8.prefix(255))
        var chunk: [UInt8] = []
        RTPHeader.append32(ssrc, &chunk)
        chunk.append(1)
        chunk.append(UInt8(name.count))
        chunk.append(contentsOf: name)
        chunk.append(0)
        while chunk.count % 4 != 0 { chunk.append(0) }
        bytes.append(0x81)
        bytes.append(202)
        RTPHeader.append16(UInt16(chunk.count / 4), &bytes)
        bytes.append(contentsOf: chunk)
        return bytes
    }
}

/// Time on an RTP clock: capture time since the stream's zero in the clock's rate, from a
/// random start (RFC 3550 §5.1), wrapping at 2^32.
public struct RTPClock: Sendable, Equatable {
    public let rate: Int
    public let offset: UInt32

    public init(rate: Int, offset: UInt32) {
        self.rate = max(1, rate)
        self.offset = offset
    }

    public func timestamp(nanosecondsSinceZero: Int64) -> UInt32 {
        let ticks = Int64((Double(nanosecondsSinceZero) * Double(rate) / 1e9).rounded())
        return offset &+ UInt32(truncatingIfNeeded: ticks)
    }
}
