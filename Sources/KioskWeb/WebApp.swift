import Foundation
import Glibc
import HTTPTypes
import Hummingbird
import KioskControl
import KioskCore
import KioskMedia
import KioskPIN
import KioskRecording
import Logging
import NIOCore

/// The web app's responder: match the route, authenticate, authorise, check the origin,
/// answer — each step a small function; the security headers go on every answer.
///
/// Over 400 lines as one thing: every route with its login, role and origin check is in
/// this one table, so a route without them stands out in review; the pages' assets, the
/// live view, HLS, ONVIF and the settings form are types of their own it calls.
struct WebApp: HTTPResponder {
    typealias Context = WebContext

    let backend: WebBackend
    let gate: WebGate
    let tls: Bool
    let status: @Sendable () -> [String: JSONValue]
    let logger: Logger
    let fileIO = FileIO()
    /// Native HLS of the live view (nil: no camera).
    let hls: LiveHLS?
    /// ONVIF's SOAP services (nil: off).
    let onvif: ONVIFResponder?

    init(backend: WebBackend, gate: WebGate, tls: Bool, stateDirectory: String, status: @escaping @Sendable () -> [String: JSONValue],
         logger: Logger) {
        self.backend = backend
        self.gate = gate
        self.tls = tls
        self.status = status
        self.logger = logger
        hls = backend.live.map { LiveHLS(stream: $0) }
        onvif = backend.onvifDevice.map { ONVIFResponder(gate: gate, stateDirectory: stateDirectory, device: $0, logger: logger) }
    }

    func respond(to request: Request, context: WebContext) async throws -> Response {
        var response = await answer(request, context: context)
        WebResponses.secure(&response, tls: tls)
        return response
    }

    private func answer(_ request: Request, context: WebContext) async -> Response {
        // ONVIF authenticates inside the SOAP message (WS-Security), not with a session.
        if let onvif, request.uri.path.hasPrefix("/onvif/") { return await onvif.respond(request, context: context) }
        let route: WebRoute
        switch WebRoute.match(method: request.method.rawValue, path: request.uri.path) {
        case .route(let matched): route = matched
        case .notFound: return WebResponses.error(.notFound, "not_found", "there is nothing at \(request.uri.path.prefix(100))")
        case .methodNotAllowed(let allowed):
            return WebResponses.error(.methodNotAllowed, "method_not_allowed", "use \(allowed.joined(separator: " or "))",
                                      headers: [.allow: allowed.joined(separator: ", ")])
        }
        var identity: WebGate.Identity?
        if case .user(let required) = route.access {
            switch await authenticate(request, context: context) {
            case .identity(let found): identity = found
            case .refused(let refusal):
                if case .page = route { return WebResponses.loginRedirect(next: request.uri.path) }
                if case .root = route { return WebResponses.loginRedirect(next: "/live") }
                return refusal
            }
            if let identity, !identity.role.allows(required) {
                return WebResponses.error(.forbidden, "forbidden", "\(identity.user) is a \(identity.role.rawValue); only an admin may do this")
            }
        }
        if route.changesState, !WebOriginCheck.allows(origin: request.headers[.origin], host: request.head.authority, tls: tls) {
            return WebResponses.error(.forbidden, "bad_origin", "the request came from another site's page (Origin does not match); open the app from its own address")
        }
        return await handle(route, request: request, context: context, identity: identity)
    }

    /// The session cookie, else Basic credentials (over TLS only).
    private func authenticate(_ request: Request, context: WebContext) async -> Authentication {
        if let token = HTTPCredentials.cookie(WebSessionTable.cookieName, in: request.headers[.cookie]),
           let identity = gate.identity(token: token) {
            return .identity(identity)
        }
        let authorization = request.headers[.authorization]
        if let (user, password) = HTTPCredentials.basic(authorization) {
            guard tls else {
                return .refused(WebResponses.error(.unauthorized, "tls_required",
                                                   "Basic credentials are accepted only over HTTPS; use https:// (or log in with a session)"))
            }
            let gate = gate, address = context.clientAddress
            let outcome = await onBackgroundThread("kioskcam.web.auth") { gate.identity(basicUser: user, password: password, address: address) }
            if case .accepted(let identity, _) = outcome { return .identity(identity) }
            return .refused(loginFailure(outcome, basic: true))
        }
        // HTTP Digest (RFC 7616) with the RTSP Digest keys: what ONVIF clients (Home
        // Assistant's) use for the snapshot URI. Over TLS only, like Basic.
        if let digest = DigestAuthorization(header: authorization), tls {
            if digest.realm == WebUserDigests.realm, gate.nonceIsFresh(digest.nonce), digest.names(target: request.head.path ?? "") {
                let gate = gate, address = context.clientAddress, method = request.method.rawValue
                let outcome = await onBackgroundThread("kioskcam.web.auth") { gate.identity(digest: digest, method: method, address: address) }
                if case .accepted(let identity, _) = outcome { return .identity(identity) }
                if case .throttled = outcome { return .refused(loginFailure(outcome, basic: true)) }
            }
        }
        // A browser (Sec-Fetch-Mode) gets no Basic challenge, or it would pop up its own dialog.
        var challenge = HTTPFields()
        if tls && request.headers[HTTPField.Name("Sec-Fetch-Mode")!] == nil {
            challenge.append(HTTPField(name: .wwwAuthenticate, value: "Digest realm=\"\(WebUserDigests.realm)\", nonce=\"\(gate.makeNonce())\", algorithm=MD5, qop=\"auth\""))
            challenge.append(HTTPField(name: .wwwAuthenticate, value: "Basic realm=\"KioskCam\", charset=\"UTF-8\""))
        }
        return .refused(WebResponses.error(.unauthorized, "login_required", "log in first (POST /api/login), or send Basic credentials over HTTPS",
                                           headers: challenge))
    }

    private func loginFailure(_ outcome: WebGate.LoginOutcome, basic: Bool) -> Response {
        switch outcome {
        case .accepted: return WebResponses.error(.internalServerError, "internal", "unexpected login state")
        case .wrong:
            return WebResponses.error(.unauthorized, "wrong_credentials", "wrong user name or password",
                                      headers: basic ? [.wwwAuthenticate: "Basic realm=\"KioskCam\", charset=\"UTF-8\""] : [:])
        case .throttled(let seconds):
            return WebResponses.error(.tooManyRequests, "throttled", "too many wrong passwords; try again in \(seconds) s",
                                      headers: [.retryAfter: String(seconds)])
        case .noUsers:
            return WebResponses.error(.unauthorized, "no_users",
                                      "no web user exists yet: on the device run `sudo kioskcam web-user set NAME --role admin`")
        case .unavailable(let reason):
            return WebResponses.error(.serviceUnavailable, "unavailable", "logins cannot be checked: \(reason)")
        }
    }

    enum Authentication {
        case identity(WebGate.Identity)
        case refused(Response)
    }

    // MARK: Routes

    private func handle(_ route: WebRoute, request: Request, context: WebContext, identity: WebGate.Identity?) async -> Response {
        switch route {
        case .root: return WebResponses.redirect("/live")
        case .loginPage: return asset("login.html")
        case .page(let page): return asset(page.rawValue + ".html")
        case .staticFile(let name): return asset(name, cache: true)
        case .loginInfo: return WebResponses.json(["setup_needed": .bool(!gate.hasUsers), "tls": .bool(tls)])
        case .login: return await login(request, context: context)
        case .logout:
            if let token = HTTPCredentials.cookie(WebSessionTable.cookieName, in: request.headers[.cookie]) { gate.logout(token: token) }
            var response = Response(status: .noContent)
            response.headers[.setCookie] = "\(WebSessionTable.cookieName)=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict" + (tls ? "; Secure" : "")
            return response
        case .me:
            return WebResponses.json(["user": .string(identity?.user ?? ""), "role": .string(identity?.role.rawValue ?? "")])
        case .status: return await statusAnswer(admin: identity?.role == .admin)
        case .library: return await library(request)
        case .events: return await events(request)
        case .media(let file): return await media(file, request: request, context: context)
        case .deleteMedia(let file): return await delete(file, identity: identity)
        case .thumbnail(let file): return await thumbnail(file)
        case .exportedClip(let name): return await exportedClip(name, request: request, context: context)
        case .snapshotJPEG: return await snapshotJPEG()
        case .live:
            return WebResponses.error(.badRequest, "websocket_required", "/api/live is a WebSocket: open it from the live page")
        case .livePlaylist, .liveInit, .liveSegment:
            return await hlsAnswer(route)
        case .recording, .snapshot, .event, .export:
            return await control(route, request: request, identity: identity)
        case .settings:
            return WebResponses.json(["settings": .object(WebSettings.values(of: backend.configuration())), "schema": .object(WebSettings.schema),
                                      "writable": .bool(backend.reload != nil)])
        case .changeSettings:
            return await changeSettings(request, identity: identity)
        }
    }

    private func asset(_ name: String, cache: Bool = false) -> Response {
        guard let file = WebAssets.file(name) else { return WebResponses.error(.notFound, "not_found", "no such file \(name)") }
        var headers: HTTPFields = [.contentType: file.contentType]
        headers[.cacheControl] = cache ? "public, max-age=300" : "no-store"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: file.body)))
    }

    private func login(_ request: Request, context: WebContext) async -> Response {
        guard let body = await bodyBytes(request) else {
            return WebResponses.error(.contentTooLarge, "too_large", "the body is larger than \(WebAPI.maximumBodyBytes) bytes")
        }
        guard case .success(let object) = WebAPI.parseObject(body), case .string(let user)? = object["user"],
              case .string(let password)? = object["password"], password.utf8.count <= WebPasswordPolicy.maximumLength else {
            return WebResponses.error(.badRequest, "bad_argument", #"send {"user": "…", "password": "…"}"#)
        }
        let gate = gate, address = context.clientAddress
        let outcome = await onBackgroundThread("kioskcam.web.login") { gate.login(user: user, password: password, address: address) }
        guard case .accepted(let identity, let token) = outcome else { return loginFailure(outcome, basic: false) }
        var response = WebResponses.json(["user": .string(identity.user), "role": .string(identity.role.rawValue)])
        response.headers[.setCookie] = "\(WebSessionTable.cookieName)=\(token); Path=/; HttpOnly; SameSite=Strict"
            + "; Max-Age=\(Int(WebSessionTable.standardAbsoluteSeconds))" + (tls ? "; Secure" : "")
        return response
    }

    /// What `kioskcam status` says, for the status page. A viewer gets it without the
    /// stream's and the broadcast's destinations and their errors: an RTMP key stands in
    /// the URL's path, and only admins may see `stream.url` (in the settings).
    private func statusAnswer(admin: Bool) async -> Response {
        let control = backend.control, status = status
        return await onBackgroundThread("kioskcam.web.status") {
            switch control.handle(.status) {
            case .success(var fields):
                if !admin {
                    for key in ["stream_destination", "stream_last_error", "broadcast"] { fields[key] = nil }
                }
                fields["web"] = .object(status())
                if let celsius = Self.temperatureCelsius() { fields["temperature_celsius"] = .number(celsius) }
                return WebResponses.json(fields)
            case .failure(let error):
                return WebResponses.outcome(.failure(error))
            }
        }
    }

    /// The SoC's temperature, where `/sys/class/thermal` has it.
    static func temperatureCelsius() -> Double? {
        guard let text = try? String(contentsOfFile: "/sys/class/thermal/thermal_zone0/temp", encoding: .utf8),
              let milli = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)), (-50_000...150_000).contains(milli) else { return nil }
        return Double(milli) / 1000
    }

    private func library(_ request: Request) async -> Response {
        let date: String?
        switch WebAPI.day(request.uri.queryParameters["date"].map(String.init)) {
        case .success(let day): date = day
        case .failure(let error): return WebResponses.outcome(.failure(error))
        }
        let layout = backend.layout
        return await onBackgroundThread("kioskcam.web.library") {
            let listing = LibraryListing(layout: layout)
            guard let date else {
                let days = listing.days().reversed().map { day -> JSONValue in
                    ["date": .string(day), "count": .integer(Int64(listing.recordings(on: day, probeMissing: false).count))]
                }
                return WebResponses.json(["days": .array(Array(days))])
            }
            let recordings = listing.recordings(on: date).compactMap { recording -> JSONValue? in
                let name = String(recording.path.split(separator: "/").last ?? "")
                guard let file = WebMediaPath(kind: recording.kind.rawValue, day: date, name: name) else { return nil }
                let label = LibraryLayout.eventLabel(ofFileName: name)
                return ["kind": .string(recording.kind.rawValue), "name": .string(name), "start": .string(recording.start),
                        "seconds": recording.seconds.map(JSONValue.number) ?? .null, "bytes": .integer(recording.bytes),
                        "url": .string(file.mediaURL), "thumbnail": .string(file.thumbnailURL), "file": .string(file.relative),
                        "event": .bool(label != nil), "trigger": label.map(JSONValue.string) ?? .null]
            }
            return WebResponses.json(["date": .string(date), "recordings": .array(recordings)])
        }
    }

    private func events(_ request: Request) async -> Response {
        let date: String?
        switch WebAPI.day(request.uri.queryParameters["date"].map(String.init)) {
        case .success(let day): date = day
        case .failure(let error): return WebResponses.outcome(.failure(error))
        }
        let log = EventLogFile(root: backend.layout.root)
        return await onBackgroundThread("kioskcam.web.events") {
            guard let date else { return WebResponses.json(["days": .array(log.days().reversed().map(JSONValue.string))]) }
            let events = log.listing(day: date).events.map { event -> JSONValue in
                func url(_ relative: String?) -> JSONValue {
                    guard let relative, let file = WebMediaPath(relative: relative) else { return .null }
                    return .string(file.mediaURL)
                }
                let start = LocalTimestamp(Date(timeIntervalSince1970: event.start)).readable
                return ["id": .string(event.id), "start": .string(start), "start_epoch": .number(event.start),
                        "seconds": event.end.map { .number(max(0, $0 - event.start)) } ?? .null,
                        "triggers": .array(event.triggers.map { .string($0.rawValue) }),
                        "clip": url(event.clip), "snapshot": url(event.snapshot), "peak": .number(event.peakScore),
                        "in_progress": .bool(event.end == nil)]
            }
            return WebResponses.json(["date": .string(date), "events": .array(events)])
        }
    }

    private func media(_ file: WebMediaPath, request: Request, context: WebContext) async -> Response {
        let path = file.path(in: backend.layout)
        guard let info = Self.regularFile(path, root: backend.layout.root) else {
            return WebResponses.error(.notFound, "not_found", "\(file.relative) is not in the library (deleted, or retention removed it)")
        }
        return await serve(path, info: info, type: Self.contentType(file.kind), downloadName: "\(file.day)-\(file.name)",
                           request: request, context: context)
    }

    private func exportedClip(_ name: String, request: Request, context: WebContext) async -> Response {
        let path = backend.layout.exportsDirectory + "/" + name
        guard let info = Self.regularFile(path, root: backend.layout.root) else {
            return WebResponses.error(.notFound, "not_found", "there is no exported clip \(name) (exports are temporary: export it again)")
        }
        let type = name.hasSuffix(".wav") ? "audio/wav" : name.hasSuffix(".m4a") ? "audio/mp4" : "video/mp4"
        return await serve(path, info: info, type: type, downloadName: name, request: request, context: context)
    }

    /// A file with Range, ETag and Last-Modified (RFC 9110).
    private func serve(_ path: String, info: FileFacts, type: String, downloadName: String, request: Request,
                       context: WebContext) async -> Response {
        let etag = HTTPETag.of(size: info.size, modifiedSeconds: info.modified.seconds, modifiedNanoseconds: info.modified.nanoseconds)
        var headers: HTTPFields = [
            .contentType: type, .acceptRanges: "bytes", .eTag: etag,
            .lastModified: httpDate(secondsSince1970: info.modified.seconds), .cacheControl: "private, max-age=3600",
            .contentDisposition: "inline; filename=\"\(downloadName)\"",
        ]
        if HTTPETag.matches(ifNoneMatch: request.headers[.ifNoneMatch], etag: etag) {
            return Response(status: .notModified, headers: headers)
        }
        var range = HTTPByteRange.resolve(request.headers[.range], size: info.size)
        if let ifRange = request.headers[.ifRange], ifRange != etag { range = .whole }
        do {
            switch range {
            case .whole:
                headers[.contentLength] = String(info.size)
                guard info.size > 0 else { return Response(status: .ok, headers: headers) }
                let body = try await fileIO.loadFile(path: path, range: 0...Int(info.size - 1), context: context)
                return Response(status: .ok, headers: headers, body: request.method == .head ? .init() : body)
            case .partial(let first, let last):
                headers[.contentRange] = "bytes \(first)-\(last)/\(info.size)"
                headers[.contentLength] = String(last - first + 1)
                let body = try await fileIO.loadFile(path: path, range: Int(first)...Int(last), context: context)
                return Response(status: .partialContent, headers: headers, body: request.method == .head ? .init() : body)
            case .unsatisfiable:
                return WebResponses.error(.rangeNotSatisfiable, "bad_range", "the file has \(info.size) bytes",
                                          headers: [.contentRange: "bytes */\(info.size)"])
            }
        } catch {
            return WebResponses.error(.notFound, "not_found", "\(downloadName) could not be read")
        }
    }

    private func delete(_ file: WebMediaPath, identity: WebGate.Identity?) async -> Response {
        let path = file.path(in: backend.layout)
        guard Self.regularFile(path, root: backend.layout.root) != nil else {
            return WebResponses.error(.notFound, "not_found", "\(file.relative) is not in the library")
        }
        guard unlink(path) == 0 else {
            return WebResponses.error(.conflict, "failed", "cannot delete \(file.relative): \(String(cString: strerror(errno)))")
        }
        unlink(MediaThumbnail.path(for: path))
        logger.notice("web: \(identity?.user ?? "?") deleted \(file.relative)")
        return Response(status: .noContent)
    }

    private func thumbnail(_ file: WebMediaPath) async -> Response {
        let path = file.path(in: backend.layout)
        guard Self.regularFile(path, root: backend.layout.root) != nil else {
            return WebResponses.error(.notFound, "not_found", "\(file.relative) is not in the library")
        }
        return await onBackgroundThread("kioskcam.web.thumbs") {
            do {
                let png = try MediaThumbnail.stored(for: path, kind: file.kind, size: FrameSize(width: 320, height: 180))
                let bytes = try Data(contentsOf: URL(fileURLWithPath: png))
                return Response(status: .ok, headers: [.contentType: "image/png", .cacheControl: "private, max-age=3600"],
                                body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
            } catch {
                return WebResponses.error(.unprocessableContent, "no_thumbnail", "\(error)")
            }
        }
    }

    private func snapshotJPEG() async -> Response {
        let picture = backend.currentPictureJPEG
        return await onBackgroundThread("kioskcam.web.picture") {
            do {
                let jpeg = try picture()
                return Response(status: .ok, headers: [.contentType: "image/jpeg"], body: .init(byteBuffer: ByteBuffer(bytes: jpeg)))
            } catch {
                return WebResponses.error(.serviceUnavailable, "no_picture", "\(error)")
            }
        }
    }

    private func control(_ route: WebRoute, request: Request, identity: WebGate.Identity?) async -> Response {
        guard let body = await bodyBytes(request) else {
            return WebResponses.error(.contentTooLarge, "too_large", "the body is larger than \(WebAPI.maximumBodyBytes) bytes")
        }
        let controlRequest: ControlRequest
        switch WebAPI.controlRequest(for: route, body: body) {
        case .success(let parsed): controlRequest = parsed
        case .failure(let error): return WebResponses.outcome(.failure(error))
        }
        logger.info("web: \(identity?.user ?? "?"): \(controlRequest)")
        let control = backend.control
        let layout = backend.layout
        return await onBackgroundThread("kioskcam.web.control") {
            var outcome = control.handle(controlRequest)
            // The pages want URLs for what was made.
            if case .success(var fields) = outcome, case .string(let path)? = fields["path"] {
                if let relative = Self.relativeLibraryPath(path, root: layout.root), let file = WebMediaPath(relative: relative) {
                    fields["url"] = .string(file.mediaURL)
                } else if path.hasPrefix(layout.exportsDirectory + "/"), case let name = String(path.dropFirst(layout.exportsDirectory.count + 1)),
                          WebExportName.isValid(name) {
                    fields["url"] = .string("/exports/" + name)
                }
                outcome = .success(fields)
            }
            return WebResponses.outcome(outcome)
        }
    }

    /// PUT /api/settings: every change checked by the schema (as `config check`), saved
    /// atomically to the state directory's `web-settings.toml` (the old one kept as `.bak`),
    /// then the daemon's own reload applies it, and the answer says what applies now and
    /// what waits for a restart. One save at a time.
    private func changeSettings(_ request: Request, identity: WebGate.Identity?) async -> Response {
        guard let reload = backend.reload else {
            return WebResponses.error(.serviceUnavailable, "not_writable",
                                      "this daemon cannot apply settings: edit /etc/kioskcam/kioskcam.toml, then systemctl reload kioskcam")
        }
        guard let body = await bodyBytes(request) else {
            return WebResponses.error(.contentTooLarge, "too_large", "the body is larger than \(WebAPI.maximumBodyBytes) bytes")
        }
        guard case .success(let object) = WebAPI.parseObject(body), case .object(let changes)? = object["settings"] else {
            return WebResponses.error(.badRequest, "bad_argument", #"send {"settings": {"storage.retention_days": 14, …}}"#)
        }
        let backend = backend, logger = logger, user = identity?.user ?? "?"
        return await onBackgroundThread("kioskcam.web.settings") {
            Self.settingsSaves.withLock { _ in
                let configuration = backend.configuration()
                let path = WebSettingsFile.path(stateDirectory: configuration.control.stateDirectory)
                var overlay: WebSettingsOverlay
                do {
                    overlay = try WebSettingsFile.load(path) ?? WebSettingsOverlay()
                } catch {
                    return WebResponses.error(.conflict, "saved_settings_broken", "\(error); fix or remove it on the board")
                }
                do throws(WebSettingsOverlay.Refusal) {
                    try overlay.take(changes, onTopOf: configuration)
                } catch {
                    return WebResponses.json(["error": .object(["code": .string("invalid_setting"), "key": .string(error.key),
                                                                "message": .string(error.key.isEmpty ? error.message : "\(error.key): \(error.message)")])],
                                             status: .badRequest)
                }
                do throws(AtomicFile.Failure) {
                    try WebSettingsFile.save(overlay, to: path)
                } catch {
                    logger.error("web: \(user): settings not saved: \(error)")
                    return WebResponses.error(error.code == ENOSPC ? .init(code: 507, reasonPhrase: "Insufficient Storage") : .internalServerError, "not_saved",
                                              "\(error); nothing changed")
                }
                logger.notice("web: \(user) saved settings \(changes.keys.sorted().joined(separator: ", ")) in \(path)")
                let outcome = reload("web settings saved by \(user)")
                if let error = outcome.error {
                    return WebResponses.error(.conflict, "not_applied", "saved, but the configuration did not reload: \(error)")
                }
                return WebResponses.json([
                    "settings": .object(WebSettings.values(of: backend.configuration())),
                    "applied_now": .array(outcome.appliedNow.map(JSONValue.string)),
                    "need_restart": .array(outcome.needRestart.map(JSONValue.string)),
                    "applied": .bool(outcome.needRestart.isEmpty),
                    "file": .string(path),
                ])
            }
        }
    }

    /// The live view as HLS: the playlist (waiting up to 10 s for its first segment), the
    /// init segment and the segments it lists. Never cached: they change every GOP.
    private func hlsAnswer(_ route: WebRoute) async -> Response {
        guard let hls else { return WebResponses.error(.serviceUnavailable, "no_camera", "there is no camera to watch") }
        let body: (type: String, bytes: [UInt8])?
        switch route {
        case .livePlaylist:
            guard let text = await hls.playlist(prefix: "/api/live") else {
                return WebResponses.error(.serviceUnavailable, "starting",
                                          "the live stream has no segment yet (or max_viewers watch already): try again in a few seconds",
                                          headers: [.retryAfter: "2"])
            }
            body = ("application/vnd.apple.mpegurl", Array(text.utf8))
        case .liveInit: body = hls.initSegment.map { ("video/mp4", $0) }
        case .liveSegment(let sequence): body = hls.segment(sequence).map { ("video/iso.segment", $0) }
        default: body = nil
        }
        guard let body else {
            return WebResponses.error(.notFound, "not_found", "no such live segment (gone from the window, or not made yet): fetch the playlist again")
        }
        return Response(status: .ok, headers: [.contentType: body.type], body: .init(byteBuffer: ByteBuffer(bytes: body.bytes)))
    }

    /// Saves of the settings file, one at a time (read, change, write, reload).
    private static let settingsSaves = Locked(())

    // MARK: Helpers

    private func bodyBytes(_ request: Request) async -> [UInt8]? {
        guard let buffer = try? await request.body.collect(upTo: WebAPI.maximumBodyBytes) else { return nil }
        return Array(buffer.readableBytesView)
    }

    struct FileFacts {
        var size: Int64
        var modified: (seconds: Int64, nanoseconds: Int64)
    }

    /// A regular file whose real path stays under the media root (a symlink pointing out
    /// of the library is refused: `WebMediaPath` already refused every other trick).
    static func regularFile(_ path: String, root: String) -> FileFacts? {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        guard let real = realpath(path, nil) else { return nil }
        defer { free(real) }
        guard let realRoot = realpath(root, nil) else { return nil }
        defer { free(realRoot) }
        let inside = String(cString: real).hasPrefix(String(cString: realRoot) + "/")
        guard inside else { return nil }
        return FileFacts(size: Int64(info.st_size), modified: (Int64(info.st_mtim.tv_sec), Int64(info.st_mtim.tv_nsec)))
    }

    static func relativeLibraryPath(_ path: String, root: String) -> String? {
        let prefix = root.hasSuffix("/") ? root : root + "/"
        return path.hasPrefix(prefix) ? String(path.dropFirst(prefix.count)) : nil
    }

    static func contentType(_ kind: MediaKind) -> String {
        switch kind {
        case .video, .screen: "video/mp4"
        case .audio: "audio/mp4"
        case .photo: "image/jpeg"
        }
    }
}
