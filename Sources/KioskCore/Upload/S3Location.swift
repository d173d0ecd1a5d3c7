/// A bucket and key prefix, from `s3://bucket/prefix`, and the object keys and
/// path-style URLs (`endpoint/bucket/key`, which AWS, MinIO, moto and Garage all serve)
/// of library files in it.
///
/// Keys use only letters, digits and `-_./`, so they need no escaping in a URL or in
/// the signature's canonical request.
public struct S3Location: Sendable, Equatable {
    public let bucket: String
    /// Without leading or trailing slash; may be empty.
    public let prefix: String

    /// Parses `s3://bucket`, `s3://bucket/`, `s3://bucket/some/prefix/`; nil for a
    /// bucket name S3 would refuse (3…63 of lowercase letters, digits, `.` and `-`,
    /// starting and ending with a letter or digit) or a prefix with other characters,
    /// an empty segment (`a//b`) or a `.`/`..` segment.
    public init?(url: String) {
        guard url.hasPrefix("s3://") else { return nil }
        let rest = url.dropFirst(5)
        let bucket = String(rest.prefix { $0 != "/" })
        let afterBucket = rest.dropFirst(bucket.count)
        guard afterBucket.isEmpty || !afterBucket.dropFirst().hasPrefix("/") else { return nil }
        var prefix = String(afterBucket.dropFirst())
        while prefix.hasSuffix("/") { prefix.removeLast() }
        let bucketBytes = Array(bucket.utf8)
        guard (3...63).contains(bucketBytes.count),
              bucketBytes.allSatisfy({ Self.isLowercaseLetterOrDigit($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") }),
              let first = bucketBytes.first, let last = bucketBytes.last,
              Self.isLowercaseLetterOrDigit(first), Self.isLowercaseLetterOrDigit(last),
              !bucket.contains(".."), prefix.utf8.count <= 512 else { return nil }
        if !prefix.isEmpty {
            for segment in prefix.split(separator: "/", omittingEmptySubsequences: false) {
                guard !segment.isEmpty, segment != ".", segment != "..",
                      segment.utf8.allSatisfy({ Self.isLetterOrDigit($0) || "-_.".utf8.contains($0) }) else { return nil }
            }
        }
        self.bucket = bucket
        self.prefix = prefix
    }

    /// The object key of a library file: `<prefix>/<device-id>/video/20261122/101455.mp4`.
    /// The device id keeps the boards of a fleet apart in one bucket; an id that is not
    /// plain letters, digits and hyphens is left out.
    public func key(for file: LibraryFilePath, deviceID: String?) -> String {
        var parts: [String] = []
        if !prefix.isEmpty { parts.append(prefix) }
        if let deviceID, (1...64).contains(deviceID.utf8.count),
           deviceID.utf8.allSatisfy({ Self.isLetterOrDigit($0) || $0 == UInt8(ascii: "-") }) {
            parts.append(deviceID)
        }
        parts.append(file.relativePath)
        return parts.joined(separator: "/")
    }

    /// The path-style URL of the bucket: `http://127.0.0.1:9000/bucket`.
    public func bucketURL(endpoint: String) -> String {
        var base = endpoint
        while base.hasSuffix("/") { base.removeLast() }
        return base + "/" + bucket
    }

    /// The path-style URL of an object.
    public func objectURL(endpoint: String, key: String) -> String { bucketURL(endpoint: endpoint) + "/" + key }

    /// `http://host[:port]` or `https://host[:port]`, nothing after the port but an
    /// optional slash: a host of letters, digits, `.`, `-`, or a bracketed IPv6 address.
    public static func isValidEndpoint(_ text: String) -> Bool {
        let scheme: Substring
        if text.hasPrefix("http://") { scheme = "http://" } else if text.hasPrefix("https://") { scheme = "https://" } else { return false }
        var authority = text.dropFirst(scheme.count)
        while authority.hasSuffix("/") { authority = authority.dropLast() }
        guard !authority.isEmpty, authority.utf8.count <= 255 else { return false }
        var host = authority
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return false }
            let inside = authority[authority.index(after: authority.startIndex)..<close]
            guard !inside.isEmpty, inside.utf8.allSatisfy({ isHexDigit($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") }) else { return false }
            let after = authority[authority.index(after: close)...]
            guard after.isEmpty || isPort(after) else { return false }
            return true
        }
        if let colon = authority.firstIndex(of: ":") {
            guard isPort(authority[colon...]) else { return false }
            host = authority[..<colon]
        }
        return !host.isEmpty && host.utf8.allSatisfy { isLetterOrDigit($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") }
    }

    /// `:1` … `:65535`.
    private static func isPort(_ text: Substring) -> Bool {
        guard text.first == ":", let port = Int(text.dropFirst()), text.count <= 6 else { return false }
        return (1...65_535).contains(port)
    }

    static func isLowercaseLetterOrDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    static func isLetterOrDigit(_ byte: UInt8) -> Bool {
        isLowercaseLetterOrDigit(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }
}
