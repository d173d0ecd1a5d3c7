/// Connections open per client address, with a cap for each, so that one client (or one
/// attacker holding sockets open) cannot take every slot of a server: the web app's
/// `max_connections`, RTSP's `max_clients`. Loopback is not capped: a TLS proxy or a
/// restreamer on the board itself speaks for many clients from 127.0.0.1.
public struct ConnectionsPerAddress: Sendable {
    public let limit: Int
    private var open: [String: Int] = [:]
    /// Connections refused for their address since start.
    public private(set) var refused = 0

    public init(limit: Int) { self.limit = max(1, limit) }

    /// Counts a connection from `address`; false, and not counted, when that address has
    /// `limit` open already (only a counted one is given to `leave`).
    public mutating func enter(_ address: String) -> Bool {
        let already = open[address, default: 0]
        guard Self.admits(address, alreadyOpen: already, limit: limit) else {
            refused += 1
            return false
        }
        if !Self.isLoopback(address) { open[address] = already + 1 }
        return true
    }

    public mutating func leave(_ address: String) {
        guard let count = open[address] else { return }
        open[address] = count > 1 ? count - 1 : nil
    }

    /// Connections counted for `address` now.
    public func count(_ address: String) -> Int { open[address] ?? 0 }

    /// The rule itself, for a server that keeps its own table of connections.
    public static func admits(_ address: String, alreadyOpen: Int, limit: Int) -> Bool {
        isLoopback(address) || alreadyOpen < limit
    }

    /// 127.0.0.0/8, ::1 and IPv4-mapped 127.x, as SwiftNIO writes them.
    public static func isLoopback(_ address: String) -> Bool {
        address.hasPrefix("127.") || address == "::1" || address.hasPrefix("::ffff:127.")
    }
}
