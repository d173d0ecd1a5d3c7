import HTTPTypes
import KioskCore
import NIOCore
import NIOHTTPTypes

/// Caps the connections open at once and the time a client may take to send its first
/// request. Over the cap, a client's request gets a clear 503 and the connection closes
/// (or, if it sends nothing, it is closed after a short grace). A client that dribbles a
/// request head (slowloris) is closed when the head is not complete in time, whatever
/// bytes trickle in meanwhile — the idle timeout alone would be reset by each byte.
final class ConnectionGate: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// Shared by every connection of one server.
    final class Counter: Sendable {
        let limit: Int
        private let open = Locked(0)
        private let refused = Locked(0)

        init(limit: Int) { self.limit = limit }

        var count: Int { open.withLock { $0 } }
        var refusedTotal: Int { refused.withLock { $0 } }

        /// Counts a new connection; returns whether it is within the limit.
        func enter() -> Bool {
            let within = open.withLock { count -> Bool in
                count += 1
                return count <= limit
            }
            if !within { refused.withLock { $0 += 1 } }
            return within
        }

        func leave() { open.withLock { $0 -= 1 } }
    }

    private let counter: Counter
    private let headDeadline: TimeAmount
    private var overLimit = false
    private var counted = false
    private var waitingForHead = true
    private var deadline: Scheduled<Void>?

    init(counter: Counter, headDeadline: TimeAmount) {
        self.counter = counter
        self.headDeadline = headDeadline
    }

    func handlerAdded(context: ChannelHandlerContext) {
        counted = true
        overLimit = !counter.enter()
        arm(context, after: overLimit ? .seconds(2) : headDeadline)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        if counted {
            counted = false
            counter.leave()
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        if counted {
            counted = false
            counter.leave()
        }
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        if overLimit {
            if case .end = part {
                let body = #"{"error":{"code":"too_many_connections","message":"the camera serves \#(counter.limit) connections at once; close another tab or try again shortly"}}"#
                var head = HTTPResponse(status: .serviceUnavailable)
                head.headerFields[.contentType] = "application/json"
                head.headerFields[.contentLength] = String(body.utf8.count)
                head.headerFields[.connection] = "close"
                head.headerFields[.retryAfter] = "5"
                context.write(wrapOutboundOut(.head(head)), promise: nil)
                context.write(wrapOutboundOut(.body(context.channel.allocator.buffer(string: body))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in context.close(promise: nil) }
            }
            return
        }
        if case .head = part, waitingForHead {
            waitingForHead = false
            deadline?.cancel()
            deadline = nil
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        // After a complete answer the next request head is due within the same deadline.
        if case .end = unwrapOutboundIn(data), !overLimit {
            waitingForHead = true
            arm(context, after: headDeadline)
        }
        context.write(data, promise: promise)
    }

    private func arm(_ context: ChannelHandlerContext, after delay: TimeAmount) {
        deadline?.cancel()
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        deadline = context.eventLoop.scheduleTask(in: delay) { [weak self] in
            guard let self, self.waitingForHead || self.overLimit else { return }
            loopBound.value.close(promise: nil)
        }
    }
}
