import Foundation
import Glibc
import KioskCore
import KioskSOAP
import Logging
import NIOCore
import NIOPosix

/// WS-Discovery for ONVIF (`[onvif] discovery`): on the web server's event loop, a UDP
/// socket on port 3702 in the multicast group 239.255.255.250 answers matching Probes
/// with a ProbeMatch to the sender (its XAddrs on the address that sender reaches us
/// at), and the camera says Hello when it starts and Bye when it stops. Answers are
/// rationed (`DiscoveryAnswerBudget`): a forged source must not make it an amplifier.
public final class ONVIFDiscovery: Sendable {
    private let device: @Sendable (_ host: String) -> ONVIFDevice?
    private let eventLoops: any EventLoopGroup
    private let logger: Logger
    private let channel = Locked<(any Channel)?>(nil)
    private let answered = Locked(0)
    private let budget = Locked(DiscoveryAnswerBudget.standard)

    init(eventLoops: any EventLoopGroup, logger: Logger, device: @escaping @Sendable (_ host: String) -> ONVIFDevice?) {
        self.eventLoops = eventLoops
        self.device = device
        var logger = logger
        logger[metadataKey: "part"] = "onvif"
        self.logger = logger
    }

    /// Probes answered since start.
    public var probesAnswered: Int { answered.withLock { $0 } }

    /// Joins the group and says Hello.
    /// - Throws: When port 3702 cannot be bound (another ONVIF service on the board).
    public func start() async throws {
        let discovery = self
        let bound = try await DatagramBootstrap(group: eventLoops)
            .channelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ProbeHandler(discovery: discovery))
                }
            }
            .bind(host: "0.0.0.0", port: WSDiscovery.port).get()
        let group = try SocketAddress(ipAddress: WSDiscovery.multicastAddress, port: WSDiscovery.port)
        guard let multicast = bound as? MulticastChannel else {
            try? await bound.close()
            throw RTSPServerError("the discovery socket cannot join a multicast group", hint: "set [onvif] discovery = false")
        }
        try await multicast.joinGroup(group).get()
        channel.withLock { $0 = bound }
        announce(hello: true)
        logger.notice("onvif: answering WS-Discovery probes on UDP \(WSDiscovery.port)")
    }

    /// Says Bye and closes the socket.
    public func stop() async {
        announce(hello: false)
        let bound = channel.withLock { channel -> (any Channel)? in defer { channel = nil }; return channel }
        try? await Task.sleep(nanoseconds: 50_000_000)
        try? await bound?.close()
    }

    private func announce(hello: Bool) {
        guard let bound = channel.withLock({ $0 }), let group = try? SocketAddress(ipAddress: WSDiscovery.multicastAddress, port: WSDiscovery.port),
              let device = device(Self.localAddress(towards: WSDiscovery.multicastAddress) ?? "0.0.0.0") else { return }
        let id = "urn:uuid:" + UUID().uuidString.lowercased()
        let text = hello ? WSDiscovery.hello(messageID: id, device: device) : WSDiscovery.bye(messageID: id, device: device)
        bound.writeAndFlush(AddressedEnvelope(remoteAddress: group, data: ByteBuffer(string: text)), promise: nil)
    }

    fileprivate func probe(_ bytes: [UInt8], from sender: SocketAddress, channel: any Channel) {
        guard case .success(let envelope) = SOAPParser.parse(bytes), let messageID = WSDiscovery.matchingProbe(envelope),
              let senderAddress = sender.ipAddress,
              let device = device(Self.localAddress(towards: senderAddress) ?? "0.0.0.0") else { return }
        // UDP's source address is whatever the sender wrote: answers are rationed.
        guard budget.withLock({ $0.take(now: ProcessInfo.processInfo.systemUptime) }) else { return }
        answered.withLock { $0 += 1 }
        let reply = WSDiscovery.probeMatch(relatesTo: messageID, messageID: "urn:uuid:" + UUID().uuidString.lowercased(), device: device)
        channel.writeAndFlush(AddressedEnvelope(remoteAddress: sender, data: ByteBuffer(string: reply)), promise: nil)
    }

    /// Our address on the route to `peer` (a UDP socket connected there says which,
    /// without sending anything).
    static func localAddress(towards peer: String) -> String? {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_port = UInt16(WSDiscovery.port).bigEndian
        guard inet_pton(AF_INET, peer, &remote.sin_addr) == 1 else { return nil }
        let connected = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return nil }
        var local = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { return nil }
        var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
        guard inet_ntop(AF_INET, &local.sin_addr, &text, socklen_t(INET_ADDRSTRLEN)) != nil else { return nil }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// The discovery socket's incoming side: each datagram that is a matching Probe is answered.
private final class ProbeHandler: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>

    private let discovery: ONVIFDiscovery

    init(discovery: ONVIFDiscovery) { self.discovery = discovery }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var envelope = unwrapInboundIn(data)
        guard envelope.data.readableBytes <= SOAPParser.maximumBytes,
              let bytes = envelope.data.readBytes(length: envelope.data.readableBytes) else { return }
        discovery.probe(bytes, from: envelope.remoteAddress, channel: context.channel)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {}
}

/// The network interface an address belongs to, for ONVIF's GetNetworkInterfaces.
public enum NetworkInterfaceFacts {
    public static func lookup(ipv4 address: String) -> (name: String, hardwareAddress: String, prefixLength: Int)? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return nil }
        defer { freeifaddrs(list) }
        var cursor: UnsafeMutablePointer<ifaddrs>? = first
        while let entry = cursor {
            defer { cursor = entry.pointee.ifa_next }
            guard let socketAddress = entry.pointee.ifa_addr, socketAddress.pointee.sa_family == sa_family_t(AF_INET) else { continue }
            var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            let found = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { inet -> String? in
                var sinAddress = inet.pointee.sin_addr
                guard inet_ntop(AF_INET, &sinAddress, &text, socklen_t(INET_ADDRSTRLEN)) != nil else { return nil }
                return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
            guard found == address, let namePointer = entry.pointee.ifa_name else { continue }
            let name = String(cString: namePointer)
            var prefix = 24
            if let mask = entry.pointee.ifa_netmask {
                prefix = mask.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt32(bigEndian: $0.pointee.sin_addr.s_addr).nonzeroBitCount }
            }
            let mac = (try? String(contentsOfFile: "/sys/class/net/\(name)/address", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? "00:00:00:00:00:00"
            return (name, mac.isEmpty ? "00:00:00:00:00:00" : mac, prefix)
        }
        return nil
    }
}
