import Crypto
import Foundation
import Hummingbird
import KioskCore
import KioskPIN
import KioskSOAP
import Logging
import NIOCore

/// ONVIF's Device and Media services on the web app's server (`/onvif/device_service`,
/// `/onvif/media_service`): the SOAP body read with a real XML parser (`SOAPParser`), the
/// WS-Security UsernameToken checked against the web app's users, the answer made by
/// `ONVIFService` (pure). Every operation but GetSystemDateAndTime needs a user.
///
/// PasswordText is checked like a web login (PBKDF2, the throttle) and is safe because
/// the web app speaks HTTPS; PasswordDigest needs the password itself, which the board
/// keeps only for users set with `--onvif-digest` (`ONVIFPasswords`). A digest is
/// accepted once, within five minutes of its `Created`.
struct ONVIFResponder: Sendable {
    let gate: WebGate
    let passwords: ONVIFPasswords
    /// The facts, for the host name or address the client reached us by.
    let device: @Sendable (_ host: String) -> ONVIFDevice?
    let logger: Logger
    private let seenNonces = Locked<(set: Set<[UInt8]>, order: [[UInt8]])>(([], []))

    init(gate: WebGate, stateDirectory: String, device: @escaping @Sendable (_ host: String) -> ONVIFDevice?, logger: Logger) {
        self.gate = gate
        passwords = ONVIFPasswords(directory: stateDirectory)
        self.device = device
        self.logger = logger
    }

    func respond(_ request: Request, context: WebContext) async -> Response {
        let endpoint: ONVIFService.Endpoint
        switch request.uri.path {
        case "/onvif/device_service": endpoint = .device
        case "/onvif/media_service": endpoint = .media
        default: return soap(ONVIFService.fault(.sender, subcode: "ter:ActionNotSupported", reason: "no ONVIF service at \(request.uri.path.prefix(80))"), status: .notFound)
        }
        guard request.method == .post else {
            return soap(ONVIFService.fault(.sender, subcode: "ter:WellFormed", reason: "ONVIF requests are POSTed SOAP"), status: .methodNotAllowed)
        }
        guard let device = device(Self.host(of: request.head.authority)) else {
            return soap(ONVIFService.fault(.receiver, subcode: "ter:Action", reason: "the camera is not ready"))
        }
        let body: [UInt8]
        do {
            body = Array(buffer: try await request.body.collect(upTo: SOAPParser.maximumBytes))
        } catch {
            return soap(ONVIFService.fault(.sender, subcode: "ter:WellFormed", reason: "the message is over \(SOAPParser.maximumBytes / 1024) KiB"))
        }
        let envelope: SOAPElement
        switch SOAPParser.parse(body) {
        case .success(let parsed): envelope = parsed
        case .failure(let error): return soap(ONVIFService.fault(.sender, subcode: "ter:WellFormed", reason: "malformed SOAP: \(error)"))
        }
        let onvif: ONVIFService.Request
        switch ONVIFService.request(envelope) {
        case .success(let parsed): onvif = parsed
        case .failure(let fault): return soap(fault)
        }
        if !ONVIFService.unauthenticated.contains(onvif.operation) {
            if let refusal = await authenticate(onvif.token, address: context.clientAddress) {
                return soap(refusal)
            }
        }
        return soap(ONVIFService.answer(onvif, endpoint: endpoint, device: device, now: Date()))
    }

    /// nil when the token names a user whose password it proves; else the fault to answer.
    private func authenticate(_ token: ONVIFUsernameToken?, address: String) async -> ONVIFService.Answer? {
        let notAuthorized = { (reason: String) in ONVIFService.fault(.sender, subcode: "ter:NotAuthorized", reason: reason) }
        guard let token else { return notAuthorized("a WS-Security UsernameToken is required") }
        let gate = gate
        if token.isDigest {
            guard token.isFresh(now: Date()), !token.nonce.isEmpty else {
                return notAuthorized("the token's Created is more than five minutes from the camera's clock, or it has no Nonce")
            }
            let fresh = seenNonces.withLock { seen -> Bool in
                guard seen.set.insert(token.nonce).inserted else { return false }
                seen.order.append(token.nonce)
                if seen.order.count > 1024 { seen.set.remove(seen.order.removeFirst()) }
                return true
            }
            guard fresh else { return notAuthorized("this token was used already") }
            let kept = passwords.password(of: token.user)
            let outcome = await onBackgroundThread("kioskcam.web.auth") {
                gate.identity(onvifDigest: token, keptPassword: kept, address: address)
            }
            if case .accepted = outcome { return nil }
            if kept == nil, case .wrong = outcome {
                logger.warning("onvif: \(token.user) signed with PasswordDigest, but their password is not kept for it: `kioskcam web-user set \(token.user) --onvif-digest`, or use PasswordText")
            }
            return notAuthorized(Self.reason(outcome))
        }
        let outcome = await onBackgroundThread("kioskcam.web.auth") {
            gate.identity(basicUser: token.user, password: token.password, address: address)
        }
        if case .accepted = outcome { return nil }
        return notAuthorized(Self.reason(outcome))
    }

    /// The host part of a Host header (`cam1:8443` → `cam1`, `[fe80::1]:8443` → `fe80::1`).
    static func host(of authority: String?) -> String {
        guard let authority, !authority.isEmpty, authority.utf8.count <= 255 else { return "" }
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            return String(authority[authority.index(after: authority.startIndex)..<close])
        }
        return authority.split(separator: ":").first.map(String.init) ?? ""
    }

    private static func reason(_ outcome: WebGate.LoginOutcome) -> String {
        switch outcome {
        case .accepted: ""
        case .wrong: "wrong user name or password"
        case .throttled(let seconds): "too many wrong passwords; try again in \(seconds) s"
        case .noUsers: "no user exists yet: make one on the camera with `kioskcam web-user set NAME --role viewer`"
        case .unavailable(let why): "passwords cannot be checked: \(why)"
        }
    }

    private func soap(_ answer: ONVIFService.Answer, status: HTTPResponse.Status? = nil) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/soap+xml; charset=utf-8"
        return Response(status: status ?? HTTPResponse.Status(code: answer.status), headers: headers,
                        body: ResponseBody(byteBuffer: ByteBuffer(string: answer.xml)))
    }
}

extension WebGate {
    /// The identity of an ONVIF PasswordDigest: checked against the password kept for
    /// the user (nil: none kept, which counts as wrong), with the throttle.
    func identity(onvifDigest token: ONVIFUsernameToken, keptPassword: String?, address: String) -> LoginOutcome {
        check(user: token.user, address: address) {
            guard let keptPassword else { return false }
            let expected = token.expectedDigest(password: keptPassword) { Array(Insecure.SHA1.hash(data: $0)) }
            return DigestAuthorization.constantTimeEquals(expected, token.password)
        }
    }
}
