import FuzzSupport
import KioskCore

/// What an RTSP client controls, through every parser of the RTSP server: the bytes of the
/// connection (requests and interleaved frames, fed in pieces the first byte chooses), the
/// Transport, Session and Authorization headers, the request path, and — as the encoder's
/// output the packetizers take — an access unit and an AAC frame, and the SDP made from them.
///
/// Properties beyond "no trap":
/// - the same bytes give the same inputs however they are split, and nothing after a refusal;
/// - every H.264 payload fits the limit, one marker ends the unit, and the NAL units
///   rebuilt from the payloads are the unit's own (less delimiters);
/// - a chosen transport's channels and ports are in range;
/// - a response never carries a line break from a header value.
func fuzzRTSP(_ bytes: UnsafeRawBufferPointer) {
    guard let first = bytes.first else { return }
    let data = Array(bytes.dropFirst())

    var whole = RTSPRequestParser()
    let all = whole.feed(data)
    var pieces = RTSPRequestParser()
    var split: [RTSPInput] = []
    let step = Int(first % 17) + 1
    var index = 0
    while index < data.count {
        split += pieces.feed(data[index..<min(data.count, index + step)])
        index += step
    }
    Fuzz.require(all == split, "a split changed what was read: \(all.count) vs \(split.count) inputs")
    if let refusal = all.firstIndex(where: { if case .malformed = $0 { true } else { false } }) {
        Fuzz.require(refusal == all.count - 1, "inputs after a refusal")
    }
    for case .request(let request) in all {
        _ = request.path
        _ = RTSPStreamPath.parse(request.path)
        _ = RTSPSessionHeader.id(request.header("Session"))
        if let digest = DigestAuthorization(header: request.header("Authorization")) {
            // A request signs itself; whatever it signed names its own stream.
            let matched = digest.namesStream(of: request.uri)
            Fuzz.require(!digest.names(target: request.uri) || matched, "names without namesStream")
            Fuzz.require(digest.names(target: digest.uri) && digest.namesStream(of: digest.uri), "a uri that does not name itself")
        }
        _ = HTTPCredentials.basic(request.header("Authorization"))
        if let transport = RTSPTransport.choose(from: request.header("Transport") ?? "", nextChannel: first) {
            if case .interleaved(let rtp, _) = transport { Fuzz.require(rtp <= 254, "channel \(rtp)") }
            if case .udp(let rtpPort, _) = transport { Fuzz.require(rtpPort > 0, "port 0") }
            _ = transport.responseHeader(ssrc: 1, serverPorts: (8000, 8001))
        }
        let response = RTSPResponse(status: 200, headers: request.headers).bytes(cseq: request.cseq)
        let lines = String(decoding: response, as: UTF8.self).components(separatedBy: "\r\n\r\n")[0].components(separatedBy: "\r\n")
        Fuzz.require(lines.count == request.headers.count + 3, "a header value broke a line")
    }
    let text = String(decoding: data, as: UTF8.self)
    _ = DigestAuthorization(header: text)
    _ = RTSPTransport.choose(from: text, nextChannel: first)

    let limit = 16 + Int(first) * 8
    let sets = H264RTPPacketizer.parameterSets(extradata: data)
    let payloads = H264RTPPacketizer.payloads(accessUnit: bytes, parameterSets: sets, maximumPayload: limit)
    Fuzz.require(payloads.allSatisfy { $0.bytes.count <= limit && !$0.bytes.isEmpty }, "a payload over \(limit) bytes")
    Fuzz.require(payloads.isEmpty || (payloads.last?.marker == true && payloads.filter(\.marker).count == 1), "markers")
    var rebuilt: [[UInt8]] = []
    var fragment: [UInt8]?
    for payload in payloads {
        let body = payload.bytes
        switch body[0] & 0x1F {
        case 24 where body.count > 1:
            var offset = 1
            while offset + 2 <= body.count {
                let size = Int(body[offset]) << 8 | Int(body[offset + 1])
                guard offset + 2 + size <= body.count else { return Fuzz.require(false, "a STAP-A unit past its end") }
                rebuilt.append(Array(body[(offset + 2)..<(offset + 2 + size)]))
                offset += 2 + size
            }
        case 28 where body.count > 2:
            if body[1] & 0x80 != 0 { fragment = [(body[0] & 0xE0) | (body[1] & 0x1F)] }
            fragment? += body[2...]
            if body[1] & 0x40 != 0, let unit = fragment { rebuilt.append(unit); fragment = nil }
        default:
            rebuilt.append(body)
        }
    }
    let units = H264AnnexB.units(in: bytes).filter(H264RTPPacketizer.isSent).map { Array(bytes[$0.range]) }
    let withoutAddedSets = rebuilt.count > units.count ? Array(rebuilt.suffix(units.count)) : rebuilt
    Fuzz.require(withoutAddedSets == units, "NAL units do not come back from their payloads")
    _ = AACRTPPacketizer.payload(frame: bytes)
    let sdp = SDPDescription(video: .init(parameterSets: sets, width: Int(first), height: 2, framesPerSecond: 30),
                             audio: .init(sampleRate: 48_000, channels: 1, config: Array(data.prefix(4))),
                             name: text, serverAddress: "10.0.0.1", sessionID: 1).text
    Fuzz.require(sdp.components(separatedBy: "\r\n").allSatisfy { !$0.contains("\n") && !$0.contains("\r") }, "a bare line break in the SDP")
}

@main
enum Main {
    static func main() { Fuzz.main("FuzzRTSP", fuzzRTSP) }
}
