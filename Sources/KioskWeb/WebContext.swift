import Hummingbird
import NIOCore

/// The request context: Hummingbird's core storage plus the client's address, which the
/// login throttle counts by.
struct WebContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }

    /// The address as text without the port ("192.168.1.20", "::1").
    var clientAddress: String { remoteAddress?.ipAddress ?? "unknown" }
}
