import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import KioskCore
import KioskRecording
import Logging
import NIOCore

/// `/api/live`: the WebSocket a page's live video reads. The upgrade is allowed only with
/// a valid session cookie and a same-origin `Origin` (a foreign page cannot open it with
/// the user's cookie); otherwise the request goes on as plain HTTP and gets its 401/403.
///
/// Messages: one text message `{"mime": …}`, the init segment, then one binary message
/// per fragment. What the client sends is read and ignored (a close ends the viewer).
enum LiveSocket {
    static func shouldUpgrade(_ request: HTTPRequest, channel: any Channel, gate: WebGate, live: LiveStream?, tls: Bool,
                              logger: Logger) -> ShouldUpgradeResult<WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>> {
        guard request.path?.split(separator: "?").first == "/api/live", let live,
              let token = HTTPCredentials.cookie(WebSessionTable.cookieName, in: request.headerFields[.cookie]),
              let identity = gate.identity(token: token),
              WebOriginCheck.allows(origin: request.headerFields[.origin], host: request.authority, tls: tls),
              request.headerFields[.origin] != nil else {
            return .dontUpgrade
        }
        let address = channel.remoteAddress?.ipAddress ?? "unknown"
        // Called on the channel's event loop. The watch stops timing the connection: the
        // socket's own pings keep it honest from now on.
        (try? channel.pipeline.syncOperations.handler(type: ConnectionWatch.self))?.becameWebSocket()
        return .upgrade([:]) { inbound, outbound, _ in
            guard let viewer = live.join() else {
                try await outbound.close(.policyViolation, reason: "too many viewers; close another live page")
                return
            }
            logger.info("web: \(identity.user) watches live from \(address) (viewer \(viewer.id))")
            defer {
                live.leave(viewer)
                logger.info("web: viewer \(viewer.id) left (\(viewer.sentBytes) bytes sent, \(viewer.droppedGOPs) GOPs dropped)")
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    // Reading keeps pings and closes flowing; a malformed frame ends the socket,
                    // and so does any message: this socket only sends.
                    for try await _ in inbound {
                        try await outbound.close(.policyViolation, reason: "the live socket takes no messages")
                        return
                    }
                }
                group.addTask {
                    for await chunk in viewer.chunks {
                        if case .initSegment(let mime) = chunk.kind {
                            try await outbound.write(.text(JSONValue.object(["mime": .string(mime)]).description))
                        }
                        try await outbound.write(.binary(ByteBuffer(bytes: chunk.bytes)))
                        viewer.consumed(chunk)
                    }
                }
                try await group.next()
                group.cancelAll()
            }
        }
    }
}
