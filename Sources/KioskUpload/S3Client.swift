import CCurl
import Crypto
import Foundation
import Glibc
import KioskCore
import KioskRecording

/// Thin Swift over libcurl for the three S3 requests kioskcam makes: PUT an object
/// (streamed from its file), PUT a bucket (tests, first set-up) and GET an object
/// (tests). Requests are path-style (`endpoint/bucket/key`) and signed by libcurl's own
/// AWS Signature V4 (`CURLOPT_AWS_SIGV4`), with the payload unsigned
/// (`x-amz-content-sha256: UNSIGNED-PAYLOAD`) and its MD5 in `Content-MD5`, which the
/// server checks.
public struct S3Client: Sendable {
    public struct Settings: Sendable, Equatable {
        public var endpoint: String
        public var location: S3Location
        public var region: String
        public var accessKeyID: String
        public var secretAccessKey: String

        public init(endpoint: String, location: S3Location, region: String, accessKeyID: String, secretAccessKey: String) {
            self.endpoint = endpoint
            self.location = location
            self.region = region
            self.accessKeyID = accessKeyID
            self.secretAccessKey = secretAccessKey
        }
    }

    /// A checked copy.
    public struct PutResult: Sendable, Equatable {
        public var etag: String
        public var bytes: Int64
        public var md5Hex: String
    }

    public let settings: Settings
    /// Seconds to connect; a transfer slower than 1 byte/s for `stallSeconds` is dropped.
    public var connectTimeoutSeconds = 15
    public var stallSeconds = 60

    public init(_ settings: Settings) { self.settings = settings }

    /// Uploads the file at `path` as `key`, streaming it from disk (64 KiB at a time),
    /// and checks the copy: the server verifies `Content-MD5`, and the returned ETag must
    /// be the file's MD5 (when it is a plain MD5: servers with KMS encryption return another).
    /// - Parameters:
    ///   - maxBytesPerSecond: Bandwidth cap (nil: none).
    ///   - shouldCancel: Asked while sending; true ends the transfer (`.cancelled`).
    ///   - progress: Bytes sent so far.
    /// - Throws: `UploadError`: `.file` (the file cannot be read), `.network`, `.server`
    ///   (with the HTTP status and S3's error code), `.integrity`, `.cancelled`.
    public func putFile(_ path: String, key: String, contentType: String, maxBytesPerSecond: Int64? = nil,
                        shouldCancel: @escaping () -> Bool = { false },
                        progress: @escaping (Int64) -> Void = { _ in }) throws(UploadError) -> PutResult {
        let digest = try FileDigest.md5(of: path, shouldCancel: shouldCancel)
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw UploadError.fileFailure("open", path) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { throw UploadError.fileFailure("read", path) }
        let size = Int64(info.st_size)
        guard size == digest.bytes else {
            throw UploadError(.file, "\(path) changed while it was being read (\(digest.bytes) then \(size) bytes); it is tried again later")
        }

        let transfer = Transfer(fd: fd, shouldCancel: shouldCancel, progress: progress)
        let context = Unmanaged.passRetained(transfer)
        defer { context.release() }
        var easy = try CurlEasy()
        try configure(&easy, url: settings.location.objectURL(endpoint: settings.endpoint, key: key), context: context.toOpaque())
        try easy.set(CURLOPT_UPLOAD, 1, "CURLOPT_UPLOAD")
        try easy.set(CURLOPT_INFILESIZE_LARGE, offset: size, "CURLOPT_INFILESIZE_LARGE")
        try easy.set(CURLOPT_READDATA, pointer: context.toOpaque(), "CURLOPT_READDATA")
        try check(kioskcam_curl_setopt_read(easy.handle, CURLOPT_READFUNCTION, readCallback), "CURLOPT_READFUNCTION")
        if let maxBytesPerSecond, maxBytesPerSecond > 0 {
            try easy.set(CURLOPT_MAX_SEND_SPEED_LARGE, offset: maxBytesPerSecond, "CURLOPT_MAX_SEND_SPEED_LARGE")
        }
        try easy.setHeaders(["Content-MD5: " + Data(digest.md5).base64EncodedString(),
                             "Content-Type: " + contentType, "x-amz-content-sha256: UNSIGNED-PAYLOAD"])
        let status = try run(easy, transfer, what: "upload of \(path) to \(key)")
        guard (200..<300).contains(status) else { throw serverError(status, transfer, what: "upload of \(key)") }
        let etag = transfer.etag.trimmingCharacters(in: CharacterSet(charactersIn: "\" ")).lowercased()
        let hex = digest.md5.map { String(format: "%02x", $0) }.joined()
        if etag.utf8.count == 32, etag.utf8.allSatisfy({ isxdigit(Int32($0)) != 0 }), etag != hex {
            throw UploadError(.integrity, "the copy of \(path) at \(key) does not match the file (ETag \(etag), MD5 \(hex)); it is uploaded again")
        }
        return PutResult(etag: etag.isEmpty ? hex : etag, bytes: size, md5Hex: hex)
    }

    /// Creates the bucket (path-style PUT); one that exists already and is ours is fine.
    /// - Throws: `UploadError` `.network` or `.server`.
    public func createBucket() throws(UploadError) {
        let transfer = Transfer(fd: -1, shouldCancel: { false }, progress: { _ in })
        let context = Unmanaged.passRetained(transfer)
        defer { context.release() }
        var easy = try CurlEasy()
        try configure(&easy, url: settings.location.bucketURL(endpoint: settings.endpoint), context: context.toOpaque())
        try easy.set(CURLOPT_UPLOAD, 1, "CURLOPT_UPLOAD")
        try easy.set(CURLOPT_INFILESIZE_LARGE, offset: 0, "CURLOPT_INFILESIZE_LARGE")
        try easy.set(CURLOPT_READDATA, pointer: context.toOpaque(), "CURLOPT_READDATA")
        try check(kioskcam_curl_setopt_read(easy.handle, CURLOPT_READFUNCTION, readCallback), "CURLOPT_READFUNCTION")
        try easy.setHeaders(["x-amz-content-sha256: UNSIGNED-PAYLOAD"])
        let status = try run(easy, transfer, what: "creating bucket \(settings.location.bucket)")
        guard (200..<300).contains(status) || transfer.s3Code == "BucketAlreadyOwnedByYou" else {
            throw serverError(status, transfer, what: "creating bucket \(settings.location.bucket)")
        }
    }

    /// Downloads an object into memory, at most `maximumBytes` (tests and checks).
    /// - Throws: `UploadError` `.network`, `.server` (404 for a missing key), `.file`
    ///   when the object is larger than `maximumBytes`.
    public func getObject(key: String, maximumBytes: Int = 64 << 20) throws(UploadError) -> [UInt8] {
        let transfer = Transfer(fd: -1, shouldCancel: { false }, progress: { _ in })
        transfer.bodyLimit = maximumBytes
        let context = Unmanaged.passRetained(transfer)
        defer { context.release() }
        var easy = try CurlEasy()
        try configure(&easy, url: settings.location.objectURL(endpoint: settings.endpoint, key: key), context: context.toOpaque())
        try easy.setHeaders(["x-amz-content-sha256: UNSIGNED-PAYLOAD"])
        let status = try run(easy, transfer, what: "download of \(key)")
        guard (200..<300).contains(status) else { throw serverError(status, transfer, what: "download of \(key)") }
        guard !transfer.bodyTruncated else {
            throw UploadError(.file, "\(key) is larger than \(maximumBytes) bytes")
        }
        return transfer.body
    }

    // MARK: One request

    private func configure(_ easy: inout CurlEasy, url: String, context: UnsafeMutableRawPointer) throws(UploadError) {
        try easy.set(CURLOPT_URL, url, "CURLOPT_URL")
        try easy.set(CURLOPT_AWS_SIGV4, "aws:amz:\(settings.region):s3", "CURLOPT_AWS_SIGV4")
        try easy.set(CURLOPT_USERNAME, settings.accessKeyID, "CURLOPT_USERNAME")
        try easy.set(CURLOPT_PASSWORD, settings.secretAccessKey, "CURLOPT_PASSWORD")
        try easy.set(CURLOPT_CONNECTTIMEOUT, connectTimeoutSeconds, "CURLOPT_CONNECTTIMEOUT")
        try easy.set(CURLOPT_LOW_SPEED_LIMIT, 1, "CURLOPT_LOW_SPEED_LIMIT")
        try easy.set(CURLOPT_LOW_SPEED_TIME, stallSeconds, "CURLOPT_LOW_SPEED_TIME")
        // Servers that never answer `Expect: 100-continue` (moto) cost half a second, not one.
        try easy.set(CURLOPT_EXPECT_100_TIMEOUT_MS, 500, "CURLOPT_EXPECT_100_TIMEOUT_MS")
        try easy.set(CURLOPT_WRITEDATA, pointer: context, "CURLOPT_WRITEDATA")
        try check(kioskcam_curl_setopt_write(easy.handle, CURLOPT_WRITEFUNCTION, writeCallback), "CURLOPT_WRITEFUNCTION")
        try easy.set(CURLOPT_HEADERDATA, pointer: context, "CURLOPT_HEADERDATA")
        try check(kioskcam_curl_setopt_write(easy.handle, CURLOPT_HEADERFUNCTION, headerCallback), "CURLOPT_HEADERFUNCTION")
        try easy.set(CURLOPT_XFERINFODATA, pointer: context, "CURLOPT_XFERINFODATA")
        try check(kioskcam_curl_setopt_progress(easy.handle, progressCallback), "CURLOPT_XFERINFOFUNCTION")
        try easy.set(CURLOPT_NOPROGRESS, 0, "CURLOPT_NOPROGRESS")
    }

    private func check(_ code: CURLcode, _ name: String) throws(UploadError) {
        guard code == CURLE_OK else {
            throw UploadError(.configuration, "libcurl refused \(name): \(String(cString: kioskcam_curl_easy_strerror(code)))")
        }
    }

    /// Performs the request; libcurl's failures mapped to errors with their fix.
    /// - Returns: The HTTP status.
    private func run(_ easy: borrowing CurlEasy, _ transfer: Transfer, what: String) throws(UploadError) -> Int {
        let (code, detail) = easy.perform()
        if let readError = transfer.readError { throw readError }
        switch code {
        case CURLE_OK:
            return easy.responseCode
        case CURLE_ABORTED_BY_CALLBACK:
            throw UploadError(.cancelled, "\(what) was stopped (kioskcam is stopping); it is done at the next start")
        case CURLE_COULDNT_RESOLVE_HOST:
            throw UploadError(.network, "\(what) failed: cannot resolve the host of \(settings.endpoint) (\(detail)): check [upload] endpoint and the network's DNS")
        case CURLE_COULDNT_CONNECT:
            throw UploadError(.network, "\(what) failed: cannot connect to \(settings.endpoint) (\(detail)): check that the server is up and [upload] endpoint is right")
        case CURLE_OPERATION_TIMEDOUT:
            throw UploadError(.network, "\(what) failed: the connection to \(settings.endpoint) stalled (\(detail)); retried later")
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE:
            throw UploadError(.network, "\(what) failed: TLS with \(settings.endpoint) failed (\(detail)): check the board's clock and CA certificates (ca-certificates)")
        case CURLE_UNSUPPORTED_PROTOCOL:
            throw UploadError(.configuration, "\(what) failed: this libcurl cannot speak \(settings.endpoint)'s protocol (\(detail))")
        default:
            throw UploadError(.network, "\(what) failed: \(detail) (connection to \(settings.endpoint) lost?); retried later")
        }
    }

    private func serverError(_ status: Int, _ transfer: Transfer, what: String) -> UploadError {
        let code = transfer.s3Code
        let message = transfer.s3Message.map { ": \($0)" } ?? ""
        let named = code.map { "\(status) \($0)" } ?? "HTTP \(status)"
        let fix: String
        switch (status, code) {
        case (_, "NoSuchBucket"?):
            fix = "bucket \(settings.location.bucket) does not exist at \(settings.endpoint): create it, or fix [upload] url"
        case (403, _), (_, "SignatureDoesNotMatch"?), (_, "InvalidAccessKeyId"?):
            fix = "the server refused the request: check [upload] access_key_id, the secret in secret_access_key_file, region and the board's clock"
        case (_, "BadDigest"?), (_, "InvalidDigest"?):
            fix = "the data arrived damaged; it is uploaded again"
        case (500..., _):
            fix = "the server is in trouble; retried later"
        default:
            fix = "retried later"
        }
        return UploadError(status == 400 && (code == "BadDigest" || code == "InvalidDigest") ? .integrity : .server,
                           "\(what) failed: the server answered \(named)\(message): \(fix)", httpStatus: status)
    }
}

/// What one request's callbacks share: the file being sent, the answer being read.
/// Used on the one thread that runs the request.
final class Transfer {
    let fd: Int32
    let shouldCancel: () -> Bool
    let progress: (Int64) -> Void
    var body: [UInt8] = []
    var bodyLimit = 64 << 10
    var bodyTruncated = false
    var etag = ""
    var readError: UploadError?
    var lastProgress: Int64 = -1

    init(fd: Int32, shouldCancel: @escaping () -> Bool, progress: @escaping (Int64) -> Void) {
        self.fd = fd
        self.shouldCancel = shouldCancel
        self.progress = progress
    }

    /// S3's `<Code>` from an error body.
    var s3Code: String? { element("Code") }
    var s3Message: String? { element("Message").map { String($0.prefix(200)) } }

    private func element(_ name: String) -> String? {
        let text = String(decoding: body.prefix(64 << 10), as: UTF8.self)
        guard let open = text.range(of: "<\(name)>"), let close = text.range(of: "</\(name)>", range: open.upperBound..<text.endIndex) else { return nil }
        return String(text[open.upperBound..<close.lowerBound])
    }
}

private let readCallback: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = { buffer, size, count, context in
    guard let buffer, let context else { return 0x1000_0000 }  // CURL_READFUNC_ABORT
    let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
    guard transfer.fd >= 0 else { return 0 }
    let wanted = size.multipliedReportingOverflow(by: count)
    guard !wanted.overflow else { return 0x1000_0000 }
    while true {
        let got = read(transfer.fd, buffer, wanted.partialValue)
        if got >= 0 { return got }
        if errno == EINTR { continue }
        transfer.readError = UploadError.fileFailure("read", "the file being uploaded")
        return 0x1000_0000
    }
}

private let writeCallback: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = { data, size, count, context in
    guard let context else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
    let total = size.multipliedReportingOverflow(by: count)
    guard !total.overflow else { return 0 }
    if let data {
        let room = max(0, transfer.bodyLimit - transfer.body.count)
        if total.partialValue > room { transfer.bodyTruncated = true }
        data.withMemoryRebound(to: UInt8.self, capacity: total.partialValue) {
            transfer.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: min(room, total.partialValue)))
        }
    }
    return total.partialValue
}

private let headerCallback: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = { data, size, count, context in
    guard let context else { return 0 }
    let total = size.multipliedReportingOverflow(by: count)
    guard !total.overflow else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
    if let data, total.partialValue > 5, total.partialValue < 1024 {
        let line = data.withMemoryRebound(to: UInt8.self, capacity: total.partialValue) {
            String(decoding: UnsafeBufferPointer(start: $0, count: total.partialValue), as: UTF8.self)
        }
        if line.lowercased().hasPrefix("etag:") {
            transfer.etag = line.dropFirst(5).trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }
    return total.partialValue
}

private let progressCallback: @convention(c) (UnsafeMutableRawPointer?, curl_off_t, curl_off_t, curl_off_t, curl_off_t) -> Int32 = { context, _, _, _, sent in
    guard let context else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
    if transfer.shouldCancel() { return 1 }
    if Int64(sent) != transfer.lastProgress {
        transfer.lastProgress = Int64(sent)
        transfer.progress(Int64(sent))
    }
    return 0
}

/// The MD5 of a file, read in 64 KiB pieces (memory stays bounded whatever its size).
enum FileDigest {
    static func md5(of path: String, shouldCancel: () -> Bool = { false }) throws(UploadError) -> (md5: [UInt8], bytes: Int64) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw UploadError.fileFailure("open", path) }
        defer { close(fd) }
        var hasher = Insecure.MD5()
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        var total: Int64 = 0
        while true {
            let got = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if got < 0 {
                if errno == EINTR { continue }
                throw UploadError.fileFailure("read", path)
            }
            if got == 0 { break }
            if shouldCancel() { throw UploadError(.cancelled, "reading \(path) was stopped (kioskcam is stopping)") }
            buffer.withUnsafeBytes { hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[..<got])) }
            total += Int64(got)
        }
        return (Array(hasher.finalize()), total)
    }

}
