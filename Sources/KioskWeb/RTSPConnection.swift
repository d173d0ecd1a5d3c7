import Foundation
import KioskCore
import KioskPIN
import KioskRecording
import NIOCore

/// One RTSP client's TCP connection, on the event loop: requests in order (one at a time,
/// since a password check leaves the loop), its session and tracks, and — once it plays —
/// its RTP and RTCP, interleaved here or over the server's UDP sockets.
///
/// Over 400 lines as one thing: one client's RTSP state (OPTIONS → DESCRIBE → SETUP →
/// PLAY → TEARDOWN) on its channel; the message syntax, SDP, transports, digest and RTP
/// packetising are pure types in KioskCore/RTSP.
final class RTSPConnection: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    static let sessionTimeoutSeconds = 60.0
    /// How long a connection may go without a user when users are required: a client that
    /// never logs in holds one of its address's few connections no longer than this, however
    /// often it asks (an asking client is never idle). Long enough for a person to type a
    /// password into a player's prompt; live555 (VLC) reconnects if it takes longer.
    static let loginDeadlineSeconds = 30.0

    private struct Track {
        var transport: RTSPTransport
        var ssrc: UInt32
        var sequence: UInt16
        var payloadType: UInt8
        var clock: RTPClock
        var packets: UInt32 = 0
        var octets: UInt32 = 0
        var lastReport: Double?
        /// Where RTP and RTCP go over UDP (resolved once, at SETUP); nil when interleaved.
        var udpDestination: (rtp: SocketAddress, rtcp: SocketAddress)?
    }

    private let server: RTSPServer
    private var parser = RTSPRequestParser()
    private var context: ChannelHandlerContext?
    private var id: Int?
    private var address = "?"
    private var inbox: [RTSPRequest] = []
    private var busy = false
    private var closing = false
    private var identity: WebGate.Identity?
    private var sessionID: String?
    private var streamPath: RTSPStreamPath?
    private var generation: Int?
    private var tracks: [Int: Track] = [:]
    private var client: RTPStream.Client?
    /// The stream this connection set up (`/live` or `/sub`).
    private var rtp: RTPStream?
    private var lastActivity = ProcessInfo.processInfo.systemUptime
    /// When the connection was accepted (the handler is made for it then).
    private let connectedAt = ProcessInfo.processInfo.systemUptime
    private var keepAliveTimer: RepeatedTask?

    init(server: RTSPServer) { self.server = server }

    // MARK: The channel

    func channelActive(context: ChannelHandlerContext) {
        self.context = context
        let channel = context.channel
        address = channel.remoteAddress?.ipAddress ?? "?"
        guard let id = server.register(address: address, close: { channel.close(promise: nil) }) else {
            server.logger.warning("rtsp: refused a connection from \(address): too many connections")
            context.close(promise: nil)
            return
        }
        self.id = id
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        keepAliveTimer = context.eventLoop.scheduleRepeatedTask(initialDelay: .seconds(5), delay: .seconds(5)) { _ in
            bound.value.checkAlive()
        }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        keepAliveTimer?.cancel()
        keepAliveTimer = nil
        if let id { server.unregister(id: id) }
        if let client, let id { server.logger.info("rtsp: client \(id) (\(address)) left after \(client.sentBytes) bytes, \(client.droppedGOPs) GOPs dropped") }
        client = nil
        self.context = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        guard !closing, let bytes = buffer.readBytes(length: buffer.readableBytes) else { return }
        lastActivity = ProcessInfo.processInfo.systemUptime
        for input in parser.feed(bytes) {
            switch input {
            case .request(let request):
                inbox.append(request)
            case .interleaved:
                break   // the client's RTCP receiver reports: their arrival is the keep-alive
            case .malformed(let status, let reason, let cseq):
                server.logger.notice("rtsp: \(address) sent \(reason); answered \(status) and closed")
                inbox.removeAll()
                respond(RTSPResponse(status: status, body: Array("\(reason)\n".utf8)), cseq: cseq, thenClose: true)
                return
            }
        }
        if inbox.count > 32 {
            respond(RTSPResponse(status: 503, body: Array("too many requests in flight\n".utf8)), cseq: inbox.last?.cseq, thenClose: true)
            return
        }
        handleNext()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func checkAlive() {
        let now = ProcessInfo.processInfo.systemUptime
        if identity == nil, !server.configuration.allowAnonymous, now - connectedAt > Self.loginDeadlineSeconds, let context {
            server.logger.notice("rtsp: \(address) did not log in within \(Int(Self.loginDeadlineSeconds)) s; closed")
            context.close(promise: nil)
            return
        }
        var newest = lastActivity
        if tracks.values.contains(where: { if case .udp = $0.transport { true } else { false } }),
           let udp = server.lastUDPKeepAlive(from: address) {
            newest = max(newest, udp)
        }
        guard now - newest > Self.sessionTimeoutSeconds, let context else { return }
        server.logger.notice("rtsp: \(address)'s session timed out (nothing for \(Int(Self.sessionTimeoutSeconds)) s)")
        context.close(promise: nil)
    }

    // MARK: Requests

    private func handleNext() {
        guard !busy, !closing, !inbox.isEmpty else { return }
        let request = inbox.removeFirst()
        if identity == nil, !server.configuration.allowAnonymous {
            authenticate(request)
            return
        }
        answer(request)
        handleNext()
    }

    /// Checks the request's credentials off the loop, then answers it (or 401).
    private func authenticate(_ request: RTSPRequest) {
        let header = request.header("Authorization")
        let gate = server.gate, address = address
        let work: @Sendable () -> WebGate.LoginOutcome
        if let digest = DigestAuthorization(header: header) {
            guard digest.realm == WebUserDigests.realm, server.gate.nonceIsFresh(digest.nonce) else {
                challenge(request, stale: true)
                return
            }
            guard digest.namesStream(of: request.uri) else {
                server.logger.notice("rtsp: \(address) signed its Digest for \(digest.uri.prefix(200)), not for \(request.uri.prefix(200)): refused")
                challenge(request, stale: false)
                return
            }
            work = { gate.identity(digest: digest, method: request.method, address: address) }
        } else if server.configuration.basicAuth, let basic = HTTPCredentials.basic(header) {
            work = { gate.identity(basicUser: basic.user, password: basic.password, address: address) }
        } else {
            if header != nil { server.logger.notice("rtsp: \(address) sent credentials of a kind not offered") }
            challenge(request, stale: false)
            return
        }
        busy = true
        guard let eventLoop = context?.eventLoop else { return }
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        DispatchQueue.global().async {
            let outcome = work()
            eventLoop.execute {
                let connection = bound.value
                connection.busy = false
                switch outcome {
                case .accepted(let identity, _):
                    connection.identity = identity
                    if let id = connection.id { connection.server.update(id: id) { $0.facts.user = identity.user } }
                    connection.server.logger.info("rtsp: \(identity.user) connected from \(connection.address)")
                    connection.answer(request)
                case .throttled(let seconds):
                    connection.respond(RTSPResponse(status: 401, headers: connection.challenges(stale: false) + [("Retry-After", "\(seconds)")],
                                                    body: Array("too many wrong passwords; try again in \(seconds) s\n".utf8)),
                                       cseq: request.cseq)
                case .noUsers:
                    connection.respond(RTSPResponse(status: 401, headers: connection.challenges(stale: false),
                                                    body: Array("no user exists yet: make one on the camera with `kioskcam web-user set NAME --role admin`\n".utf8)),
                                       cseq: request.cseq)
                case .wrong, .unavailable:
                    connection.challenge(request, stale: false)
                }
                connection.handleNext()
            }
        }
    }

    private func challenges(stale: Bool) -> [(name: String, value: String)] {
        let nonce = server.gate.makeNonce()
        let staleText = stale ? ", stale=true" : ""
        var headers: [(name: String, value: String)] = [
            ("WWW-Authenticate", "Digest realm=\"\(WebUserDigests.realm)\", nonce=\"\(nonce)\", algorithm=SHA-256\(staleText)"),
            ("WWW-Authenticate", "Digest realm=\"\(WebUserDigests.realm)\", nonce=\"\(nonce)\", algorithm=MD5\(staleText)"),
        ]
        if server.configuration.basicAuth { headers.append(("WWW-Authenticate", "Basic realm=\"\(WebUserDigests.realm)\"")) }
        return headers
    }

    private func challenge(_ request: RTSPRequest, stale: Bool) {
        respond(RTSPResponse(status: 401, headers: challenges(stale: stale)), cseq: request.cseq)
    }

    private func answer(_ request: RTSPRequest) {
        switch request.method {
        case "OPTIONS":
            respond(RTSPResponse(status: 200, headers: [("Public", "OPTIONS, DESCRIBE, SETUP, PLAY, PAUSE, TEARDOWN, GET_PARAMETER, SET_PARAMETER")]),
                    cseq: request.cseq)
        case "DESCRIBE":
            describe(request, attempt: 0)
        case "SETUP":
            setup(request)
        case "PLAY":
            play(request)
        case "PAUSE":
            guard sessionMatches(request) else { return }
            stopPlaying()
            respond(RTSPResponse(status: 200, headers: sessionHeaders), cseq: request.cseq)
        case "TEARDOWN":
            guard sessionMatches(request) else { return }
            stopPlaying()
            let headers = sessionHeaders
            tracks.removeAll()
            sessionID = nil
            rtp = nil
            if let id { server.update(id: id) { $0.facts.transport = "" } }
            respond(RTSPResponse(status: 200, headers: headers), cseq: request.cseq)
        case "GET_PARAMETER", "SET_PARAMETER":
            // Keep-alives; no parameters are served or set.
            if request.header("Session") != nil, !sessionMatches(request) { return }
            respond(RTSPResponse(status: 200, headers: sessionHeaders), cseq: request.cseq)
        default:
            respond(RTSPResponse(status: 501, headers: [("Public", "OPTIONS, DESCRIBE, SETUP, PLAY, PAUSE, TEARDOWN, GET_PARAMETER")],
                                 body: Array("\(request.method) is not served: this camera only plays\n".utf8)), cseq: request.cseq)
        }
    }

    private var sessionHeaders: [(name: String, value: String)] {
        sessionID.map { [("Session", "\($0);timeout=\(Int(Self.sessionTimeoutSeconds))")] } ?? []
    }

    private func sessionMatches(_ request: RTSPRequest) -> Bool {
        guard let sessionID, RTSPSessionHeader.id(request.header("Session")) == sessionID else {
            respond(RTSPResponse(status: 454, body: Array("no such session on this connection\n".utf8)), cseq: request.cseq)
            return false
        }
        return true
    }

    /// The stream a path names, or an answer saying why not (nil).
    private func stream(of request: RTSPRequest) -> (stream: RTSPStreamPath, track: Int?, rtp: RTPStream)? {
        guard let parsed = RTSPStreamPath.parse(request.path) else {
            respond(RTSPResponse(status: 404, body: Array("no stream at \(request.path.prefix(100)); this camera serves /live\n".utf8)),
                    cseq: request.cseq)
            return nil
        }
        guard let rtp = server.streams[parsed.stream] else {
            respond(RTSPResponse(status: 404, body: Array("the sub-stream is off: set [rtsp] substream = \"640x360\" on the camera, or use /live\n".utf8)),
                    cseq: request.cseq)
            return nil
        }
        if let current = self.rtp, current !== rtp {
            respond(RTSPResponse(status: 455, body: Array("this connection set up another stream; TEARDOWN first\n".utf8)), cseq: request.cseq)
            return nil
        }
        return (parsed.stream, parsed.track, rtp)
    }

    /// The SDP once the encoder has set the tracks up (it is woken for this); 503 after 5 s.
    private func describe(_ request: RTSPRequest, attempt: Int) {
        guard let path = stream(of: request) else { return }
        guard let tracks = path.rtp.tracks else {
            path.rtp.warmUp()
            guard attempt < 50, let eventLoop = context?.eventLoop else {
                respond(RTSPResponse(status: 503, body: Array("the camera is not delivering pictures; see `kioskcam status`\n".utf8)),
                        cseq: request.cseq)
                return
            }
            busy = true
            let bound = NIOLoopBound(self, eventLoop: eventLoop)
            eventLoop.scheduleTask(in: .milliseconds(100)) {
                let connection = bound.value
                connection.busy = false
                connection.describe(request, attempt: attempt + 1)
                connection.handleNext()
            }
            return
        }
        path.rtp.warmUp()   // the SETUP and PLAY that follow find the encoder running
        let local = context?.channel.localAddress?.ipAddress ?? "0.0.0.0"
        let sdp = SDPDescription(video: tracks.video, audio: tracks.audio, name: server.name, serverAddress: local,
                                 sessionID: UInt64.random(in: 1 ... UInt64(Int64.max)))
        var base = request.uri
        while base.hasSuffix("/") { base.removeLast() }
        respond(RTSPResponse(status: 200, headers: [("Content-Base", base + "/"), ("Content-Type", "application/sdp")],
                             body: Array(sdp.text.utf8)), cseq: request.cseq)
        streamPath = path.stream
    }

    private func setup(_ request: RTSPRequest) {
        guard let path = stream(of: request) else { return }
        if let sessionID, let asked = RTSPSessionHeader.id(request.header("Session")), asked != sessionID {
            respond(RTSPResponse(status: 454, body: Array("one session per connection\n".utf8)), cseq: request.cseq)
            return
        }
        guard client == nil else {
            respond(RTSPResponse(status: 455, body: Array("already playing: TEARDOWN first\n".utf8)), cseq: request.cseq)
            return
        }
        guard let description = path.rtp.tracks else {
            path.rtp.warmUp()
            respond(RTSPResponse(status: 503, body: Array("the camera is not delivering pictures yet; DESCRIBE first\n".utf8)),
                    cseq: request.cseq)
            return
        }
        let track = path.track ?? 0
        guard track == 0 || description.audio != nil else {
            respond(RTSPResponse(status: 404, body: Array("this camera has no microphone: only trackID=0\n".utf8)), cseq: request.cseq)
            return
        }
        let used = tracks.values.compactMap { if case .interleaved(let rtp, _) = $0.transport { Int(rtp) } else { nil } }
        let next = UInt8(min(254, (used.max() ?? -2) + 2))
        guard let transport = RTSPTransport.choose(from: request.header("Transport") ?? "", nextChannel: next) else {
            respond(RTSPResponse(status: 461, headers: [("Transport", "RTP/AVP/TCP;unicast, RTP/AVP;unicast")],
                                 body: Array("unicast RTP/AVP over TCP (interleaved) or UDP only\n".utf8)), cseq: request.cseq)
            return
        }
        if case .udp = transport, server.udpChannels.rtp == nil {
            respond(RTSPResponse(status: 461, headers: [("Transport", "RTP/AVP/TCP;unicast")],
                                 body: Array("UDP is off on this camera ([rtsp] udp_port = 0): use TCP\n".utf8)), cseq: request.cseq)
            return
        }
        if case .interleaved(let rtp, let rtcp) = transport,
           tracks.contains(where: { $0.key != track && { if case .interleaved(let a, let b) = $0.value.transport { [a, b].contains(rtp) || [a, b].contains(rtcp) } else { false } }($0) }) {
            respond(RTSPResponse(status: 461, body: Array("interleaved channels \(rtp)-\(rtcp) are taken by the other track\n".utf8)),
                    cseq: request.cseq)
            return
        }
        guard let id, server.admitSetup(id: id) else {
            respond(RTSPResponse(status: 453, body: Array("\(server.configuration.maxClients) clients play already ([rtsp] max_clients)\n".utf8)),
                    cseq: request.cseq)
            return
        }
        if generation != nil, generation != description.generation { tracks.removeAll() }
        generation = description.generation
        let clock = track == 0 ? description.videoClock : (description.audioClock ?? description.videoClock)
        let ssrc = UInt32.random(in: 1 ... .max)
        var destination: (rtp: SocketAddress, rtcp: SocketAddress)?
        if case .udp(let rtpPort, let rtcpPort) = transport {
            guard let rtp = try? SocketAddress(ipAddress: address, port: Int(rtpPort)),
                  let rtcp = try? SocketAddress(ipAddress: address, port: Int(rtcpPort)) else {
                respond(RTSPResponse(status: 461, body: Array("cannot send UDP to \(address)\n".utf8)), cseq: request.cseq)
                return
            }
            destination = (rtp, rtcp)
        }
        tracks[track] = Track(transport: transport, ssrc: ssrc, sequence: UInt16.random(in: 0 ... .max),
                              payloadType: track == 0 ? SDPDescription.videoPayloadType : SDPDescription.audioPayloadType, clock: clock,
                              udpDestination: destination)
        if sessionID == nil { sessionID = (0..<8).map { _ in String(format: "%02X", UInt8.random(in: 0 ... .max)) }.joined() }
        streamPath = path.stream
        rtp = path.rtp
        let transportName = transport.name
        server.update(id: id) { $0.facts.transport = transportName; $0.facts.path = "/" + path.stream.rawValue }
        let ports = server.configuration.udpPort
        respond(RTSPResponse(status: 200, headers: sessionHeaders + [
            ("Transport", transport.responseHeader(ssrc: ssrc, serverPorts: (UInt16(clamping: ports), UInt16(clamping: ports + 1)))),
        ]), cseq: request.cseq)
    }

    private func play(_ request: RTSPRequest) {
        guard sessionMatches(request) else { return }
        guard !tracks.isEmpty, let context else {
            respond(RTSPResponse(status: 455, body: Array("SETUP a track first\n".utf8)), cseq: request.cseq)
            return
        }
        guard let rtp, generation == rtp.tracks?.generation else {
            respond(RTSPResponse(status: 455, headers: sessionHeaders, body: Array("the camera's format changed: DESCRIBE again\n".utf8)),
                    cseq: request.cseq)
            return
        }
        var base = request.uri
        while base.hasSuffix("/") { base.removeLast() }
        let info = tracks.keys.sorted().compactMap { key in tracks[key].map { "url=\(base)/trackID=\(key);seq=\($0.sequence)" } }
        respond(RTSPResponse(status: 200, headers: sessionHeaders + [("Range", "npt=0.000-"), ("RTP-Info", info.joined(separator: ","))]),
                cseq: request.cseq)
        guard client == nil else { return }
        let eventLoop = context.eventLoop
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        let client = rtp.join(wantsAudio: tracks[1] != nil) { unit in
            eventLoop.execute { bound.value.send(unit) }
        }
        self.client = client
        if let id { server.update(id: id) { $0.client = client } }
        server.logger.info("rtsp: \(identity?.user ?? "anonymous") plays /\(streamPath?.rawValue ?? "live") over \(tracks[0]?.transport.name ?? "?") from \(address)")
    }

    private func stopPlaying() {
        guard let client else { return }
        rtp?.leave(client)
        self.client = nil
        if let id { server.update(id: id) { $0.client = nil } }
    }

    // MARK: RTP out

    /// Writes one unit to the client (interleaved or UDP), then a sender report when due.
    private func send(_ unit: RTPUnit) {
        guard let client, let context, !closing else { return }
        let trackNumber = unit.media == .video ? 0 : 1
        guard var track = tracks[trackNumber] else {
            client.sent(bytes: unit.byteCount)
            return
        }
        let now = ProcessInfo.processInfo.systemUptime
        // The report goes first: a client that has one maps the first picture to the wall
        // clock at once (ffmpeg leaves the first packets untimed otherwise).
        if track.lastReport.map({ now - $0 >= 2 }) ?? true {
            track.lastReport = now
            sendReport(track, unit: unit)
        }
        switch track.transport {
        case .interleaved(let rtpChannel, _):
            var buffer = context.channel.allocator.buffer(capacity: unit.byteCount + 16)
            for payload in unit.payloads {
                let length = RTPHeader.size + payload.bytes.count
                guard length <= 0xFFFF else { continue }
                buffer.writeInteger(UInt8(ascii: "$"))
                buffer.writeInteger(rtpChannel)
                buffer.writeInteger(UInt16(length))
                writeHeader(&track, payload, unit.timestamp, into: &buffer)
                buffer.writeBytes(payload.bytes)
            }
            let bytes = unit.byteCount
            context.writeAndFlush(wrapOutboundOut(buffer)).whenComplete { _ in client.sent(bytes: bytes) }
        case .udp:
            guard let channel = server.udpChannels.rtp, let remote = track.udpDestination?.rtp else {
                client.sent(bytes: unit.byteCount)
                return
            }
            var last: EventLoopFuture<Void>?
            for payload in unit.payloads {
                var buffer = channel.allocator.buffer(capacity: RTPHeader.size + payload.bytes.count)
                writeHeader(&track, payload, unit.timestamp, into: &buffer)
                buffer.writeBytes(payload.bytes)
                last = channel.write(AddressedEnvelope(remoteAddress: remote, data: buffer))
            }
            channel.flush()
            let bytes = unit.byteCount
            if let last { last.whenComplete { _ in client.sent(bytes: bytes) } } else { client.sent(bytes: bytes) }
        }
        tracks[trackNumber] = track
    }

    private func writeHeader(_ track: inout Track, _ payload: RTPPayload, _ timestamp: UInt32, into buffer: inout ByteBuffer) {
        var header: [UInt8] = []
        header.reserveCapacity(RTPHeader.size)
        RTPHeader.write(payloadType: track.payloadType, marker: payload.marker, sequence: track.sequence, timestamp: timestamp,
                        ssrc: track.ssrc, into: &header)
        buffer.writeBytes(header)
        track.sequence &+= 1
        track.packets &+= 1
        track.octets &+= UInt32(truncatingIfNeeded: payload.bytes.count)
    }

    /// A sender report for the unit just sent: its RTP time on the wall clock (NTP), from
    /// the capture time, so that a client lines sound up with picture.
    private func sendReport(_ track: Track, unit: RTPUnit) {
        guard let context else { return }
        let age = rtp.map { Double($0.now().nanoseconds(since: unit.time)) / 1e9 } ?? 0
        let ntp = Date().timeIntervalSince1970 + 2_208_988_800 - max(0, age)
        let report = RTCPSenderReport.compound(ssrc: track.ssrc, ntpSeconds: ntp, rtpTimestamp: unit.timestamp, packets: track.packets,
                                               octets: track.octets, cname: "kioskcam@\(server.name)")
        switch track.transport {
        case .interleaved(_, let rtcpChannel):
            var buffer = context.channel.allocator.buffer(capacity: report.count + 4)
            buffer.writeInteger(UInt8(ascii: "$"))
            buffer.writeInteger(rtcpChannel)
            buffer.writeInteger(UInt16(report.count))
            buffer.writeBytes(report)
            context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
        case .udp:
            guard let channel = server.udpChannels.rtcp, let remote = track.udpDestination?.rtcp else { return }
            channel.writeAndFlush(AddressedEnvelope(remoteAddress: remote, data: channel.allocator.buffer(bytes: report)), promise: nil)
        }
    }

    // MARK: Responses

    private func respond(_ response: RTSPResponse, cseq: UInt32?, thenClose: Bool = false) {
        guard let context, !closing else { return }
        let buffer = context.channel.allocator.buffer(bytes: response.bytes(cseq: cseq))
        if thenClose {
            closing = true
            let channel = context.channel
            // Half-close, and read (and drop) what the client still sends for a second: a
            // full close with unread input would reset the connection, and the client
            // could lose the answer that says what was wrong.
            context.writeAndFlush(wrapOutboundOut(buffer)).whenComplete { _ in
                channel.close(mode: .output).whenFailure { _ in channel.close(promise: nil) }
                channel.eventLoop.scheduleTask(in: .seconds(1)) { channel.close(promise: nil) }
            }
        } else {
            context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
        }
    }
}
