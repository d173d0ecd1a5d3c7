import Foundation
import FuzzSupport
import KioskCore

/// What a web client controls, through every parser of the web app: the request path
/// (`WebRoute.match`), the Range, Cookie, Authorization and Origin headers, a JSON body
/// turned into a control request (`WebAPI`), a `date` query, a `[web] listen` value and
/// the live view's init segment, a Digest nonce's stamp, the settings page's changes and
/// the file they are saved in. The first byte picks the method and splits the rest.
///
/// Properties beyond "no trap":
/// - a matched library path names a file under the media root, with no `..` or `%`;
/// - a partial range lies inside the file;
/// - a cookie value found is a well-formed token; a Basic user name is valid;
/// - a body that parses becomes a request whose wire line parses back the same;
/// - settings taken from a body save as TOML that reads back the same and applies.
func fuzzWebRequest(_ bytes: UnsafeRawBufferPointer) {
    guard let first = bytes.first else { return }
    let methods = ["GET", "POST", "PUT", "DELETE", "HEAD", "PATCH"]
    let method = methods[Int(first) % methods.count]
    let text = String(decoding: bytes.dropFirst(), as: UTF8.self)

    switch WebRoute.match(method: method, path: text) {
    case .route(let route):
        switch route {
        case .media(let file), .deleteMedia(let file), .thumbnail(let file):
            let path = file.path(in: LibraryLayout(root: "/media"))
            Fuzz.require(path.hasPrefix("/media/") && !path.contains("..") && !path.contains("%") && !path.contains("\\"),
                         "a library path outside the root: \(path)")
            Fuzz.require(WebMediaPath(relative: file.relative) == file, "a library path that does not read back: \(file)")
        case .staticFile(let name):
            Fuzz.require(!name.contains("/") && !name.contains(".."), "a static name with a folder: \(name)")
        default:
            break
        }
        _ = route.access
    case .notFound, .methodNotAllowed:
        break
    }

    let size = Int64(first) * 1000
    if case .partial(let from, let to) = HTTPByteRange.resolve(text, size: size) {
        Fuzz.require(from >= 0 && from <= to && to < size, "range \(from)-\(to) of \(size) bytes for \(text.debugDescription)")
    }
    if let token = HTTPCredentials.cookie(WebSessionTable.cookieName, in: text) {
        Fuzz.require(WebSessionToken.isWellFormed(token), "a malformed token accepted: \(token)")
    }
    if let credentials = HTTPCredentials.basic(text) {
        Fuzz.require(WebUserName.isValid(credentials.user), "an invalid user name accepted: \(credentials.user)")
    }
    _ = WebOriginCheck.allows(origin: text, host: "cam:8443", tls: first & 1 == 0)
    _ = WebAPI.day(text)
    _ = WebListenAddress(parsing: text)
    _ = WebPasswordPolicy.problem(with: text, user: "alice")
    _ = MSEMimeType.of(initSegment: Array(bytes))
    // A Digest nonce's stamp, as a client sends it back: read back only as we write it.
    for stamp in text.split(separator: ".", omittingEmptySubsequences: false).prefix(2) {
        if let seconds = DigestNonceClock.seconds(in: stamp) {
            Fuzz.require(DigestNonceClock.stamp(uptime: Double(seconds)) == stamp, "the stamp \(stamp) reads back otherwise")
            _ = DigestNonceClock.isFresh(madeAt: seconds, now: Double(first) * 10)
        }
    }
    if bytes.count >= 9 {
        _ = DigestNonceClock.stamp(uptime: Double(bitPattern: bytes.loadUnaligned(fromByteOffset: 1, as: UInt64.self)))
    }

    // PUT /api/settings: a body that parses and is taken must save as TOML that reads back
    // as the same settings, and apply to a configuration.
    if case .success(let object) = WebAPI.parseObject(Array(bytes.dropFirst())), case .object(let changes)? = object["settings"] {
        var overlay = WebSettingsOverlay()
        if (try? overlay.take(changes, onTopOf: Configuration())) != nil {
            let again = try? WebSettingsOverlay(toml: overlay.toml, file: "fuzz")
            Fuzz.require(again == overlay, "saved settings do not read back: \(overlay.toml.debugDescription)")
            var configuration = Configuration()
            Fuzz.require((try? overlay.apply(to: &configuration, file: "fuzz")) != nil, "taken settings do not apply: \(overlay.values)")
        }
    }
    // The saved settings file as the board has it (anyone with a shell may have edited it).
    _ = try? WebSettingsOverlay(toml: text, file: "fuzz")

    for route in [WebRoute.recording, .snapshot, .event, .export] {
        guard case .success(let request) = WebAPI.controlRequest(for: route, body: Array(bytes.dropFirst())) else { continue }
        let line = ControlCall(id: nil, request: request).line()
        guard case .success(let again) = ControlCall.parse(line) else { return Fuzz.require(false, "\(request) does not read back") }
        Fuzz.require(again.request == request, "\(request) reads back as \(again.request)")
    }
}

@main
enum Main {
    static func main() { Fuzz.main("FuzzWebRequest", fuzzWebRequest) }
}
