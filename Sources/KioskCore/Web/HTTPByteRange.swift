import Foundation

/// One `Range: bytes=…` request (RFC 9110 §14.1.2), resolved against a file's size.
///
/// Players (a `<video>` seeking, Home Assistant, curl -C) ask for one range; several
/// ranges in one request would need a multipart answer, which no player needs, so the
/// whole file is sent instead (allowed: a server may ignore Range).
public enum HTTPByteRange: Equatable, Sendable {
    /// No usable Range: answer 200 with the whole file.
    case whole
    /// Answer 206 with bytes `first...last` (inclusive).
    case partial(first: Int64, last: Int64)
    /// Answer 416 with `Content-Range: bytes */size`.
    case unsatisfiable

    /// Resolves the header's value against `size`.
    /// - Parameters:
    ///   - header: The Range header's value, or nil.
    ///   - size: The file's size in bytes (≥ 0).
    public static func resolve(_ header: String?, size: Int64) -> HTTPByteRange {
        guard let header, size >= 0 else { return .whole }
        let text = header.trimmingCharacters(in: .whitespaces)
        guard text.count <= 200, text.lowercased().hasPrefix("bytes=") else { return .whole }
        let spec = text.dropFirst("bytes=".count).trimmingCharacters(in: .whitespaces)
        guard !spec.contains(",") else { return .whole }
        guard let dash = spec.firstIndex(of: "-") else { return .whole }
        let firstText = spec[..<dash].trimmingCharacters(in: .whitespaces)
        let lastText = spec[spec.index(after: dash)...].trimmingCharacters(in: .whitespaces)
        if firstText.isEmpty {
            // bytes=-N: the last N bytes.
            guard let suffix = digits(lastText) else { return .whole }
            guard suffix > 0, size > 0 else { return .unsatisfiable }
            return .partial(first: max(0, size - suffix), last: size - 1)
        }
        guard let first = digits(firstText) else { return .whole }
        let last: Int64
        if lastText.isEmpty {
            last = size - 1
        } else {
            guard let value = digits(lastText) else { return .whole }
            guard value >= first else { return .whole }
            last = min(value, size - 1)
        }
        guard first < size else { return .unsatisfiable }
        return .partial(first: first, last: last)
    }

    /// A run of ASCII digits as a number, nil when empty, not digits or above 2^62.
    private static func digits(_ text: String) -> Int64? {
        guard !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        return Int64(text)
    }
}

/// Parses `If-None-Match` / `If-Range` comparisons against our strong ETags.
public enum HTTPETag {
    /// The ETag of a library file: its size and modification time, which change whenever a
    /// salvage or a re-encode replaces it (files are written once, then only moved).
    public static func of(size: Int64, modifiedSeconds: Int64, modifiedNanoseconds: Int64) -> String {
        "\"\(String(size, radix: 16))-\(String(modifiedSeconds, radix: 16))-\(String(modifiedNanoseconds, radix: 16))\""
    }

    /// Whether an `If-None-Match` value names `etag` (or is `*`).
    public static func matches(ifNoneMatch header: String?, etag: String) -> Bool {
        guard let header else { return false }
        return header.split(separator: ",").contains { part in
            let tag = part.trimmingCharacters(in: .whitespaces)
            return tag == "*" || tag == etag || tag == "W/" + etag
        }
    }
}
