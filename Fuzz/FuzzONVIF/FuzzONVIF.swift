import Foundation
import FuzzSupport
import KioskCore
import KioskSOAP

/// What an ONVIF client or anyone on the LAN's multicast group controls: a SOAP message to
/// `/onvif/…` or a WS-Discovery datagram, through the XML parser, the request reader, the
/// UsernameToken, the answers and the probe match.
///
/// Properties beyond "no trap": every answer — to the device and the media service, and a
/// probe match — is well-formed XML that reads back as a SOAP envelope.
func fuzzONVIF(_ bytes: UnsafeRawBufferPointer) {
    guard case .success(let envelope) = SOAPParser.parse(Array(bytes)) else { return }
    let device = ONVIFDevice(name: "cam <&\"'>", firmwareVersion: "1", serialNumber: "id", baseURL: "https://10.0.0.2:8443",
                             streams: [.init(token: "main", width: 1280, height: 720, framesPerSecond: 30, bitrate: 2_000_000,
                                             keyframeInterval: 30, rtspURL: "rtsp://10.0.0.2:8554/live")])
    func wellFormed(_ xml: String, _ what: String) {
        guard case .success(let back) = SOAPParser.parse(Array(xml.utf8)) else { return Fuzz.require(false, "\(what) is not well-formed XML") }
        Fuzz.require(back.name == "Envelope", "\(what) is not an envelope")
    }
    if let token = ONVIFUsernameToken(envelope: envelope) {
        _ = token.isFresh(now: Date())
        _ = token.expectedDigest(password: "p") { Array($0.prefix(20)) }
    }
    switch ONVIFService.request(envelope) {
    case .success(let request):
        for endpoint in [ONVIFService.Endpoint.device, .media] {
            wellFormed(ONVIFService.answer(request, endpoint: endpoint, device: device, now: Date()).xml, "the \(endpoint) answer to \(request.operation)")
        }
    case .failure(let fault):
        wellFormed(fault.xml, "a fault")
    }
    if let messageID = WSDiscovery.matchingProbe(envelope) {
        wellFormed(WSDiscovery.probeMatch(relatesTo: messageID, messageID: "urn:uuid:1", device: device), "a probe match")
    }
}

@main
enum Main {
    static func main() { Fuzz.main("FuzzONVIF", fuzzONVIF) }
}
