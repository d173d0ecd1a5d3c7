import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import HummingbirdWebSocket
import KioskCore
import KioskPIN
import KioskRecording
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import ServiceLifecycle

/// The web app in the daemon: HTTPS on its own event-loop thread (SwiftNIO), in front of
/// the control protocol. Blocking work (password hashes, the control handler, disk
/// listings, thumbnails) goes to threads of its own; the event loop only moves bytes, so a
/// request never holds up a media thread and a media thread never waits for the network.
public final class WebServer: Sendable {
    /// What `kioskcam status` and the screen show about the web app.
    public struct Facts: Sendable, Equatable {
        public var url: String
        public var fingerprint: String?
        public var users: Int
    }

    public let facts: Facts
    let configuration: Configuration.Web
    private let app: WebApp
    private let live: LiveStream?
    private let gate: WebGate
    private let connections: ConnectionCounter
    private let tlsConfiguration: TLSConfiguration?
    private let logger: Logger
    private let eventLoops: MultiThreadedEventLoopGroup

    /// Prepares the server: the certificate (made on the first start), the users' store.
    /// - Throws: `WebError` naming what is wrong — the certificate or key unreadable, the
    ///   state directory not writable — with the fix.
    public init(configuration: Configuration.Web, stateDirectory: String, deviceID: String?, backend: WebBackend,
                logger: Logger) throws(WebError) {
        self.configuration = configuration
        self.logger = logger
        let store = WebUserStore(directory: stateDirectory)
        gate = WebGate(store: store, logger: logger)
        connections = ConnectionCounter(limit: configuration.maxConnections)
        let certificate: WebCertificate?
        switch configuration.tls {
        case .off:
            certificate = nil
        case .selfSigned:
            certificate = try WebCertificate.selfSigned(stateDirectory: stateDirectory, deviceID: deviceID,
                                                        hostNames: [ProcessInfo.processInfo.hostName])
        case .files:
            guard let certFile = configuration.certFile, let keyFile = configuration.keyFile else {
                throw WebError("[web] tls = \"files\" needs cert_file and key_file", hint: "set both, or tls = \"self-signed\"")
            }
            certificate = try WebCertificate.load(certificatePath: certFile, keyPath: keyFile, hint: "")
        }
        if let certificate {
            var tls = TLSConfiguration.makeServerConfiguration(certificateChain: certificate.certificateChain.map { .certificate($0) },
                                                               privateKey: .privateKey(certificate.privateKey))
            tls.minimumTLSVersion = .tlsv12
            tlsConfiguration = tls
        } else {
            tlsConfiguration = nil
        }
        let host = configuration.listen.host == "0.0.0.0" || configuration.listen.host == "::"
            ? ProcessInfo.processInfo.hostName : configuration.listen.host
        let hostText = host.contains(":") ? "[\(host)]" : host
        facts = Facts(url: "\(certificate == nil ? "http" : "https")://\(hostText):\(configuration.listen.port)/",
                      fingerprint: certificate?.fingerprint, users: ((try? store.list()) ?? []).count)
        live = backend.live
        let gate = gate, connections = connections
        eventLoops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        app = WebApp(backend: backend, gate: gate, tls: certificate != nil, stateDirectory: stateDirectory, status: { [facts] in
            let figures = gate.figures
            return ["url": .string(facts.url), "fingerprint_sha256": facts.fingerprint.map(JSONValue.string) ?? .null,
                    "sessions": .integer(Int64(figures.sessions)), "login_failures": .integer(Int64(figures.failures)),
                    "logins_throttled": .integer(Int64(figures.refused)), "connections": .integer(Int64(connections.count)),
                    "connections_refused": .integer(Int64(connections.refusedTotal)),
                    "live_viewers": .integer(Int64(backend.live?.status.viewers ?? 0)),
                    "live_dropped_gops": .integer(Int64(backend.live?.status.droppedGOPs ?? 0))]
        }, logger: logger)
    }

    /// The RTSP server on this server's event loop, with its users and throttle.
    public func rtspServer(configuration: Configuration.RTSP, streams: [RTSPStreamPath: RTPStream], name: String) -> RTSPServer {
        RTSPServer(configuration: configuration, streams: streams, gate: gate, eventLoops: eventLoops, ownsEventLoops: false,
                   name: name, logger: logger)
    }

    /// WS-Discovery for ONVIF on this server's event loop.
    public func onvifDiscovery(device: @escaping @Sendable (_ host: String) -> ONVIFDevice?) -> ONVIFDiscovery {
        ONVIFDiscovery(eventLoops: eventLoops, logger: logger, device: device)
    }

    /// Users who can log in now (the file is read again: the CLI may have changed it).
    public var userCount: Int { gate.userCount }

    /// `ADDRESS:PORT`, for messages.
    public var listenAddress: String { configuration.listen.description }

    /// Login failures and throttled attempts since start, open sessions and connections.
    public var figures: (loginFailures: Int, loginsThrottled: Int, sessions: Int, connections: Int) {
        let gate = gate.figures
        return (gate.failures, gate.refused, gate.sessions, connections.count)
    }

    /// The server as a service of the daemon's `ServiceGroup`: it listens until shutdown.
    public func service(onListening: @escaping @Sendable (Int) -> Void = { _ in }) throws(WebError) -> any Service {
        let counter = connections
        let idle = TimeAmount.seconds(Int64(configuration.idleTimeoutSeconds))
        let http = HTTP1Channel.Configuration(
            additionalChannelHandlers: [ConnectionGate()],
            idleTimeout: idle,
            httpDecoderConfiguration: .init(maxHeaderFieldSize: 16 * 1024, maxHeaderListSize: 32 * 1024, maxHeaderFieldCount: 100))
        let gate = gate, live = live, tlsConfiguration = tlsConfiguration, socketLogger = logger
        let upgrade = HTTP1WebSocketUpgradeChannel.Configuration(
            http1: http, ws: .init(maxFrameSize: 16 * 1024, autoPing: .enabled(timePeriod: .seconds(10))))
        // Built by hand so that a `ConnectionWatch` sits in front of TLS on every connection.
        let server = HTTPServerBuilder { responder in
            let http = HTTP1WebSocketUpgradeChannel(responder: responder, configuration: upgrade) { request, channel, _ in
                LiveSocket.shouldUpgrade(request, channel: channel, gate: gate, live: live, tls: tlsConfiguration != nil,
                                         logger: socketLogger)
            }
            guard let tlsConfiguration else { return http.watched(counter: counter, headDeadline: idle) }
            do {
                return try TLSChannel(http, tlsConfiguration: tlsConfiguration).watched(counter: counter, headDeadline: idle)
            } catch {
                throw WebError("cannot set up TLS: \(error)", hint: "check [web] cert_file and key_file, or use tls = \"self-signed\"")
            }
        }
        var logger = logger
        logger[metadataKey: "part"] = "web"
        let listen = configuration.listen
        // Served without Hummingbird's `Application`: its Date-header cache builds a
        // Gregorian `Calendar`, which asks Foundation for the local time zone, and that
        // loads ICU's zone code and data (0.9 MiB resident) into the daemon for one header.
        let respond = WebResponding(app: app, logger: logger)
        do {
            return try server.buildServer(
                configuration: ServerConfiguration(address: .hostname(listen.host, port: listen.port), serverName: nil,
                                                   reuseAddress: true),
                eventLoopGroup: eventLoops, logger: logger,
                responder: { request, writer, channel in try await respond(request, writer, channel) },
                onServerRunning: { channel in onListening(channel.localAddress?.port ?? listen.port) })
        } catch let error as WebError {
            throw error
        } catch {
            throw WebError("cannot set up the web server: \(error)", hint: "check the [web] section of the configuration")
        }
    }
}

/// One request, as Hummingbird's `Application` answers it: the context, the app's
/// response (a 500 for an error the app did not turn into one), the Date header, the write.
private struct WebResponding: Sendable {
    let app: WebApp
    let logger: Logger

    /// The connection is closed without another response (as for a parse error while writing).
    struct ParseErrorWhileWriting: Error {}

    func callAsFunction(_ request: Request, _ writer: consuming ResponseWriter, _ channel: any Channel) async throws {
        var requestLogger = logger
        // RequestContext.id reads this key (and traps without it).
        requestLogger[metadataKey: "hb.request.id"] = .stringConvertible(RequestID())
        let context = WebContext(source: ApplicationRequestContextSource(channel: channel, logger: requestLogger))
        var response: Response
        do {
            response = try await app.respond(to: request, context: context)
        } catch let error as HTTPParserError {
            throw error     // HTTPChannelHandler answers 400 and closes
        } catch {
            requestLogger.debug("unhandled error: \(error)")
            response = Response(status: .internalServerError)
        }
        response.headers[.date] = httpDate(secondsSince1970: Int64(time(nil)))
        do {
            try await writer.write(response: response.head, body: response.body)
        } catch is HTTPParserError {
            throw ParseErrorWhileWriting()
        }
    }
}
