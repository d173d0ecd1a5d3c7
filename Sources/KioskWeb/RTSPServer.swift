import Crypto
import Foundation
import KioskCore
import KioskPIN
import KioskRecording
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle

/// The camera for NVRs and Home Assistant: an RTSP 1.0 server (RFC 2326) on the web app's
/// event loop, serving the one encode (`RTPStream`) to many clients over RTP in the TCP
/// connection or over UDP, with the web app's users (Digest; Basic when asked for).
///
/// The event loop only parses requests and moves bytes; password checks run on a thread
/// of their own. A client that stalls fills its own byte-bounded queue and loses GOPs;
/// the encoder, the recording and the other clients never wait for it.
public final class RTSPServer: Sendable {
    /// One client, for status and metrics.
    public struct ClientFacts: Sendable, Equatable {
        public var address: String
        public var user: String
        public var transport: String
        public var path: String
        public var since: Date
        public var bytes: Int64
        public var droppedGOPs: Int
    }

    public let configuration: Configuration.RTSP
    /// The streams by path: `/live` always, `/sub` when configured.
    let streams: [RTSPStreamPath: RTPStream]
    let gate: WebGate
    let logger: Logger
    let eventLoops: any EventLoopGroup
    let name: String
    private let ownsEventLoops: Bool

    struct Entry {
        var facts: ClientFacts
        var client: RTPStream.Client?
        var close: @Sendable () -> Void
    }

    private struct State {
        var connections: [Int: Entry] = [:]
        var nextID = 1
        var udp: (rtp: (any Channel)?, rtcp: (any Channel)?) = (nil, nil)
        var refused = 0
        var keepAliveFrom: [String: Double] = [:]
    }

    private let state = Locked(State())

    init(configuration: Configuration.RTSP, streams: [RTSPStreamPath: RTPStream], gate: WebGate, eventLoops: any EventLoopGroup, ownsEventLoops: Bool,
         name: String, logger: Logger) {
        self.configuration = configuration
        self.streams = streams
        self.gate = gate
        self.eventLoops = eventLoops
        self.ownsEventLoops = ownsEventLoops
        self.name = name
        var logger = logger
        logger[metadataKey: "part"] = "rtsp"
        self.logger = logger
    }

    /// A server with its own event loop and users' gate, for a daemon whose web app is off.
    public static func standalone(configuration: Configuration.RTSP, streams: [RTSPStreamPath: RTPStream], stateDirectory: String,
                                  name: String, logger: Logger) -> RTSPServer {
        RTSPServer(configuration: configuration, streams: streams, gate: WebGate(store: WebUserStore(directory: stateDirectory), logger: logger),
                   eventLoops: MultiThreadedEventLoopGroup(numberOfThreads: 1), ownsEventLoops: true, name: name, logger: logger)
    }

    /// The clients playing or set up now.
    public var clients: [ClientFacts] {
        state.withLock { state in
            state.connections.values.filter { $0.facts.transport != "" }.map { entry in
                var facts = entry.facts
                if let client = entry.client {
                    facts.bytes = client.sentBytes
                    facts.droppedGOPs = client.droppedGOPs
                }
                return facts
            }.sorted { $0.since < $1.since }
        }
    }

    /// Connections refused because `max_clients` played already, since start.
    public var refusedClients: Int { state.withLock { $0.refused } }

    /// Listens until shutdown.
    /// - Throws: When the TCP port or the UDP ports cannot be bound (the message names the key to change).
    public func run(onListening: @escaping @Sendable (Int) -> Void = { _ in }) async throws {
        let listen = configuration.listen
        let server = self
        let bootstrap = ServerBootstrap(group: eventLoops)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .serverChannelOption(ChannelOptions.backlog, value: 64)
            .childChannelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            // A small kernel send buffer: a stalled client then fills its own queue here
            // (bounded, GOPs dropped and counted) rather than megabytes of kernel memory.
            .childChannelOption(ChannelOptions.socketOption(.so_sndbuf), value: 128 * 1024)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(RTSPConnection(server: server))
                }
            }
        let listener: any Channel
        do {
            listener = try await bootstrap.bind(host: listen.host, port: listen.port).get()
        } catch {
            throw RTSPServerError("cannot listen on \(listen): \(error)", hint: "set [rtsp] listen to a free port")
        }
        if configuration.udpPort > 0 {
            do {
                let rtp = try await udpChannel(port: configuration.udpPort, rtcp: false)
                let rtcp = try await udpChannel(port: configuration.udpPort + 1, rtcp: true)
                state.withLock { $0.udp = (rtp, rtcp) }
            } catch {
                try? await listener.close()
                throw RTSPServerError("cannot bind UDP ports \(configuration.udpPort)-\(configuration.udpPort + 1): \(error)",
                                      hint: "set [rtsp] udp_port to a free pair, or 0 for RTP over TCP only")
            }
        }
        onListening(listener.localAddress?.port ?? listen.port)
        await withGracefulShutdownHandler {
            try? await listener.closeFuture.get()
        } onGracefulShutdown: {
            listener.close(promise: nil)
        }
        let (everyone, udp) = state.withLock { state in (state.connections.values.map(\.close), state.udp) }
        for close in everyone { close() }
        try? await udp.rtp?.close()
        try? await udp.rtcp?.close()
        if ownsEventLoops { try? await eventLoops.shutdownGracefully() }
    }

    private func udpChannel(port: Int, rtcp: Bool) async throws -> any Channel {
        let server = self
        return try await DatagramBootstrap(group: eventLoops)
            .channelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(RTCPReceiver(server: server, isRTCP: rtcp))
                }
            }
            .bind(host: configuration.listen.host, port: port).get()
    }

    // MARK: For the connections

    /// A new connection's id, or nil when there are too many connections already, in all
    /// or from `address` (half of `max_clients`, at least 4, but from loopback): one client
    /// holding sockets open must not shut out the NVRs.
    func register(address: String, close: @escaping @Sendable () -> Void) -> Int? {
        state.withLock { state in
            let fromThere = state.connections.values.filter { $0.facts.address == address }.count
            guard state.connections.count < configuration.maxClients * 2 + 4,
                  ConnectionsPerAddress.admits(address, alreadyOpen: fromThere, limit: max(4, configuration.maxClients / 2)) else {
                state.refused += 1
                return nil
            }
            let id = state.nextID
            state.nextID += 1
            state.connections[id] = Entry(facts: ClientFacts(address: address, user: "", transport: "", path: "", since: Date(),
                                                             bytes: 0, droppedGOPs: 0), client: nil, close: close)
            return id
        }
    }

    /// Whether one more client may set up (`max_clients` counts those with a transport).
    func admitSetup(id: Int) -> Bool {
        state.withLock { state in
            if state.connections[id]?.facts.transport != "" { return true }
            let playing = state.connections.values.filter { $0.facts.transport != "" }.count
            if playing >= configuration.maxClients {
                state.refused += 1
                return false
            }
            return true
        }
    }

    func update(id: Int, _ change: (inout Entry) -> Void) {
        state.withLock { state in
            guard var entry = state.connections[id] else { return }
            change(&entry)
            state.connections[id] = entry
        }
    }

    func unregister(id: Int) {
        let client = state.withLock { $0.connections.removeValue(forKey: id)?.client }
        if let client { for stream in streams.values { stream.leave(client) } }
    }

    /// The stream ended a client (the encoder's set-up changed): close its connection.
    public func streamEnded(_ client: RTPStream.Client) {
        let close = state.withLock { state in state.connections.values.first { $0.client === client }?.close }
        close?()
    }

    var udpChannels: (rtp: (any Channel)?, rtcp: (any Channel)?) { state.withLock { $0.udp } }

    /// RTCP from a UDP client counts as its keep-alive.
    func udpKeepAlive(from address: String) {
        let now = ProcessInfo.processInfo.systemUptime
        state.withLock { state in
            if state.keepAliveFrom.count > 256 { state.keepAliveFrom.removeAll() }
            state.keepAliveFrom[address] = now
        }
    }

    func lastUDPKeepAlive(from address: String) -> Double? { state.withLock { $0.keepAliveFrom[address] } }

}

/// Why the RTSP server cannot run, with the fix.
public struct RTSPServerError: Error, CustomStringConvertible {
    public let message: String
    public let hint: String

    init(_ message: String, hint: String) {
        self.message = message
        self.hint = hint
    }

    public var description: String { "\(message) (\(hint))" }
}

/// The UDP sockets' incoming side: RTCP receiver reports are keep-alives; anything else is dropped.
final class RTCPReceiver: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>

    private let server: RTSPServer
    private let isRTCP: Bool

    init(server: RTSPServer, isRTCP: Bool) {
        self.server = server
        self.isRTCP = isRTCP
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = unwrapInboundIn(data)
        guard isRTCP, let address = envelope.remoteAddress.ipAddress else { return }
        server.udpKeepAlive(from: address)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // An ICMP "port unreachable" from a client that went away: its session times out.
    }
}
