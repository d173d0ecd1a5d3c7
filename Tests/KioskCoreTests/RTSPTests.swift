import Foundation
import KioskCore
import XCTest

/// The RTSP server's pure parts: the request reader, the Transport header, the H.264
/// and AAC packetizers, the RTCP report, the SDP and the Digest header.
final class RTSPTests: XCTestCase {
    private func requests(_ inputs: [RTSPInput]) -> [RTSPRequest] {
        inputs.compactMap { if case .request(let request) = $0 { request } else { nil } }
    }

    func testRequestsArriveWhateverTheSplitAndInterleavedFramesBetweenThem() {
        let wire = Array("OPTIONS rtsp://cam:8554/live RTSP/1.0\r\nCSeq: 1\r\nUser-Agent: test\r\n\r\n".utf8)
            + [UInt8(ascii: "$"), 1, 0, 3, 9, 9, 9]
            + Array("SET_PARAMETER rtsp://cam:8554/live RTSP/1.0\r\nCSeq: 2\r\nContent-Length: 4\r\n\r\nabcd".utf8)
        for split in [1, 2, 7, 50, wire.count] {
            var parser = RTSPRequestParser()
            var inputs: [RTSPInput] = []
            var index = 0
            while index < wire.count {
                inputs += parser.feed(wire[index..<min(wire.count, index + split)])
                index += split
            }
            XCTAssertEqual(inputs.count, 3, "split \(split)")
            let found = requests(inputs)
            XCTAssertEqual(found.map(\.method), ["OPTIONS", "SET_PARAMETER"])
            XCTAssertEqual(found.map(\.cseq), [1, 2])
            XCTAssertEqual(found.first?.header("user-agent"), "test")
            XCTAssertEqual(found.last?.body, Array("abcd".utf8))
            XCTAssertEqual(inputs[1], .interleaved(channel: 1, bytes: [9, 9, 9]))
            XCTAssertEqual(parser.pendingBytes, 0)
        }
    }

    func testMalformedRequestsAreRefusedWithAStatusAndNothingAfter() {
        let cases: [(String, Int)] = [
            ("OPTIONS * RTSP/1.0\r\n\r\n", 400),                                        // no CSeq
            ("OPTIONS * RTSP/1.0\r\nCSeq: 99999999999999999999\r\n\r\n", 400),         // huge CSeq
            ("OPTIONS * RTSP/1.0\r\nCSeq: -1\r\n\r\n", 400),
            ("OPTIONS * HTTP/1.1\r\nCSeq: 1\r\n\r\n", 505),
            ("OPTIONS *\r\nCSeq: 1\r\n\r\n", 400),
            ("options * RTSP/1.0\r\nCSeq: 1\r\n\r\n", 400),
            ("OPTIONS * RTSP/1.0\r\nCSeq: 1\r\nno colon here\r\n\r\n", 400),
            ("OPTIONS * RTSP/1.0\r\nCSeq: 1\r\nContent-Length: 99999999\r\n\r\n", 413),
            ("OPTIONS * RTSP/1.0\r\nCSeq: 1\r\nContent-Length: x\r\n\r\n", 400),
        ]
        for (text, status) in cases {
            var parser = RTSPRequestParser()
            let inputs = parser.feed(Array(text.utf8) + Array("OPTIONS * RTSP/1.0\r\nCSeq: 5\r\n\r\n".utf8))
            XCTAssertEqual(inputs.count, 1, text)
            guard case .malformed(let got, let reason, _)? = inputs.first else { return XCTFail(text) }
            XCTAssertEqual(got, status, text)
            XCTAssertFalse(reason.isEmpty)
            XCTAssertEqual(parser.feed(Array("OPTIONS * RTSP/1.0\r\nCSeq: 6\r\n\r\n".utf8)), [], "nothing is read after a refusal")
        }
        // A line of 1 MiB is refused as soon as it passes the limit, not when it ends.
        var parser = RTSPRequestParser()
        let inputs = parser.feed([UInt8](repeating: UInt8(ascii: "A"), count: RTSPRequestParser.maximumLineBytes + 10))
        guard case .malformed(413, _, nil)? = inputs.first else { return XCTFail("\(inputs)") }
        // Too many headers; an interleaved frame bigger than any RTCP report.
        var headers = RTSPRequestParser()
        let many = "OPTIONS * RTSP/1.0\r\nCSeq: 1\r\n" + String(repeating: "X-A: b\r\n", count: 100) + "\r\n"
        guard case .malformed(400, _, _)? = headers.feed(Array(many.utf8)).first else { return XCTFail("headers") }
        var frame = RTSPRequestParser()
        guard case .malformed(413, _, _)? = frame.feed([UInt8(ascii: "$"), 0, 0xFF, 0xFF]).first else { return XCTFail("frame") }
    }

    func testTheCSeqIsKeptWhenTheRestIsWrong() {
        var parser = RTSPRequestParser()
        guard case .malformed(505, _, let cseq)? = parser.feed(Array("PLAY * RTSP/2.0\r\nCSeq: 7\r\n\r\n".utf8)).first else {
            return XCTFail()
        }
        XCTAssertEqual(cseq, 7)
        let response = String(decoding: RTSPResponse(status: 505).bytes(cseq: 7), as: UTF8.self)
        XCTAssertTrue(response.hasPrefix("RTSP/1.0 505 RTSP Version Not Supported\r\nCSeq: 7\r\n"), response)
    }

    func testResponseHeadersCannotCarryLineBreaks() {
        let response = RTSPResponse(status: 200, headers: [("X", "a\r\nInjected: yes")])
        let text = String(decoding: response.bytes(cseq: 1), as: UTF8.self)
        XCTAssertFalse(text.contains("\r\nInjected"), text)
    }

    func testPaths() {
        XCTAssertEqual(RTSPRequest.path(of: "rtsp://cam:8554/live"), "/live")
        XCTAssertEqual(RTSPRequest.path(of: "RTSP://user@cam/live/trackID=1?x=1"), "/live/trackID=1")
        XCTAssertEqual(RTSPRequest.path(of: "rtsp://cam:8554"), "/")
        XCTAssertEqual(RTSPRequest.path(of: "/live/"), "/live")
        XCTAssertEqual(RTSPRequest.path(of: "*"), "")
        XCTAssertTrue(RTSPStreamPath.parse("/live")! == (.live, nil))
        XCTAssertTrue(RTSPStreamPath.parse("/live/trackID=1")! == (.live, 1))
        XCTAssertTrue(RTSPStreamPath.parse("/sub/trackID=0")! == (.sub, 0))
        XCTAssertNil(RTSPStreamPath.parse("/live/trackID=2"))
        XCTAssertNil(RTSPStreamPath.parse("/live/../etc"))
        XCTAssertNil(RTSPStreamPath.parse("/other"))
    }

    func testTransportChoosesTheFirstUnicastOneServed() {
        XCTAssertEqual(RTSPTransport.choose(from: "RTP/AVP/TCP;unicast;interleaved=0-1", nextChannel: 0), .interleaved(rtp: 0, rtcp: 1))
        XCTAssertEqual(RTSPTransport.choose(from: "RTP/AVP/TCP;unicast", nextChannel: 2), .interleaved(rtp: 2, rtcp: 3))
        XCTAssertEqual(RTSPTransport.choose(from: "RTP/AVP;unicast;client_port=5000-5001", nextChannel: 0), .udp(rtpPort: 5000, rtcpPort: 5001))
        XCTAssertEqual(RTSPTransport.choose(from: "RTP/AVP;multicast;port=5000-5001,RTP/AVP/UDP;unicast;client_port=6000", nextChannel: 0),
                       .udp(rtpPort: 6000, rtcpPort: 6001))
        XCTAssertNil(RTSPTransport.choose(from: "RTP/AVP;unicast;client_port=70000-70001", nextChannel: 0))
        XCTAssertNil(RTSPTransport.choose(from: "RTP/AVP/TCP;interleaved=255-256", nextChannel: 0))
        XCTAssertNil(RTSPTransport.choose(from: "RAW/RAW/UDP;unicast;client_port=5000", nextChannel: 0))
        XCTAssertNil(RTSPTransport.choose(from: "", nextChannel: 0))
        let header = RTSPTransport.udp(rtpPort: 5000, rtcpPort: 5001).responseHeader(ssrc: 0xAB, serverPorts: (8000, 8001))
        XCTAssertEqual(header, "RTP/AVP;unicast;client_port=5000-5001;server_port=8000-8001;ssrc=000000AB")
        XCTAssertEqual(RTSPSessionHeader.id("12AB;timeout=60"), "12AB")
        XCTAssertNil(RTSPSessionHeader.id(String(repeating: "x", count: 100)))
    }

    /// Undoes RFC 6184 mode 1 (single, STAP-A, FU-A): what a client rebuilds.
    private func depacketize(_ payloads: [RTPPayload]) -> [[UInt8]] {
        var units: [[UInt8]] = []
        var fragment: [UInt8]?
        for payload in payloads {
            let bytes = payload.bytes
            switch bytes[0] & 0x1F {
            case 24:
                var offset = 1
                while offset + 2 <= bytes.count {
                    let size = Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
                    units.append(Array(bytes[(offset + 2)..<(offset + 2 + size)]))
                    offset += 2 + size
                }
            case 28:
                if bytes[1] & 0x80 != 0 { fragment = [(bytes[0] & 0xE0) | (bytes[1] & 0x1F)] }
                fragment? += bytes[2...]
                if bytes[1] & 0x40 != 0, let whole = fragment { units.append(whole); fragment = nil }
            default:
                units.append(bytes)
            }
        }
        return units
    }

    func testH264AccessUnitsComeBackWholeFromTheirPackets() {
        let sps: [UInt8] = [0x67, 0x64, 0x00, 0x1F, 0xAC, 0xD9]
        let pps: [UInt8] = [0x68, 0xEB, 0xE3, 0xCB]
        let idr: [UInt8] = [0x65] + (0..<5000).map { UInt8(truncatingIfNeeded: $0 * 7 + 1) }
        let delimiter: [UInt8] = [0x09, 0xF0]
        let unit = [0, 0, 0, 1] + delimiter + [0, 0, 1] + idr
        let payloads = unit.withUnsafeBytes { H264RTPPacketizer.payloads(accessUnit: $0, parameterSets: [sps, pps], maximumPayload: 1400) }
        XCTAssertTrue(payloads.allSatisfy { $0.bytes.count <= 1400 })
        XCTAssertEqual(payloads.filter(\.marker).count, 1)
        XCTAssertTrue(payloads.last?.marker == true)
        XCTAssertEqual(payloads.first?.bytes.first.map { $0 & 0x1F }, 24, "SPS and PPS in one STAP-A first")
        XCTAssertEqual(depacketize(payloads), [sps, pps, idr], "no delimiter; the IDR whole")

        // A picture that is not an IDR gets no parameter sets; a small one goes alone.
        let slice: [UInt8] = [0x41, 1, 2, 3]
        let small = ([0, 0, 1] + slice).withUnsafeBytes { H264RTPPacketizer.payloads(accessUnit: $0, parameterSets: [sps, pps]) }
        XCTAssertEqual(small, [RTPPayload(bytes: slice, marker: true)])
        // An IDR that carries its own SPS/PPS gets no second copy.
        let carried = ([0, 0, 1] + sps + [0, 0, 1] + pps + [0, 0, 1] + [0x65, 1]).withUnsafeBytes {
            H264RTPPacketizer.payloads(accessUnit: $0, parameterSets: [sps, pps])
        }
        XCTAssertEqual(depacketize(carried), [sps, pps, [0x65, 1]])
        // Garbage gives nothing, not a trap.
        XCTAssertEqual([UInt8](repeating: 0, count: 10).withUnsafeBytes { H264RTPPacketizer.payloads(accessUnit: $0, parameterSets: []) }, [])
    }

    func testParameterSetsFromEitherExtradataForm() {
        let sps: [UInt8] = [0x67, 0x42, 0xC0, 0x1E, 0x11]
        let pps: [UInt8] = [0x68, 0xCE, 0x3C, 0x80]
        XCTAssertEqual(H264RTPPacketizer.parameterSets(extradata: [0, 0, 0, 1] + sps + [0, 0, 0, 1] + pps), [sps, pps])
        let avcC = AVCConfiguration(profile: 0x42, compatibility: 0xC0, level: 0x1E, lengthSize: 4,
                                    sequenceParameterSets: [sps], pictureParameterSets: [pps]).bytes
        XCTAssertEqual(H264RTPPacketizer.parameterSets(extradata: avcC), [sps, pps])
        XCTAssertEqual(H264RTPPacketizer.parameterSets(extradata: []), [])
    }

    func testAACFramesGetOneAUHeader() {
        let frame: [UInt8] = Array(repeating: 0x21, count: 300)
        let payload = frame.withUnsafeBytes { AACRTPPacketizer.payload(frame: $0) }
        XCTAssertEqual(payload?.bytes.prefix(4), [0x00, 0x10, 0x09, 0x60])   // 16 bits of headers; 300 << 3
        XCTAssertEqual(payload?.bytes.count, 304)
        XCTAssertEqual(payload?.marker, true)
        XCTAssertNil([UInt8](repeating: 0, count: 9000).withUnsafeBytes { AACRTPPacketizer.payload(frame: $0) })
        XCTAssertNil([UInt8]().withUnsafeBytes { AACRTPPacketizer.payload(frame: $0) })
    }

    func testRTPHeaderAndSenderReport() {
        var bytes: [UInt8] = []
        RTPHeader.write(payloadType: 96, marker: true, sequence: 0x1234, timestamp: 0xDEADBEEF, ssrc: 0x01020304, into: &bytes)
        XCTAssertEqual(bytes, [0x80, 0xE0, 0x12, 0x34, 0xDE, 0xAD, 0xBE, 0xEF, 1, 2, 3, 4])
        let report = RTCPSenderReport.compound(ssrc: 7, ntpSeconds: 3_900_000_000.5, rtpTimestamp: 90_000, packets: 10, octets: 1000, cname: "cam")
        XCTAssertEqual(Array(report.prefix(4)), [0x80, 200, 0, 6])
        XCTAssertEqual(Array(report[8..<12]), [0xE8, 0x75, 0x47, 0x00], "NTP seconds")
        XCTAssertEqual(Array(report[12..<16]), [0x80, 0, 0, 0], "half a second")
        XCTAssertEqual(report[28], 0x81)
        XCTAssertEqual(report[29], 202)
        XCTAssertEqual(report.count % 4, 0)
        XCTAssertEqual(RTCPSenderReport.compound(ssrc: 1, ntpSeconds: .nan, rtpTimestamp: 0, packets: 0, octets: 0, cname: "").count % 4, 0)
        XCTAssertEqual(RTPClock(rate: 90_000, offset: 10).timestamp(nanosecondsSinceZero: 1_000_000_000), 90_010)
        XCTAssertEqual(RTPClock(rate: 90_000, offset: .max).timestamp(nanosecondsSinceZero: 1_000_000_000), 89_999, "wraps")
    }

    func testSDPSaysWhatClientsNeed() {
        let sps: [UInt8] = [0x67, 0x64, 0x00, 0x1F, 0xAC]
        let pps: [UInt8] = [0x68, 0xEB]
        let sdp = SDPDescription(video: .init(parameterSets: [sps, pps], width: 1280, height: 720, framesPerSecond: 30),
                                 audio: .init(sampleRate: 48_000, channels: 1, config: [0x11, 0x88]),
                                 name: "KioskCam\r\nx=evil", serverAddress: "192.168.1.5", sessionID: 42).text
        XCTAssertTrue(sdp.contains("m=video 0 RTP/AVP 96\r\na=rtpmap:96 H264/90000\r\n"), sdp)
        XCTAssertTrue(sdp.contains("profile-level-id=64001F"), sdp)
        XCTAssertTrue(sdp.contains("sprop-parameter-sets=Z2QAH6w=,aOs="), sdp)
        XCTAssertTrue(sdp.contains("a=rtpmap:97 mpeg4-generic/48000/1"), sdp)
        XCTAssertTrue(sdp.contains("mode=AAC-hbr;config=1188;sizelength=13;indexlength=3"), sdp)
        XCTAssertTrue(sdp.contains("a=control:trackID=1"), sdp)
        XCTAssertFalse(sdp.contains("\r\nx=evil"), "the name cannot add a line")
        XCTAssertTrue(sdp.hasSuffix("\r\n"))
    }

    func testDigestHeadersAreReadStrictly() throws {
        let header = #"Digest username="alice", realm="KioskCam", nonce="1a.ff", uri="rtsp://cam/live", response="ABCDEF", algorithm=SHA-256"#
        let digest = try XCTUnwrap(DigestAuthorization(header: header))
        XCTAssertEqual(digest.user, "alice")
        XCTAssertEqual(digest.algorithm, .sha256)
        XCTAssertEqual(digest.response, "abcdef")
        XCTAssertNil(digest.qop)
        XCTAssertEqual(DigestAuthorization(header: #"Digest username="a", realm="r", nonce="n", uri="u", response="x""#)?.algorithm, .md5)
        XCTAssertNil(DigestAuthorization(header: #"Digest username="a", realm="r", nonce="n", uri="u", response="x", algorithm=SHA-512"#))
        XCTAssertNil(DigestAuthorization(header: #"Digest username="a b", realm="r", nonce="n", uri="u", response="x""#))
        XCTAssertNil(DigestAuthorization(header: #"Digest username="a", realm="r", nonce="n", uri="u""#))
        XCTAssertNil(DigestAuthorization(header: #"Digest username="a, realm="r""#), "an unterminated quote")
        XCTAssertNil(DigestAuthorization(header: "Basic YTpi"))
        XCTAssertNil(DigestAuthorization(header: #"Digest username="a", realm="r", nonce="n", uri="u", response="x", qop=auth"#),
                     "qop without nc and cnonce")
        // The response is computed from the fields in RFC 7616's order (hash stands in for MD5).
        let plain = try XCTUnwrap(DigestAuthorization(header: #"Digest username="u", realm="r", nonce="N", uri="/p", response="x""#))
        XCTAssertEqual(plain.expectedResponse(ha1: "H1", method: "DESCRIBE") { "[\($0)]" }, "[H1:N:[DESCRIBE:/p]]")
        let qop = try XCTUnwrap(DigestAuthorization(header: #"Digest username="u", realm="r", nonce="N", uri="/p", response="x", qop=auth, nc=00000001, cnonce="C""#))
        XCTAssertEqual(qop.expectedResponse(ha1: "H1", method: "PLAY") { "[\($0)]" }, "[H1:N:00000001:C:auth:[PLAY:/p]]")
        XCTAssertTrue(DigestAuthorization.constantTimeEquals("abc", "abc"))
        XCTAssertFalse(DigestAuthorization.constantTimeEquals("abc", "abd"))
        XCTAssertFalse(DigestAuthorization.constantTimeEquals("abc", "ab"))
    }

    func testADigestSignsOnlyTheTargetItWasMadeFor() throws {
        func signed(_ uri: String) throws -> DigestAuthorization {
            try XCTUnwrap(DigestAuthorization(header: #"Digest username="u", realm="r", nonce="N", uri="\#(uri)", response="x""#))
        }
        // The form on the request line, absolute or path, either way round.
        XCTAssertTrue(try signed("rtsp://cam:8554/live/trackID=0").names(target: "rtsp://cam:8554/live/trackID=0"))
        XCTAssertTrue(try signed("/live").names(target: "rtsp://192.168.1.20:8554/live"))
        XCTAssertTrue(try signed("rtsp://cam/live").names(target: "/live"))
        XCTAssertTrue(try signed("/onvif/snapshot?profile=sub").names(target: "/onvif/snapshot?profile=sub"))
        XCTAssertTrue(try signed("rtsp://cam:8554").names(target: "/"))
        XCTAssertTrue(try signed("rtsp://cam:8554?x=1").names(target: "/?x=1"))
        XCTAssertTrue(try signed("*").names(target: "*"))
        // Another path, another query, a prefix, an empty one: refused.
        XCTAssertFalse(try signed("/onvif/snapshot").names(target: "/api/config"))
        XCTAssertFalse(try signed("/onvif/snapshot?profile=sub").names(target: "/onvif/snapshot?profile=main"))
        XCTAssertFalse(try signed("rtsp://cam/live").names(target: "rtsp://cam/live/trackID=0"))
        XCTAssertFalse(try signed("/live").names(target: "/live/"))
        XCTAssertFalse(try signed("").names(target: "/"))
        XCTAssertFalse(try signed("rtsp://cam/live").names(target: "*"))
        // RTSP: live555 (VLC) signs a track's SETUP with the stream's URL. A stream and its
        // tracks are one resource; the other stream is not.
        XCTAssertTrue(try signed("rtsp://cam:8554/live").namesStream(of: "rtsp://cam:8554/live/trackID=1"))
        XCTAssertTrue(try signed("rtsp://cam:8554/live/").namesStream(of: "rtsp://cam:8554/live"))
        XCTAssertTrue(try signed("rtsp://cam:8554/sub/trackID=0").namesStream(of: "rtsp://cam:8554/sub"))
        XCTAssertTrue(try signed("*").namesStream(of: "*"))
        XCTAssertFalse(try signed("rtsp://cam:8554/sub").namesStream(of: "rtsp://cam:8554/live/trackID=0"))
        XCTAssertFalse(try signed("rtsp://cam:8554/live").namesStream(of: "rtsp://cam:8554/sub"))
        XCTAssertFalse(try signed("rtsp://cam:8554/other").namesStream(of: "rtsp://cam:8554/other/trackID=0"))
        XCTAssertFalse(try signed("rtsp://cam:8554/live").namesStream(of: "*"))
        XCTAssertFalse(try signed("*").namesStream(of: "rtsp://cam:8554/live"))
    }

    func testRTSPKeysInTheConfiguration() throws {
        var configuration = Configuration()
        XCTAssertFalse(configuration.rtsp.enabled, "off until the owner turns it on")
        XCTAssertFalse(configuration.rtsp.allowAnonymous)
        XCTAssertFalse(configuration.rtsp.basicAuth)
        configuration = try Configuration(toml: "[rtsp]\nenabled = true\nlisten = \"127.0.0.1:9554\"\nudp_port = 0\n", file: "t.toml")
        XCTAssertEqual(configuration.rtsp.listen, WebListenAddress(host: "127.0.0.1", port: 9554))
        XCTAssertEqual(configuration.rtsp.udpPort, 0)
        XCTAssertThrowsError(try Configuration(toml: "[rtsp]\nlisten = \"cam:8554\"\n", file: "t.toml"))
        XCTAssertThrowsError(try Configuration(toml: "[rtsp]\nudp_port = 65535\n", file: "t.toml"))
        XCTAssertNil(configuration.rtsp.substreamSize, "no sub-stream unless asked for")
        XCTAssertEqual(try Configuration(toml: "[rtsp]\nsubstream = \"640x360\"\n", file: "t.toml").rtsp.substreamSize,
                       FrameSize(width: 640, height: 360))
        for bad in ["640", "641x360", "640x0", "4000x3000", "axb"] {
            XCTAssertThrowsError(try Configuration(toml: "[rtsp]\nsubstream = \"\(bad)\"\n", file: "t.toml"), bad)
        }
    }
}
