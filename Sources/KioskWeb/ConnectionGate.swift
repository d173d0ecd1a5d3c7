import HTTPTypes
import HummingbirdCore
import KioskCore
import Logging
import NIOCore
import NIOHTTPTypes

/// Connections open at once, shared by every connection of one server: `limit` in all,
/// and a quarter of it (at least 4) from any one address but loopback.
final class ConnectionCounter: Sendable {
    let limit: Int
    private let counts = Locked((open: 0, refused: 0))
    private let perAddress: Locked<ConnectionsPerAddress>

    init(limit: Int) {
        self.limit = limit
        perAddress = Locked(ConnectionsPerAddress(limit: max(4, limit / 4)))
    }

    var count: Int { counts.withLock { $0.open } }
    var refusedTotal: Int { counts.withLock { $0.refused } + perAddress.withLock { $0.refused } }

    /// Counts a connection from `address`; false (not counted) when that address has its
    /// share open already.
    func enter(address: String) -> Bool { perAddress.withLock { $0.enter(address) } }

    func leave(address: String) { perAddress.withLock { $0.leave(address) } }

    /// Counts a new connection; returns whether it is within the limit.
    func enter() -> Bool {
        counts.withLock { counts in
            counts.open += 1
            if counts.open > limit { counts.refused += 1 }
            return counts.open <= limit
        }
    }

    func leave() { counts.withLock { $0.open -= 1 } }
}

/// The first handler of every connection, before TLS: it counts the connection and
/// closes it when no complete request head arrives in time — an idle socket, a TLS
/// handshake that never ends, a head dribbled a byte at a time (slowloris) — and, over
/// the limit, after a short grace. `ConnectionGate` (after the HTTP decoder) tells it
/// when a head arrived and an answer ended; a WebSocket, once upgraded, is left alone.
final class ConnectionWatch: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    private let counter: ConnectionCounter
    private let headDeadline: TimeAmount
    private(set) var overLimit = false
    private var counted = false
    /// The client's address, when counted against its share.
    private var countedAddress: String?
    private var upgraded = false
    private var deadline: Scheduled<Void>?

    init(counter: ConnectionCounter, headDeadline: TimeAmount) {
        self.counter = counter
        self.headDeadline = headDeadline
    }

    func handlerAdded(context: ChannelHandlerContext) {
        counted = true
        overLimit = !counter.enter()
        if !overLimit, let address = context.channel.remoteAddress?.ipAddress {
            if counter.enter(address: address) { countedAddress = address } else { overLimit = true }
        }
        arm(context.channel, after: overLimit ? .seconds(2) : headDeadline)
    }

    func handlerRemoved(context: ChannelHandlerContext) { release() }

    func channelInactive(context: ChannelHandlerContext) {
        release()
        context.fireChannelInactive()
    }

    /// A request head is complete: no deadline while it is answered.
    func headArrived() {
        deadline?.cancel()
        deadline = nil
    }

    /// An answer ended: the next head is due within the same time (a kept-alive socket).
    func answerEnded(_ channel: any Channel) {
        guard !upgraded, !overLimit else { return }
        arm(channel, after: headDeadline)
    }

    /// The connection became a WebSocket: its own pings keep it honest.
    func becameWebSocket() {
        upgraded = true
        deadline?.cancel()
        deadline = nil
    }

    private func release() {
        deadline?.cancel()
        deadline = nil
        if counted {
            counted = false
            counter.leave()
        }
        if let address = countedAddress {
            countedAddress = nil
            counter.leave(address: address)
        }
    }

    private func arm(_ channel: any Channel, after delay: TimeAmount) {
        deadline?.cancel()
        deadline = channel.eventLoop.scheduleTask(in: delay) { channel.close(promise: nil) }
    }
}

/// After the HTTP decoder: answers 503 to a connection over the limit, and tells the
/// `ConnectionWatch` when heads arrive and answers end.
final class ConnectionGate: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private var watch: ConnectionWatch?

    func handlerAdded(context: ChannelHandlerContext) {
        watch = try? context.pipeline.syncOperations.handler(type: ConnectionWatch.self)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        if case .head = part { watch?.headArrived() }
        guard watch?.overLimit == true else {
            context.fireChannelRead(data)
            return
        }
        guard case .end = part else { return }
        let body = #"{"error":{"code":"too_many_connections","message":"the camera serves this many connections at once already; close another tab or try again shortly"}}"#
        var head = HTTPResponse(status: .serviceUnavailable)
        head.headerFields[.contentType] = "application/json"
        head.headerFields[.contentLength] = String(body.utf8.count)
        head.headerFields[.connection] = "close"
        head.headerFields[.retryAfter] = "5"
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(context.channel.allocator.buffer(string: body))), promise: nil)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head) where head.status == .switchingProtocols: watch?.becameWebSocket()
        case .end: watch?.answerEnded(context.channel)
        default: break
        }
        context.write(data, promise: promise)
    }
}

/// A server child channel with a `ConnectionWatch` in front of everything (TLS included).
struct WatchedChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value
    let base: Base
    let counter: ConnectionCounter
    let headDeadline: TimeAmount

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let counter = counter, headDeadline = headDeadline
        return channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(ConnectionWatch(counter: counter, headDeadline: headDeadline), position: .first)
        }.flatMap { base.setup(channel: channel, logger: logger) }
    }

    func handle(value: Value, logger: Logger) async { await base.handle(value: value, logger: logger) }
}

extension ServerChildChannel {
    func watched(counter: ConnectionCounter, headDeadline: TimeAmount) -> any ServerChildChannel {
        WatchedChannel(base: self, counter: counter, headDeadline: headDeadline)
    }
}

