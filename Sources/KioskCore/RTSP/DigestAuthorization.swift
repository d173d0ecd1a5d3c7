import Foundation

/// HTTP Digest access authentication as RTSP clients speak it (RFC 7616, and RFC 2069's
/// form without `qop` that live555 — VLC — and most cameras' clients still send).
///
/// Pure: the hash function is handed in (MD5 or SHA-256 from swift-crypto), so that the
/// rules — which fields, which order — are tested here without a C library.
public struct DigestAuthorization: Sendable, Equatable {
    public enum Algorithm: String, Sendable, CaseIterable {
        case md5 = "MD5"
        case sha256 = "SHA-256"
    }

    public var user: String
    public var realm: String
    public var nonce: String
    public var uri: String
    public var response: String
    public var algorithm: Algorithm
    /// `auth` when the client used RFC 7616's qop (then `nc` and `cnonce` are set).
    public var qop: String?
    public var nonceCount: String?
    public var clientNonce: String?

    /// Reads `Authorization: Digest …`; nil for another scheme, a missing field, an
    /// algorithm other than MD5 or SHA-256, or an invalid user name.
    public init?(header: String?) {
        guard let header, header.utf8.count <= 4096 else { return nil }
        let trimmed = header.trimmingCharacters(in: .whitespaces)
        guard trimmed.lowercased().hasPrefix("digest ") else { return nil }
        guard let fields = Self.parameters(String(trimmed.dropFirst(7))) else { return nil }
        guard let user = fields["username"], WebUserName.isValid(user), let realm = fields["realm"], let nonce = fields["nonce"],
              let uri = fields["uri"], let response = fields["response"], !response.isEmpty, response.utf8.count <= 128 else { return nil }
        let algorithmName = fields["algorithm"] ?? "MD5"
        guard let algorithm = Algorithm.allCases.first(where: { $0.rawValue.caseInsensitiveCompare(algorithmName) == .orderedSame }) else {
            return nil
        }
        self.user = user
        self.realm = realm
        self.nonce = nonce
        self.uri = uri
        self.response = response.lowercased()
        self.algorithm = algorithm
        qop = fields["qop"]
        nonceCount = fields["nc"]
        clientNonce = fields["cnonce"]
        if let qop {
            guard qop == "auth", nonceCount != nil, clientNonce != nil else { return nil }
        }
    }

    /// The response the client should have sent, given the user's HA1 = H(user:realm:password)
    /// and `hash` (lowercase hex of the algorithm's digest).
    public func expectedResponse(ha1: String, method: String, hash: (String) -> String) -> String {
        let ha2 = hash("\(method):\(uri)")
        if let qop, let nonceCount, let clientNonce {
            return hash("\(ha1):\(nonce):\(nonceCount):\(clientNonce):\(qop):\(ha2)")
        }
        return hash("\(ha1):\(nonce):\(ha2)")
    }

    /// Whether the signed `uri` names the request's own target (RFC 7616 §3.4.6: the server
    /// checks it, or a response overheard on a request for one URL opens another while its
    /// nonce is fresh). The absolute and the path form of one URL match (`rtsp://cam/live`
    /// and `/live`): clients sign the form they put on the request line, and the host
    /// is this server's either way.
    public func names(target: String) -> Bool {
        Self.pathAndQuery(uri) == Self.pathAndQuery(target)
    }

    /// RTSP's rule: the signed `uri` names the request's stream (`live` or `sub`). Clients
    /// built on live555 (VLC) sign every request of a session with the stream's URL, a
    /// track's SETUP too, so a stream and its tracks are one resource here; the other
    /// stream, or a path that is neither, is not.
    public func namesStream(of target: String) -> Bool {
        if names(target: target) { return true }
        guard let signed = RTSPStreamPath.parse(RTSPRequest.path(of: uri)),
              let requested = RTSPStreamPath.parse(RTSPRequest.path(of: target)) else { return false }
        return signed.stream == requested.stream
    }

    /// `scheme://authority/path?query` → `/path?query` (`/` when there is no path); any
    /// other form as it is.
    static func pathAndQuery(_ target: String) -> Substring {
        guard let separator = target.range(of: "://") else { return target[...] }
        let rest = target[separator.upperBound...]
        guard let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) else { return "/" }
        return rest[slash] == "?" ? "/" + rest[slash...] : rest[slash...]
    }

    /// HA1 for a user's password: what the server keeps to check Digest without the password.
    public static func ha1(user: String, realm: String, password: String, hash: (String) -> String) -> String {
        hash("\(user):\(realm):\(password)")
    }

    /// Comparison that takes the same time wherever the strings differ.
    public static func constantTimeEquals(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for index in x.indices { difference |= x[index] ^ y[index] }
        return difference == 0
    }

    /// `name=value, name="quoted \" value"` → a dictionary (names lowercased); nil when
    /// malformed (an unterminated quote, a field without `=`).
    static func parameters(_ text: String) -> [String: String]? {
        var fields: [String: String] = [:]
        var characters = Substring(text)
        while true {
            characters = characters.drop { $0 == " " || $0 == "," || $0 == "\t" }
            guard !characters.isEmpty else { return fields }
            guard let equals = characters.firstIndex(of: "=") else { return nil }
            let name = characters[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            guard !name.isEmpty, !name.contains(" "), fields.count < 32 else { return nil }
            characters = characters[characters.index(after: equals)...].drop { $0 == " " }
            var value = ""
            if characters.first == "\"" {
                characters = characters.dropFirst()
                var escaped = false
                var closed = false
                while let character = characters.first {
                    characters = characters.dropFirst()
                    if escaped { value.append(character); escaped = false; continue }
                    if character == "\\" { escaped = true; continue }
                    if character == "\"" { closed = true; break }
                    value.append(character)
                }
                guard closed else { return nil }
            } else {
                let end = characters.firstIndex(of: ",") ?? characters.endIndex
                value = characters[..<end].trimmingCharacters(in: .whitespaces)
                characters = characters[end...]
            }
            fields[name] = value
        }
    }
}
