import Foundation

/// How a client wants one track delivered, from its SETUP's `Transport` header
/// (RFC 2326 §12.39): interleaved in the RTSP connection, or UDP to its ports.
public enum RTSPTransport: Sendable, Equatable {
    /// RTP on channel `rtp`, RTCP on `rtcp`, in the TCP connection.
    case interleaved(rtp: UInt8, rtcp: UInt8)
    /// RTP to the client's `rtpPort`, RTCP to `rtcpPort`, unicast.
    case udp(rtpPort: UInt16, rtcpPort: UInt16)

    /// The first transport in the header this server serves, or nil (461): multicast, a
    /// profile other than RTP/AVP, ports or channels out of range.
    /// - Parameter nextChannel: The interleaved channel to give when the client names none.
    public static func choose(from header: String, nextChannel: UInt8) -> RTSPTransport? {
        guard header.utf8.count <= 4096 else { return nil }
        for spec in header.split(separator: ",") {
            let fields = spec.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let profile = fields.first?.uppercased() else { continue }
            let parameters = fields.dropFirst().map { field -> (String, String) in
                guard let equals = field.firstIndex(of: "=") else { return (field.lowercased(), "") }
                return (field[..<equals].lowercased(), String(field[field.index(after: equals)...]))
            }
            func value(_ name: String) -> String? { parameters.first { $0.0 == name }?.1 }
            guard !parameters.contains(where: { $0.0 == "multicast" }) else { continue }
            switch profile {
            case "RTP/AVP/TCP":
                if let channels = value("interleaved") {
                    guard let pair = Self.pair(channels, maximum: 255), pair.0 <= 254 else { continue }
                    return .interleaved(rtp: UInt8(pair.0), rtcp: UInt8(pair.1))
                }
                guard nextChannel <= 254 else { continue }
                return .interleaved(rtp: nextChannel, rtcp: nextChannel + 1)
            case "RTP/AVP", "RTP/AVP/UDP":
                guard let ports = value("client_port"), let pair = Self.pair(ports, maximum: 65535), pair.0 > 0 else { continue }
                return .udp(rtpPort: UInt16(pair.0), rtcpPort: UInt16(pair.1))
            default:
                continue
            }
        }
        return nil
    }

    /// "A-B" or "A" (then B = A + 1), both ≤ `maximum`.
    private static func pair(_ text: String, maximum: Int) -> (Int, Int)? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count <= 2, let first = Int(parts[0]), (0...maximum).contains(first) else { return nil }
        if parts.count == 2 {
            guard let second = Int(parts[1]), (0...maximum).contains(second) else { return nil }
            return (first, second)
        }
        guard first < maximum else { return nil }
        return (first, first + 1)
    }

    /// The `Transport` header the server answers with.
    /// - Parameter serverPorts: The server's RTP and RTCP ports (UDP).
    public func responseHeader(ssrc: UInt32, serverPorts: (UInt16, UInt16)) -> String {
        let ssrcText = String(ssrc, radix: 16, uppercase: true)
        let padded = String(repeating: "0", count: max(0, 8 - ssrcText.count)) + ssrcText
        switch self {
        case .interleaved(let rtp, let rtcp):
            return "RTP/AVP/TCP;unicast;interleaved=\(rtp)-\(rtcp);ssrc=\(padded)"
        case .udp(let rtpPort, let rtcpPort):
            return "RTP/AVP;unicast;client_port=\(rtpPort)-\(rtcpPort);server_port=\(serverPorts.0)-\(serverPorts.1);ssrc=\(padded)"
        }
    }

    /// "TCP" or "UDP", for status.
    public var name: String {
        if case .interleaved = self { "TCP" } else { "UDP" }
    }
}

/// The stream paths the server offers and how a SETUP URI names a track in one.
public enum RTSPStreamPath: String, Sendable, CaseIterable {
    /// The recording's encode.
    case live
    /// The smaller second encode.
    case sub

    /// The stream and the track (nil: the aggregate) a request path names, or nil for
    /// another path. `/live`, `/live/`, `/live/trackID=1`.
    public static func parse(_ path: String) -> (stream: RTSPStreamPath, track: Int?)? {
        let parts = path.split(separator: "/")
        guard let first = parts.first, let stream = RTSPStreamPath(rawValue: String(first)) else { return nil }
        switch parts.count {
        case 1: return (stream, nil)
        case 2:
            let part = parts[1]
            guard part.hasPrefix("trackID="), let track = Int(part.dropFirst("trackID=".count)), (0...1).contains(track) else { return nil }
            return (stream, track)
        default: return nil
        }
    }
}

/// `Session` header values: the id a client echoes, before any `;timeout=`.
public enum RTSPSessionHeader {
    public static func id(_ header: String?) -> String? {
        guard let header, let id = header.split(separator: ";").first?.trimmingCharacters(in: .whitespaces), !id.isEmpty,
              id.utf8.count <= 64 else { return nil }
        return id
    }
}
