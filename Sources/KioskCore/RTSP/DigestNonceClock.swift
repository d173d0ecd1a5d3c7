/// The clock half of the Digest nonces the web gate makes (`<seconds hex>.<tag hex>`, the
/// tag an HMAC of the stamp): whole seconds of the system's uptime, in lowercase hex, so
/// that no table of nonces is kept. A client sends the nonce back, so its stamp is read
/// as outside data: 1 to 13 hex digits (below 2^52 s, where a `Double` still holds every
/// second exactly), written as we write it, or it is no nonce of ours. A 16-digit stamp
/// once reached `UInt64(Double(made))`, which traps above 2^64 − 1024: any client could
/// stop the daemon before logging in.
public enum DigestNonceClock {
    /// How long a nonce is good for.
    public static let lifetimeSeconds = 300.0
    /// Stamps are below this: 13 hex digits.
    public static let limit: UInt64 = 1 << 52

    /// The stamp for an uptime in seconds; one out of range (negative, not finite, over
    /// the limit) is clamped, never trapped on.
    public static func stamp(uptime: Double) -> String {
        let seconds = uptime.isFinite ? min(max(0, uptime), Double(limit - 1)) : 0
        return String(UInt64(seconds), radix: 16)
    }

    /// The seconds a stamp stands for, when it is one `stamp(uptime:)` could have written;
    /// nil otherwise (too long, not hex, a sign, leading zeros, upper case).
    public static func seconds(in stamp: Substring) -> UInt64? {
        guard (1...13).contains(stamp.utf8.count),
              stamp.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }),
              let seconds = UInt64(stamp, radix: 16), seconds < limit,
              String(seconds, radix: 16) == stamp
        else { return nil }
        return seconds
    }

    /// Whether a nonce stamped at `seconds` is still good at uptime `now`: under
    /// `lifetimeSeconds` old and not from the future (one second of slack).
    public static func isFresh(madeAt seconds: UInt64, now: Double) -> Bool {
        let made = Double(min(seconds, limit))
        return now - made <= lifetimeSeconds && made <= now + 1
    }
}
