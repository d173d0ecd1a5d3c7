import Glibc
import KioskCore

extension WebServer {
    /// The URL a phone on the same network opens, for the lock screen and its QR code: the
    /// listen address when it names one, else the board's first IPv4 address that is up and
    /// not loopback (what DHCP gave it, read afresh each call: it may change), else the
    /// host name `facts.url` carries.
    public var phoneURL: String {
        let listen = configuration.listen
        guard listen.host == "0.0.0.0" || listen.host == "::", let address = Self.firstIPv4Address() else { return facts.url }
        let scheme = facts.url.hasPrefix("https:") ? "https" : "http"
        return "\(scheme)://\(address):\(listen.port)/"
    }

    /// The lock screen's facts: where to go, and the fingerprint to compare.
    public var screenInfo: ScreenWebInfo { ScreenWebInfo(url: phoneURL, fingerprint: facts.fingerprint) }

    static func firstIPv4Address() -> String? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return nil }
        defer { freeifaddrs(list) }
        var entry: UnsafeMutablePointer<ifaddrs>? = first
        while let current = entry {
            defer { entry = current.pointee.ifa_next }
            let flags = Int32(bitPattern: current.pointee.ifa_flags)
            guard let socketAddress = current.pointee.ifa_addr, socketAddress.pointee.sa_family == sa_family_t(AF_INET),
                  flags & Int32(IFF_UP) != 0, flags & Int32(IFF_LOOPBACK) == 0 else { continue }
            var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            let converted = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { inet -> Bool in
                var address = inet.pointee.sin_addr
                return inet_ntop(AF_INET, &address, &text, socklen_t(INET_ADDRSTRLEN)) != nil
            }
            if converted { return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) }
        }
        return nil
    }
}
