import Foundation

/// Credentials as a request carries them: the session cookie, or HTTP Basic.
public enum HTTPCredentials {
    /// The value of the cookie `name` in a `Cookie` header, or nil. Only values of the
    /// token alphabet are returned: anything else is tampering and counts as no cookie.
    public static func cookie(_ name: String, in header: String?) -> String? {
        guard let header, header.utf8.count <= 8192 else { return nil }
        for pair in header.split(separator: ";") {
            let trimmed = pair.trimmingCharacters(in: .whitespaces)
            guard let equals = trimmed.firstIndex(of: "=") else { continue }
            guard trimmed[..<equals] == name else { continue }
            let value = String(trimmed[trimmed.index(after: equals)...])
            return WebSessionToken.isWellFormed(value) ? value : nil
        }
        return nil
    }

    /// User and password from `Authorization: Basic …` (RFC 7617), or nil.
    public static func basic(_ header: String?) -> (user: String, password: String)? {
        guard let header, header.utf8.count <= 4096 else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "basic",
              let data = Data(base64Encoded: parts[1].trimmingCharacters(in: .whitespaces)),
              let text = String(data: data, encoding: .utf8),
              let colon = text.firstIndex(of: ":") else { return nil }
        let user = String(text[..<colon])
        let password = String(text[text.index(after: colon)...])
        guard WebUserName.isValid(user) else { return nil }
        return (user, password)
    }
}

/// A session token: 32 random bytes as unpadded base64url (43 characters).
public enum WebSessionToken {
    public static let length = 43

    /// The token for 32 random bytes.
    public static func make(from bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Whether `text` has a token's length and alphabet.
    public static func isWellFormed(_ text: String) -> Bool {
        text.utf8.count == length && text.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
        }
    }
}

/// Cross-site request forgery: a request that changes state must come from a page of this
/// server. Browsers send `Origin` on every POST/PUT/DELETE; scripts (curl, an NVR) send none
/// and authenticate with Basic, which a foreign page cannot make a browser send silently.
public enum WebOriginCheck {
    /// Whether a state-changing request may go on.
    /// - Parameters:
    ///   - origin: The `Origin` header (nil: not a browser, allowed).
    ///   - host: The `Host` header the client used.
    ///   - tls: Whether the connection is HTTPS.
    public static func allows(origin: String?, host: String?, tls: Bool) -> Bool {
        guard let origin else { return true }
        guard let host, !host.isEmpty else { return false }
        return origin == (tls ? "https://" : "http://") + host
    }
}
