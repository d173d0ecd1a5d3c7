import Foundation
import KioskCore
import KioskSOAP
import XCTest

/// ONVIF's pure parts and the SOAP reader: requests, the UsernameToken, answers that are
/// well-formed and say what NVRs read, faults, and WS-Discovery.
final class ONVIFTests: XCTestCase {
    private let device = ONVIFDevice(
        name: "KioskCam <1>", firmwareVersion: "2.0", serialNumber: "abc123", baseURL: "https://192.168.1.5:8443",
        streams: [.init(token: "main", width: 1280, height: 720, framesPerSecond: 30, bitrate: 2_000_000, keyframeInterval: 30,
                        rtspURL: "rtsp://192.168.1.5:8554/live"),
                  .init(token: "sub", width: 640, height: 360, framesPerSecond: 10, bitrate: 400_000, keyframeInterval: 20,
                        rtspURL: "rtsp://192.168.1.5:8554/sub")])

    private func envelope(_ body: String, header: String = "") -> SOAPElement {
        let text = """
            <?xml version="1.0"?><s:Envelope xmlns:s="http://www.w3.org/2003/05/soap-envelope" \
            xmlns:wsse="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd" \
            xmlns:wsu="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd" \
            xmlns:trt="http://www.onvif.org/ver10/media/wsdl" xmlns:tds="http://www.onvif.org/ver10/device/wsdl">\
            <s:Header>\(header)</s:Header><s:Body>\(body)</s:Body></s:Envelope>
            """
        guard case .success(let parsed) = SOAPParser.parse(Array(text.utf8)) else {
            XCTFail("does not parse: \(text)")
            return SOAPElement(name: "")
        }
        return parsed
    }

    private func answer(_ body: String, _ endpoint: ONVIFService.Endpoint) throws -> (Int, SOAPElement) {
        guard case .success(let request) = ONVIFService.request(envelope(body)) else { throw XCTSkip("no request") }
        let answer = ONVIFService.answer(request, endpoint: endpoint, device: device, now: Date(timeIntervalSince1970: 1_800_000_000))
        guard case .success(let parsed) = SOAPParser.parse(Array(answer.xml.utf8)) else {
            XCTFail("the answer is not well-formed: \(answer.xml)")
            return (answer.status, SOAPElement(name: ""))
        }
        return (answer.status, parsed)
    }

    func testTheParserReadsNamespacesAndRefusesDocumentTypes() {
        let parsed = envelope("<trt:GetProfiles/>")
        XCTAssertEqual(parsed.name, "Envelope")
        XCTAssertEqual(parsed.namespace, ONVIFService.Namespace.soap)
        XCTAssertEqual(parsed.child("Body")?.children.first?.name, "GetProfiles")
        XCTAssertEqual(parsed.child("Body")?.children.first?.namespace, ONVIFService.Namespace.media)
        let bomb = #"<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;">]><a>&lol2;</a>"#
        guard case .failure(let error) = SOAPParser.parse(Array(bomb.utf8)) else { return XCTFail("a DTD was read") }
        XCTAssertTrue(error.description.contains("document type"), error.description)
        let external = #"<?xml version="1.0"?><!doctype a SYSTEM "file:///etc/passwd"><a/>"#
        if case .success = SOAPParser.parse(Array(external.utf8)) { XCTFail("an external entity was read") }
        if case .success = SOAPParser.parse(Array("<a><b></a>".utf8)) { XCTFail("malformed XML was read") }
        let deep = String(repeating: "<a>", count: 40) + String(repeating: "</a>", count: 40)
        if case .success = SOAPParser.parse(Array(deep.utf8)) { XCTFail("40 levels were read") }
        if case .success = SOAPParser.parse([UInt8](repeating: 0x20, count: SOAPParser.maximumBytes + 1)) { XCTFail("too big") }
    }

    func testProfilesStreamAndSnapshotURIs() throws {
        let (status, profiles) = try answer("<trt:GetProfiles/>", .media)
        XCTAssertEqual(status, 200)
        let list = profiles.child("Body")?.child("GetProfilesResponse")?.children ?? []
        XCTAssertEqual(list.map { $0.attributes["token"] }, ["main", "sub"])
        XCTAssertEqual(list.first?.descendant("Width")?.text, "1280")
        XCTAssertEqual(list.last?.descendant("FrameRateLimit")?.text, "10")
        let (_, stream) = try answer("<trt:GetStreamUri><trt:ProfileToken>sub</trt:ProfileToken></trt:GetStreamUri>", .media)
        XCTAssertEqual(stream.descendant("Uri")?.text, "rtsp://192.168.1.5:8554/sub")
        let (_, snapshot) = try answer("<trt:GetSnapshotUri><trt:ProfileToken>main</trt:ProfileToken></trt:GetSnapshotUri>", .media)
        XCTAssertEqual(snapshot.descendant("Uri")?.text, "https://192.168.1.5:8443/api/snapshot.jpg")
        let (missing, fault) = try answer("<trt:GetStreamUri><trt:ProfileToken>x</trt:ProfileToken></trt:GetStreamUri>", .media)
        XCTAssertEqual(missing, 400)
        XCTAssertEqual(fault.descendant("Subcode")?.child("Value")?.text, "ter:NoProfile")
    }

    func testDeviceServiceAnswers() throws {
        let (_, info) = try answer("<tds:GetDeviceInformation/>", .device)
        XCTAssertEqual(info.descendant("SerialNumber")?.text, "abc123")
        XCTAssertEqual(info.descendant("Manufacturer")?.text, "KioskCam")
        let (_, services) = try answer("<tds:GetServices><tds:IncludeCapability>false</tds:IncludeCapability></tds:GetServices>", .device)
        let addresses = services.descendant("GetServicesResponse")?.children.map { ($0.child("Namespace")?.text ?? "", $0.child("XAddr")?.text ?? "") }
        XCTAssertEqual(addresses?.first?.1, "https://192.168.1.5:8443/onvif/device_service")
        XCTAssertEqual(addresses?.last?.0, ONVIFService.Namespace.media)
        let (_, capabilities) = try answer("<tds:GetCapabilities/>", .device)
        XCTAssertEqual(capabilities.descendant("Media")?.child("XAddr")?.text, "https://192.168.1.5:8443/onvif/media_service")
        let (_, time) = try answer("<tds:GetSystemDateAndTime/>", .device)
        XCTAssertEqual(time.descendant("Year")?.text, "2027")
        let (_, scopes) = try answer("<tds:GetScopes/>", .device)
        XCTAssertTrue(scopes.descendant("GetScopesResponse")?.children.contains { $0.child("ScopeItem")?.text == "onvif://www.onvif.org/name/KioskCam%20%3C1%3E" } == true)
        let (unknown, fault) = try answer("<tds:SystemReboot/>", .device)
        XCTAssertEqual(unknown, 500)
        XCTAssertEqual(fault.descendant("Subcode")?.child("Value")?.text, "ter:ActionNotSupported")
        let (_, wrongService) = try answer("<trt:GetProfiles/>", .device)
        XCTAssertNotNil(wrongService.descendant("Fault"), "media operations are not on the device service")
    }

    /// `Created` is read by arithmetic, not by Foundation's formatter (ICU): the same
    /// instants as that formatter for what clients send, nil for what is no xs:dateTime.
    func testCreatedTimesReadAsFoundationReadsThem() throws {
        let plain = ISO8601DateFormatter()
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for text in ["2026-11-28T19:00:00Z", "1970-01-01T00:00:00Z", "2024-02-29T23:59:59Z", "1969-12-31T23:59:59Z",
                     "2026-11-28T19:00:00+01:00", "2026-11-28T19:00:00-05:30", "2000-03-01T00:00:00+14:00",
                     "2026-11-28T19:00:00.5Z", "2026-11-28T19:00:00.123Z", "2026-06-30T12:34:56.789+02:00"] {
            let foundation = try XCTUnwrap(plain.date(from: text) ?? fractional.date(from: text), text)
            let ours = try XCTUnwrap(ONVIFTime.parse(text), text)
            XCTAssertEqual(ours.timeIntervalSince1970, foundation.timeIntervalSince1970, accuracy: 0.001, text)
        }
        for text in ["", "2026-11-28", "2026-11-28T19:00:00", "2026-11-28 19:00:00Z", "2026-02-29T00:00:00Z",
                     "2026-13-01T00:00:00Z", "2026-11-31T00:00:00Z", "2026-11-28T24:00:00Z", "2026-11-28T19:60:00Z",
                     "2026-11-28T19:00:60Z", "2026-11-28T19:00:00.Z", "2026-11-28T19:00:00+0100", "2026-11-28T19:00:00+01",
                     "2026-11-28T19:00:00Zjunk", "+026-11-28T19:00:00Z", "２０２６-11-28T19:00:00Z", "2026-11-28T19:00:00+24:00"] {
            XCTAssertNil(ONVIFTime.parse(text), text)
        }
    }

    /// The answer clients sign their tokens with: the camera's clock in UTC.
    func testTheSystemDateAndTimeIsUTC() throws {
        let now = try XCTUnwrap(ONVIFTime.parse("2026-03-29T01:02:03Z"))
        guard case .success(let request) = ONVIFService.request(envelope("<tds:GetSystemDateAndTime/>")) else {
            return XCTFail("GetSystemDateAndTime is not read as a request")
        }
        let xml = ONVIFService.answer(request, endpoint: .device, device: device, now: now).xml
        for part in ["<tt:Hour>1</tt:Hour>", "<tt:Minute>2</tt:Minute>", "<tt:Second>3</tt:Second>",
                     "<tt:Year>2026</tt:Year>", "<tt:Month>3</tt:Month>", "<tt:Day>29</tt:Day>"] {
            XCTAssertTrue(xml.contains(part), part)
        }
    }

    func testTheUsernameTokenAndItsDigest() throws {
        let created = "2026-11-28T19:00:00Z"
        let nonce = Data([1, 2, 3, 4]).base64EncodedString()
        let header = """
            <wsse:Security><wsse:UsernameToken><wsse:Username>nvr</wsse:Username>\
            <wsse:Password Type="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0#PasswordDigest">D</wsse:Password>\
            <wsse:Nonce>\(nonce)</wsse:Nonce><wsu:Created>\(created)</wsu:Created></wsse:UsernameToken></wsse:Security>
            """
        let token = try XCTUnwrap(ONVIFUsernameToken(envelope: envelope("<tds:GetScopes/>", header: header)))
        XCTAssertEqual(token.user, "nvr")
        XCTAssertTrue(token.isDigest)
        XCTAssertEqual(token.nonce, [1, 2, 3, 4])
        let created1 = try XCTUnwrap(ONVIFTime.parse(created))
        XCTAssertTrue(token.isFresh(now: created1.addingTimeInterval(299)))
        XCTAssertFalse(token.isFresh(now: created1.addingTimeInterval(301)))
        // nonce + created + password, in that order (the hash stands in for SHA-1).
        XCTAssertEqual(token.expectedDigest(password: "pw") { $0 }, Data([1, 2, 3, 4] + Array(created.utf8) + Array("pw".utf8)).base64EncodedString())
        XCTAssertNil(ONVIFUsernameToken(envelope: envelope("<tds:GetScopes/>")), "no header, no token")
        let text = header.replacingOccurrences(of: "#PasswordDigest", with: "#PasswordText")
        XCTAssertEqual(ONVIFUsernameToken(envelope: envelope("<tds:GetScopes/>", header: text))?.isDigest, false)
        let badName = header.replacingOccurrences(of: ">nvr<", with: ">a b<")
        XCTAssertNil(ONVIFUsernameToken(envelope: envelope("<tds:GetScopes/>", header: badName)))
    }

    /// A Probe's source address is the sender's word: answers are rationed, so a flood of
    /// forged probes gets 20 answers at once and then 10 a second, never more.
    func testDiscoveryAnswersAreRationed() {
        var budget = DiscoveryAnswerBudget.standard
        XCTAssertEqual((0..<1000).filter { _ in budget.take(now: 100) }.count, 20, "a burst of 20")
        XCTAssertEqual(budget.refused, 980)
        XCTAssertEqual((0..<1000).filter { _ in budget.take(now: 100.5) }.count, 5, "then 10 a second")
        XCTAssertEqual((0..<1000).filter { _ in budget.take(now: 99) }.count, 0, "a clock that steps back gives nothing back")
        XCTAssertEqual((0..<1000).filter { _ in budget.take(now: 200) }.count, 20, "a quiet minute refills only the burst")
    }

    func testDiscoveryAnswersMatchingProbesOnly() throws {
        let probe = """
            <a:MessageID xmlns:a="http://schemas.xmlsoap.org/ws/2004/08/addressing">urn:uuid:42</a:MessageID>
            """
        let types = { (types: String) in
            self.envelope("<d:Probe xmlns:d=\"http://schemas.xmlsoap.org/ws/2005/04/discovery\" xmlns:dn=\"http://www.onvif.org/ver10/network/wsdl\"><d:Types>\(types)</d:Types></d:Probe>", header: probe)
        }
        XCTAssertEqual(WSDiscovery.matchingProbe(types("dn:NetworkVideoTransmitter")), "urn:uuid:42")
        XCTAssertEqual(WSDiscovery.matchingProbe(types("")), "urn:uuid:42")
        XCTAssertEqual(WSDiscovery.matchingProbe(types("tds:Device")), "urn:uuid:42")
        XCTAssertNil(WSDiscovery.matchingProbe(types("dp0:Printer")))
        let match = WSDiscovery.probeMatch(relatesTo: "urn:uuid:42", messageID: "urn:uuid:43", device: device)
        guard case .success(let parsed) = SOAPParser.parse(Array(match.utf8)) else { return XCTFail(match) }
        XCTAssertEqual(parsed.descendant("RelatesTo")?.text, "urn:uuid:42")
        XCTAssertEqual(parsed.descendant("XAddrs")?.text, "https://192.168.1.5:8443/onvif/device_service")
        XCTAssertEqual(parsed.descendant("Address")?.text, device.endpointReference)
        XCTAssertTrue(device.endpointReference.hasPrefix("urn:uuid:"))
        XCTAssertEqual(device.endpointReference.count, 45)
        XCTAssertEqual(device.endpointReference, ONVIFDevice(name: "x", firmwareVersion: "", serialNumber: "abc123", baseURL: "", streams: []).endpointReference,
                       "the same device id, the same endpoint at every start")
        for text in [WSDiscovery.hello(messageID: "urn:uuid:1", device: device), WSDiscovery.bye(messageID: "urn:uuid:2", device: device)] {
            if case .failure(let error) = SOAPParser.parse(Array(text.utf8)) { XCTFail("\(error): \(text)") }
        }
    }

    /// Fuzz/FuzzONVIF: a namespace prefix and URI that are not UTF-8 made Foundation's
    /// parser trap (a force-unwrapped String of libxml2's bytes) — a daemon crash from one
    /// POST. Such a message is refused before the parser sees it.
    func testBytesThatAreNotUTF8AreRefusedNotParsed() {
        let finding = Data(base64Encoded: "PD94bWwgdmVyM2lvbj0iMS4wIiBlbmNvZGluZz0iVVRGLTgiPz4KPHM6RW52ZWxvcGUgeG1sbnM6cz0iaHR0cDovL3d3dy53My5vLVRQMjAwMy8wNS9zb2FwLWVudmVsb3BlIiB4bWxuczphPSJodHRwOi8vc2NoZW1hcy54bWxzb2FwLm9yZy93cy8yMDA0LzA4L2FkZHJlc3NpbmciIHhtbG5zOuQ9Imh0dHBzOmMvL2hlbWFzLnhtbHNvYXAub3JnL3dzLzIwMDUvMDQvZGlzY292ZXJ5IiB4bWxuczpkbj0iaHR0cDovL3d3dy5vbnZp2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjYZi5vcmcvdmVyMTAvbmV0d29yay93c2RsIj48czpIZWFkZXI+PGE6TWVzc2FnZUlEPnVybjp1dWlkOjEyMzQ8L2E6TWVzc2FnZUlEPjxhOlRvPnVybjpzY2hlbWFzLXhtbHNvYXAtb3JnOndzOjIwMDU6MDQ6ZGlzY292ZXJ5PC9hOlRvPjxhOkFjdGlvbj5odHRwOi8vc2NoZW1hcy54bWxzb2FwLm9yZy93cy8yMDA1LzA0L2Rpc2NvdmVyeS9Qcm9iZTwvYTpBY3Rpb24+PC9zOkhlYWRlcj48czpCb2R5PjxkOlByb2JlPjxkOlR5cGVzPmRuOk5ldHdvcmtWaWRlb1RyYW5zbWl0dGVyPC9kOlR5cGVzPjwvZDpQcm9iZT48L3M6Qm9keT48L3M6RW52ZWxvcGU+Cg==")!
        guard case .failure(let error) = SOAPParser.parse(Array(finding)) else { return XCTFail("parsed") }
        XCTAssertTrue(error.description.contains("not UTF-8"), error.description)
        if case .success = SOAPParser.parse(Array("<a xmlns:\u{0}=\"x\"/>".utf8)) { XCTFail("a NUL was parsed") }
    }

    /// Fuzz/FuzzONVIF: a processing instruction without data (`<?xersio?>`) made
    /// Foundation's parser call strlen(NULL). Processing instructions other than the XML
    /// declaration are refused (SOAP forbids them); the reader is libxml2 itself now.
    func testProcessingInstructionsAreRefused() {
        let finding = Data(base64Encoded: "PD94ZXJzaW8/Pgo8czpFbnZlbD0iMS4wPD94bWwgdmVyc2lvbj0iMS4wIiBlbmNvZGluZz0iVVRGLTgiPz4KPHM6RW52ZWxvcGUgeG1sbnM6cz0iaHR0cDovL3d3dy53My5vcmcvMjAwMy8wNS9zb2FwLWVudmVsb3BlIiB4bWxuczphPSJodHRwOi8vc2NoZW08P3htbCB2ZXJzaW9uPSIxLjAiIGVuY29kaW5nbjw/eE1sIHZlcnNpb249IjEuMCIgZW5jb2Rpbmc9Ij1URi04Ij8+CjxzOkVudmVsPSIxLjA8P3htbCB2ZXJzaW9uPSIxLjAiIGVuY29kaW5nPSJVVEYtOCI/Pgo8czpFbnZlbG9wZSB4bWxuczpzPSJodHRwOi8vd3d3LnczLm9yZy8yMDAzLzA1L3NvYXAtZW52ZWxvcGUiIHhtbG5zOmE9Imh0dHA6Ly9zY2hlbTw/eG1sIHZlcnNpb249IjEuMCIgZW5jb2Rpbmc9IlVURi04Ij8+CjxzOkVudmVsb3BlIHhtbG5zOnM9Imh0LzIwMDMvMCIgZW5jb2Q1L3NvYXAtZWluZw==")!
        guard case .failure(let error) = SOAPParser.parse(Array(finding)) else { return XCTFail("parsed") }
        XCTAssertTrue(error.description.contains("processing instruction"), error.description)
        if case .success = SOAPParser.parse(Array("<a><?pi?></a>".utf8)) { XCTFail("a processing instruction was parsed") }
        if case .failure(let error) = SOAPParser.parse(Array("\u{FEFF}<?xml version=\"1.0\"?>\n<a>x</a>".utf8)) {
            XCTFail("a declaration after a byte-order mark is fine: \(error)")
        }
    }

    func testXMLTextEscapes() {
        XCTAssertEqual(XMLText.escape("a<b>&\"'\u{1}c"), "a&lt;b&gt;&amp;&quot;&apos;c")
    }
}
