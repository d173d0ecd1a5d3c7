import Foundation
import KioskCore
import Logging
import KioskUpload
import KioskWeb
import ServiceLifecycle

// The daemon's services besides the appliance itself, each one a swift-service-lifecycle
// Service that ApplianceDaemon starts with the others and ends with them.

/// The uploader's thread as a service: stopped on shutdown (an upload in progress is cut
/// off and done again at the next start; the queue is saved).
struct UploadService: Service {
    let uploader: Uploader

    func run() async throws {
        uploader.start()
        try? await gracefulShutdown()
        await onBackgroundThread("kioskcam.upload-stop") { [uploader] in uploader.stop() }
    }
}

/// What the status report says about the web app: set once the server exists (it needs
/// the control handler, which reports on it).
final class WebFactsBox: Sendable {
    private let state = Locked<(web: WebServer?, error: String?)>((nil, nil))
    private let rtsp = Locked<(server: RTSPServer?, url: String?, error: String?)>((nil, nil, nil))

    func set(web: WebServer?, error: String?) { state.withLock { $0 = (web, error) } }
    func setError(_ error: String?) { state.withLock { $0.error = error } }
    func set(rtsp server: RTSPServer?, url: String?) { rtsp.withLock { $0 = (server, url, nil) } }
    func setRTSPError(_ error: String?) { rtsp.withLock { $0.error = error } }

    func fill(_ report: inout StatusReport) {
        let rtsp = rtsp.withLock { $0 }
        if let server = rtsp.server {
            report.rtspURL = rtsp.url
            report.rtspClients = server.clients.map {
                RTSPClientStatus(address: $0.address, user: $0.user, transport: $0.transport, path: $0.path,
                                 since: iso8601UTC(secondsSince1970: LocalZone.wholeSeconds($0.since)), bytes: $0.bytes, droppedGOPs: $0.droppedGOPs)
            }
        }
        report.rtspError = rtsp.error
        let (web, error) = state.withLock { $0 }
        if let web {
            report.webURL = web.facts.url
            report.webFingerprint = web.facts.fingerprint
            report.webUsers = web.userCount
            let figures = web.figures
            report.webLoginFailures = figures.loginFailures
            report.webLoginsThrottled = figures.loginsThrottled
        }
        report.webError = error
    }
}

/// WS-Discovery as a service: Hello at start, Bye at shutdown. A port already taken is
/// logged with its fix; the rest goes on.
struct ONVIFDiscoveryService: Service {
    let discovery: ONVIFDiscovery
    let logger: Logger

    func run() async throws {
        do {
            try await discovery.start()
        } catch {
            logger.error("onvif: WS-Discovery is off: \(error) (another ONVIF service on UDP 3702? set [onvif] discovery = false)")
            return
        }
        try? await gracefulShutdown()
        await discovery.stop()
    }
}

/// The RTSP server as a service: it listens until shutdown. A port already taken is
/// logged with its fix and shown in status; the rest of the appliance goes on.
struct RTSPService: Service {
    let server: RTSPServer
    let url: String
    let facts: WebFactsBox
    let logger: Logger

    func run() async throws {
        do {
            try await server.run { port in
                let udp = server.configuration.udpPort > 0 ? "UDP \(server.configuration.udpPort)-\(server.configuration.udpPort + 1)" : "TCP only"
                logger.notice("rtsp: listening on port \(port) (\(udp)): \(url)")
            }
        } catch {
            logger.error("rtsp stopped: \(error)")
            facts.setRTSPError("\(error)")
            try? await gracefulShutdown()
        }
    }
}

/// The web server as a service: it listens until shutdown. A port already taken is logged
/// with its fix and shown in status; the rest of the appliance goes on.
struct WebService: Service {
    let server: WebServer
    let facts: WebFactsBox
    let logger: Logger

    func run() async throws {
        do {
            let service = try server.service { port in
                let certificate = server.facts.fingerprint.map { " (certificate SHA-256 \($0))" } ?? ""
                logger.notice("web app listening on port \(port): \(server.facts.url)\(certificate)")
            }
            if server.userCount == 0 {
                logger.warning("web: no user exists, so nobody can log in: add one with `kioskcam web-user set NAME --role admin`")
            }
            try await service.run()
        } catch {
            let message = "\(error)".contains("ddress already in use")
                ? "port \(server.listenAddress) is taken by another program; set [web] listen to a free port"
                : "\(error)"
            logger.error("web app stopped: \(message)")
            facts.setError(message)
            try? await gracefulShutdown()
        }
    }
}
