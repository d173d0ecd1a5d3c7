import Foundation
import HTTPTypes
import Hummingbird
import KioskCore

/// Answers in one shape: JSON bodies, errors as `{"error": {"code", "message"}}`, and the
/// security headers on every response (added once, by `WebApp.respond`).
enum WebResponses {
    /// No script but our own files, no framing, no sniffing; pages load nothing from elsewhere.
    static let contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
        + "media-src 'self' blob:; connect-src 'self'; worker-src 'self' blob:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

    static func secure(_ response: inout Response, tls: Bool) {
        response.headers[.contentSecurityPolicy] = contentSecurityPolicy
        response.headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[HTTPField.Name("Referrer-Policy")!] = "same-origin"
        if tls { response.headers[.strictTransportSecurity] = "max-age=31536000" }
        if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "no-store" }
    }

    static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = "application/json"
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(string: value.description)))
    }

    static func json(_ fields: [String: JSONValue], status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        json(.object(fields), status: status, headers: headers)
    }

    static func error(_ status: HTTPResponse.Status, _ code: String, _ message: String, headers: HTTPFields = [:]) -> Response {
        json(["error": ["code": .string(code), "message": .string(message)]], status: status, headers: headers)
    }

    /// The answer to a control request's outcome, with the HTTP status its error code means.
    static func outcome(_ outcome: ControlOutcome) -> Response {
        switch outcome {
        case .success(let fields): return json(fields)
        case .failure(let error):
            let status: HTTPResponse.Status = switch error.code {
            case .malformedJSON, .badArgument, .unknownCommand, .unsupportedVersion: .badRequest
            case .tooLarge: .contentTooLarge
            case .busy, .failed: .conflict
            case .unavailable: .serviceUnavailable
            case .forbidden: .forbidden
            }
            return Self.error(status, error.code.rawValue, error.message)
        }
    }

    /// 401 for a page: a small page that sends the browser to the login (no script needed).
    static func loginRedirect(next: String) -> Response {
        let target = "/login?next=" + (next.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "%2Flive")
        let html = """
            <!doctype html><html lang="en"><head><meta charset="utf-8"><title>Log in</title>
            <meta http-equiv="refresh" content="0;url=\(target)"><link rel="icon" href="/static/icon.svg"></head>
            <body><p>Please <a href="\(target)">log in</a>.</p></body></html>
            """
        return Response(status: .unauthorized, headers: [.contentType: "text/html; charset=utf-8"],
                        body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    static func redirect(_ location: String) -> Response {
        Response(status: .found, headers: [.location: location])
    }
}
