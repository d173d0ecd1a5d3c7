extension Configuration {
    /// The built-in web app (`[web]`): HTTPS in the daemon, behind a login.
    public struct Web: Sendable, Equatable {
        /// How the server encrypts.
        public enum TLS: String, Sendable, Equatable, CaseIterable {
            /// A certificate made on first start into the state directory and kept.
            case selfSigned = "self-signed"
            /// The user's own certificate and key (`cert_file`, `key_file`).
            case files
            /// Plain HTTP: only behind a TLS proxy on the same board; Basic auth is refused.
            case off
        }

        public var enabled = true
        public var listen = WebListenAddress(host: "0.0.0.0", port: 8443)
        public var tls = TLS.selfSigned
        public var certFile: String?
        public var keyFile: String?
        /// Connections open at once; beyond it a client gets 503 and is closed.
        public var maxConnections = 64
        /// A connection that sends nothing (or only part of a request) this long is closed.
        public var idleTimeoutSeconds = 30
        /// Live viewers at once.
        public var maxViewers = 10

        public init() {}
    }

    /// The keys of the `[web]` section.
    static var webSchema: [ConfigKey] {
        [
            .bool("web.enabled") { c, v in c.web.enabled = v },
            .string("web.listen", allowed: "\"ADDRESS:PORT\" such as \"0.0.0.0:8443\", \"127.0.0.1:8443\" or \"[::]:8443\"") { c, text in
                guard let address = WebListenAddress(parsing: text) else { return false }
                c.web.listen = address
                return true
            },
            .choice("web.tls", Web.TLS.self) { c, v in c.web.tls = v },
            .string("web.cert_file", allowed: "\"\" or the absolute path of a PEM certificate (chain) for tls = \"files\"") { c, text in
                guard let path = Self.optionalAbsolutePath(text) else { return false }
                c.web.certFile = path.isEmpty ? nil : path
                return true
            },
            .string("web.key_file", allowed: "\"\" or the absolute path of the PEM private key for tls = \"files\"") { c, text in
                guard let path = Self.optionalAbsolutePath(text) else { return false }
                c.web.keyFile = path.isEmpty ? nil : path
                return true
            },
            .integer("web.max_connections", 4...1024, unit: " connections") { c, v in c.web.maxConnections = v },
            .integer("web.idle_timeout_seconds", 5...3600, unit: " seconds") { c, v in c.web.idleTimeoutSeconds = v },
            .integer("web.max_viewers", 1...64, unit: " live viewers") { c, v in c.web.maxViewers = v },
        ]
    }
}

/// Where a server listens: an IPv4 or IPv6 address and a port.
public struct WebListenAddress: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// `A.B.C.D:PORT` or `[IPv6]:PORT`; nil for names, missing ports and ports outside 1…65535.
    public init?(parsing text: String) {
        let host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
            guard !host.isEmpty, host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { return nil }
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
            let octets = host.split(separator: ".", omittingEmptySubsequences: false)
            guard octets.count == 4, octets.allSatisfy({ (1...3).contains($0.count) && $0.allSatisfy(\.isASCIIDigit) && Int($0)! <= 255 })
            else { return nil }
        }
        guard (1...5).contains(portText.count), portText.allSatisfy(\.isASCIIDigit), let port = Int(portText),
              (1...65_535).contains(port) else { return nil }
        self.init(host: String(host), port: port)
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
