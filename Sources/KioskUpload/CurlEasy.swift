import KioskCore
import CCurl
import Glibc

/// One libcurl easy handle, owned by one transfer: cleaned up when it goes out of scope.
/// Every option is set through a throwing call that names it, so a libcurl built without
/// a feature (AWS SigV4 needs 7.75) is a clear error, not a silent unsigned request.
struct CurlEasy: ~Copyable {
    let handle: UnsafeMutableRawPointer
    /// libcurl writes its detailed message here (`CURLOPT_ERRORBUFFER`).
    private let errorBuffer: UnsafeMutablePointer<CChar>
    /// Header lists set on the handle; they must outlive the transfer.
    private var lists: [UnsafeMutablePointer<curl_slist>] = []

    /// Opens libcurl the first time (it is not linked: CCurl.h says why); nil once it is
    /// ready, else why it is not.
    static let loadFailure: String? = {
        var message = [CChar](repeating: 0, count: 256)
        guard kioskcam_curl_load(&message, UInt(message.count)) != 0 else { return nil }
        return String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }()

    /// - Throws: `UploadError.configuration` when libcurl cannot be loaded or initialised.
    init() throws(UploadError) {
        if let failure = Self.loadFailure {
            throw UploadError(.configuration, "libcurl is needed for offsite copies and could not be loaded (\(failure)): "
                              + "install Debian's libcurl4 (apt-get install libcurl4)")
        }
        guard let handle = kioskcam_curl_easy_init() else {
            throw UploadError(.configuration, "libcurl could not be initialised (out of memory?): restart kioskcam")
        }
        self.handle = handle
        errorBuffer = .allocate(capacity: 256)  // CURL_ERROR_SIZE
        errorBuffer.initialize(repeating: 0, count: 256)
        _ = kioskcam_curl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer)
        // No signals from libcurl's resolver in a threaded daemon.
        _ = kioskcam_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
    }

    deinit {
        kioskcam_curl_easy_cleanup(handle)
        for list in lists { kioskcam_curl_slist_free_all(list) }
        errorBuffer.deallocate()
    }

    mutating func set(_ option: CURLoption, _ value: Int, _ name: String) throws(UploadError) {
        try check(kioskcam_curl_setopt_long(handle, option, value), name)
    }

    mutating func set(_ option: CURLoption, offset value: Int64, _ name: String) throws(UploadError) {
        try check(kioskcam_curl_setopt_off(handle, option, curl_off_t(value)), name)
    }

    /// libcurl copies strings (since 7.17), so `value` need not outlive the call.
    mutating func set(_ option: CURLoption, _ value: String, _ name: String) throws(UploadError) {
        try check(kioskcam_curl_setopt_string(handle, option, value), name)
    }

    mutating func set(_ option: CURLoption, pointer: UnsafeMutableRawPointer?, _ name: String) throws(UploadError) {
        try check(kioskcam_curl_setopt_pointer(handle, option, pointer), name)
    }

    mutating func setHeaders(_ headers: [String]) throws(UploadError) {
        var list: UnsafeMutablePointer<curl_slist>?
        for header in headers {
            guard let appended = kioskcam_curl_slist_append(list, header) else {
                if let list { kioskcam_curl_slist_free_all(list) }
                throw UploadError(.configuration, "libcurl could not build the request headers (out of memory?)")
            }
            list = appended
        }
        guard let list else { return }
        lists.append(list)
        try check(kioskcam_curl_setopt_slist(handle, CURLOPT_HTTPHEADER, list), "CURLOPT_HTTPHEADER")
    }

    private func check(_ code: CURLcode, _ name: String) throws(UploadError) {
        guard code == CURLE_OK else {
            throw UploadError(.configuration, "libcurl refused \(name): \(String(cString: kioskcam_curl_easy_strerror(code))) "
                              + "(libcurl 7.75 or newer with HTTPS is needed: install Debian's libcurl4)")
        }
    }

    /// Runs the transfer on the calling thread.
    /// - Returns: libcurl's result code and its detailed message.
    func perform() -> (code: CURLcode, detail: String) {
        errorBuffer[0] = 0
        let code = kioskcam_curl_easy_perform(handle)
        let detail = errorBuffer[0] != 0 ? String(cString: errorBuffer) : String(cString: kioskcam_curl_easy_strerror(code))
        return (code, detail)
    }

    /// The HTTP status of the last response (0: none).
    var responseCode: Int {
        var code = 0
        _ = kioskcam_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &code)
        return code
    }
}
