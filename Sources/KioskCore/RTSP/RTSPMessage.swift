import Foundation

/// One RTSP 1.0 request (RFC 2326 §6) as a client sent it: what the server acts on.
public struct RTSPRequest: Sendable, Equatable {
    public var method: String
    /// The request URI as written (`rtsp://cam:8554/live/trackID=0`, or `*` for OPTIONS).
    public var uri: String
    /// Headers in order, names as sent.
    public var headers: [(name: String, value: String)]
    public var cseq: UInt32
    public var body: [UInt8]

    public init(method: String, uri: String, headers: [(name: String, value: String)], cseq: UInt32, body: [UInt8] = []) {
        self.method = method
        self.uri = uri
        self.headers = headers
        self.cseq = cseq
        self.body = body
    }

    /// The first header called `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.lowercased() == wanted }?.value
    }

    /// The URI's path without the scheme and authority (`/live/trackID=0`), the query and
    /// a trailing slash dropped; "" for `*` or a URI that is not rtsp://.
    public var path: String { RTSPRequest.path(of: uri) }

    public static func path(of uri: String) -> String {
        var rest = Substring(uri)
        let lowered = uri.lowercased()
        if let scheme = ["rtsp://", "rtspu://", "rtsps://"].first(where: { lowered.hasPrefix($0) }) {
            rest = rest.dropFirst(scheme.count)
            guard let slash = rest.firstIndex(of: "/") else { return "/" }
            rest = rest[slash...]
        } else if !rest.hasPrefix("/") {
            return ""
        }
        if let query = rest.firstIndex(of: "?") { rest = rest[..<query] }
        while rest.count > 1, rest.hasSuffix("/") { rest = rest.dropLast() }
        return String(rest)
    }

    public static func == (a: RTSPRequest, b: RTSPRequest) -> Bool {
        a.method == b.method && a.uri == b.uri && a.cseq == b.cseq && a.body == b.body
            && a.headers.map(\.name) == b.headers.map(\.name) && a.headers.map(\.value) == b.headers.map(\.value)
    }
}

/// What comes in on an RTSP connection, in order: requests, and — once a client plays
/// over TCP — its interleaved RTCP (`$`, channel, 16-bit length, bytes; RFC 2326 §10.12).
public enum RTSPInput: Sendable, Equatable {
    case request(RTSPRequest)
    case interleaved(channel: UInt8, bytes: [UInt8])
    /// The connection sent something no RTSP server accepts: answer `status` (with the
    /// CSeq when one was read) and close. Nothing after it is read.
    case malformed(status: Int, reason: String, cseq: UInt32?)
}

/// Reads an RTSP connection's bytes as they arrive (any split) into `RTSPInput`s.
///
/// Bounded everywhere, because anything on the network may send anything: a line over
/// `maximumLineBytes` (413), more than `maximumHeaders` headers, a body over
/// `maximumBodyBytes`, a request without a CSeq or with one that is not a 32-bit
/// number, a version other than RTSP/1.0 (505) — each is one `.malformed` and the end
/// of the connection. Pure; nothing can trap.
public struct RTSPRequestParser: Sendable {
    public static let maximumLineBytes = 8 * 1024
    public static let maximumHeaders = 64
    public static let maximumBodyBytes = 64 * 1024
    /// Interleaved frames from a client (RTCP receiver reports) are small; a bigger
    /// one is not RTSP.
    public static let maximumInterleavedBytes = 8 * 1024

    private var buffer: [UInt8] = []
    private var start = 0
    private var failed = false

    public init() {}

    /// Bytes held but not yet a whole input.
    public var pendingBytes: Int { buffer.count - start }

    /// Adds bytes and returns every input they complete.
    public mutating func feed(_ bytes: some Sequence<UInt8>) -> [RTSPInput] {
        guard !failed else { return [] }
        buffer.append(contentsOf: bytes)
        var inputs: [RTSPInput] = []
        while !failed, let input = next() { inputs.append(input) }
        if start > 4096 && start * 2 > buffer.count {
            buffer.removeFirst(start)
            start = 0
        }
        return inputs
    }

    private mutating func next() -> RTSPInput? {
        // Blank lines between requests are allowed (RFC 2326 §15.1, as in HTTP).
        while start < buffer.count, buffer[start] == 0x0D || buffer[start] == 0x0A { start += 1 }
        guard start < buffer.count else { return nil }
        if buffer[start] == UInt8(ascii: "$") {
            guard buffer.count - start >= 4 else { return nil }
            let channel = buffer[start + 1]
            let length = Int(buffer[start + 2]) << 8 | Int(buffer[start + 3])
            guard length <= Self.maximumInterleavedBytes else { return fail(413, "an interleaved frame of \(length) bytes", cseq: nil) }
            guard buffer.count - start - 4 >= length else { return nil }
            let bytes = Array(buffer[(start + 4)..<(start + 4 + length)])
            start += 4 + length
            return .interleaved(channel: channel, bytes: bytes)
        }
        // The head: lines up to an empty one.
        var lines: [String] = []
        var position = start
        while true {
            guard let end = lineEnd(from: position) else {
                // + 1: the line's CR may have come without its LF yet.
                if buffer.count - position > Self.maximumLineBytes + 1 { return fail(413, "a line longer than \(Self.maximumLineBytes) bytes", cseq: nil) }
                return nil
            }
            let lineBytes = buffer[position..<end.contentEnd]
            guard lineBytes.count <= Self.maximumLineBytes else { return fail(413, "a line longer than \(Self.maximumLineBytes) bytes", cseq: nil) }
            position = end.next
            if lineBytes.isEmpty { break }
            guard lines.count <= Self.maximumHeaders else { return fail(400, "more than \(Self.maximumHeaders) headers", cseq: nil) }
            guard let line = String(validating: lineBytes, as: UTF8.self), !line.utf8.contains(0) else {
                return fail(400, "a line that is not UTF-8 text", cseq: nil)
            }
            lines.append(line)
        }
        guard let requestLine = lines.first else { return fail(400, "an empty request", cseq: nil) }
        var headers: [(name: String, value: String)] = []
        var cseqText: String?
        var contentLength = 0
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { return fail(400, "a header line without a colon", cseq: nil) }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty, !name.contains(" ") else { return fail(400, "a header without a name", cseq: nil) }
            headers.append((name, value))
            switch name.lowercased() {
            case "cseq": cseqText = value
            case "content-length":
                guard let length = Int(value), length >= 0 else { return fail(400, "Content-Length \"\(value.prefix(20))\" is not a length", cseq: nil) }
                guard length <= Self.maximumBodyBytes else { return fail(413, "a body of \(length) bytes", cseq: nil) }
                contentLength = length
            default: break
            }
        }
        guard let cseqText else { return fail(400, "no CSeq header", cseq: nil) }
        guard let cseq = UInt32(cseqText) else { return fail(400, "CSeq \"\(cseqText.prefix(20))\" is not a number below 2^32", cseq: nil) }
        let parts = requestLine.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 3 else { return fail(400, "the request line is not METHOD URI RTSP/1.0", cseq: cseq) }
        guard parts[2] == "RTSP/1.0" else { return fail(505, "version \(parts[2].prefix(20)) (only RTSP/1.0 is served)", cseq: cseq) }
        let method = String(parts[0])
        guard method.utf8.count <= 32, method.utf8.allSatisfy({ (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) || $0 == UInt8(ascii: "_") }) else {
            return fail(400, "a method that is not a word in capitals", cseq: cseq)
        }
        guard buffer.count - position >= contentLength else { return nil }
        let body = Array(buffer[position..<(position + contentLength)])
        start = position + contentLength
        return .request(RTSPRequest(method: method, uri: String(parts[1]), headers: headers, cseq: cseq, body: body))
    }

    /// The end of the line starting at `from` (CRLF, or a lone LF), or nil when it has not all arrived.
    private func lineEnd(from: Int) -> (contentEnd: Int, next: Int)? {
        var index = from
        while index < buffer.count {
            if buffer[index] == 0x0A {
                let contentEnd = index > from && buffer[index - 1] == 0x0D ? index - 1 : index
                return (contentEnd, index + 1)
            }
            index += 1
        }
        return nil
    }

    private mutating func fail(_ status: Int, _ reason: String, cseq: UInt32?) -> RTSPInput {
        failed = true
        buffer = []
        start = 0
        return .malformed(status: status, reason: reason, cseq: cseq)
    }
}

/// An RTSP response as bytes: the status line, CSeq first, the headers, the body.
public struct RTSPResponse: Sendable, Equatable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The response to the request with `cseq` (nil when none could be read).
    public func bytes(cseq: UInt32?, server: String = "KioskCam") -> [UInt8] {
        var text = "RTSP/1.0 \(status) \(Self.reason(status))\r\n"
        if let cseq { text += "CSeq: \(cseq)\r\n" }
        text += "Server: \(server)\r\n"
        for (name, value) in headers {
            // A value never carries a line break into the head.
            text += "\(name): \(Self.withoutLineBreaks(value))\r\n"
        }
        if !body.isEmpty || status >= 400 { text += "Content-Length: \(body.count)\r\n" }
        text += "\r\n"
        return Array(text.utf8) + body
    }

    /// `text` without CR and LF (scalars: "\r\n" is one Character, which a filter on
    /// Characters would keep).
    public static func withoutLineBreaks(_ text: String) -> String {
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: text.unicodeScalars.filter { $0 != "\r" && $0 != "\n" })
        return String(scalars)
    }

    public static func == (a: RTSPResponse, b: RTSPResponse) -> Bool {
        a.status == b.status && a.body == b.body && a.headers.map(\.name) == b.headers.map(\.name)
            && a.headers.map(\.value) == b.headers.map(\.value)
    }

    public static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 413: "Request Entity Too Large"
        case 453: "Not Enough Bandwidth"
        case 454: "Session Not Found"
        case 455: "Method Not Valid in This State"
        case 459: "Aggregate Operation Not Allowed"
        case 461: "Unsupported Transport"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 503: "Service Unavailable"
        case 505: "RTSP Version Not Supported"
        default: "Error"
        }
    }
}
