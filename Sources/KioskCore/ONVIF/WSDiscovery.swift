/// WS-Discovery (2005/04, as ONVIF uses it): how NVRs find cameras. A client multicasts a
/// Probe to 239.255.255.250:3702; a camera whose types match answers with a ProbeMatch
/// unicast, naming its device service address (XAddrs). A camera announces itself with
/// Hello when it starts and Bye when it stops. Pure: messages in and out as text.
public enum WSDiscovery {
    public static let multicastAddress = "239.255.255.250"
    public static let port = 3702

    static let addressing = "http://schemas.xmlsoap.org/ws/2004/08/addressing"
    static let discovery = "http://schemas.xmlsoap.org/ws/2005/04/discovery"
    static let anonymous = "http://schemas.xmlsoap.org/ws/2004/08/addressing/role/anonymous"
    static let discoveryTarget = "urn:schemas-xmlsoap-org:ws:2005:04:discovery"

    /// The probe's MessageID, when `envelope` is a Probe this camera matches (no types, or
    /// NetworkVideoTransmitter or Device among them); nil otherwise.
    public static func matchingProbe(_ envelope: SOAPElement) -> String? {
        guard envelope.name == "Envelope", let probe = envelope.child("Body")?.child("Probe"),
              let messageID = envelope.path("Header", "MessageID")?.text, !messageID.isEmpty, messageID.utf8.count <= 256 else { return nil }
        let types = (probe.child("Types")?.text ?? "").split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" })
            .map { $0.split(separator: ":").last.map(String.init) ?? "" }
        guard types.isEmpty || types.contains("NetworkVideoTransmitter") || types.contains("Device") else { return nil }
        return messageID
    }

    /// The answer to a matching probe.
    public static func probeMatch(relatesTo: String, messageID: String, device: ONVIFDevice) -> String {
        envelope(action: "\(discovery)/ProbeMatches", messageID: messageID, to: anonymous, relatesTo: relatesTo,
                 body: "<d:ProbeMatches><d:ProbeMatch>\(endpoint(device))</d:ProbeMatch></d:ProbeMatches>")
    }

    /// The announcement at start.
    public static func hello(messageID: String, device: ONVIFDevice) -> String {
        envelope(action: "\(discovery)/Hello", messageID: messageID, to: discoveryTarget, relatesTo: nil,
                 body: "<d:Hello>\(endpoint(device))</d:Hello>")
    }

    /// The announcement at stop.
    public static func bye(messageID: String, device: ONVIFDevice) -> String {
        envelope(action: "\(discovery)/Bye", messageID: messageID, to: discoveryTarget, relatesTo: nil,
                 body: "<d:Bye><a:EndpointReference><a:Address>\(device.endpointReference)</a:Address></a:EndpointReference></d:Bye>")
    }

    private static func endpoint(_ device: ONVIFDevice) -> String {
        "<a:EndpointReference><a:Address>\(device.endpointReference)</a:Address></a:EndpointReference>"
            + "<d:Types>dn:NetworkVideoTransmitter tds:Device</d:Types>"
            + "<d:Scopes>\(XMLText.escape(device.scopes.joined(separator: " ")))</d:Scopes>"
            + "<d:XAddrs>\(XMLText.escape(device.deviceServiceURL))</d:XAddrs><d:MetadataVersion>1</d:MetadataVersion>"
    }

    private static func envelope(action: String, messageID: String, to: String, relatesTo: String?, body: String) -> String {
        let relates = relatesTo.map { "<a:RelatesTo>\(XMLText.escape($0))</a:RelatesTo>" } ?? ""
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <s:Envelope xmlns:s="http://www.w3.org/2003/05/soap-envelope" xmlns:a="\(addressing)" xmlns:d="\(discovery)" \
            xmlns:dn="http://www.onvif.org/ver10/network/wsdl" xmlns:tds="\(ONVIFService.Namespace.device)"><s:Header>\
            <a:MessageID>\(XMLText.escape(messageID))</a:MessageID>\(relates)<a:To>\(to)</a:To><a:Action>\(action)</a:Action>\
            </s:Header><s:Body>\(body)</s:Body></s:Envelope>
            """
    }
}

/// How many ProbeMatches the camera sends: at most `perSecond` a second, in bursts of up
/// to `burst`. A Probe comes over UDP from any address it claims, and its answer is about
/// 13 times larger, so without a budget a forged source would turn the camera into an
/// amplifier aimed at someone else. NVRs probe a few times when they look; 10 a second
/// answers a room full of them.
public struct DiscoveryAnswerBudget: Sendable {
    public let perSecond: Double
    public let burst: Double
    private var tokens: Double
    private var lastTaken: Double?
    /// Matching probes left unanswered since start.
    public private(set) var refused = 0

    public static let standard = DiscoveryAnswerBudget(perSecond: 10, burst: 20)

    public init(perSecond: Double, burst: Double) {
        self.perSecond = max(0, perSecond)
        self.burst = max(1, burst)
        tokens = self.burst
    }

    /// Whether an answer may go out at `now` (monotonic seconds); counts it when so.
    public mutating func take(now: Double) -> Bool {
        if let lastTaken, now > lastTaken { tokens = min(burst, tokens + (now - lastTaken) * perSecond) }
        lastTaken = max(now, lastTaken ?? now)
        guard tokens >= 1 else {
            refused += 1
            return false
        }
        tokens -= 1
        return true
    }
}
