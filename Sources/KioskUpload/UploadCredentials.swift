import Foundation
import Glibc
import KioskCore

/// The secret access key, read once at start from `[upload] secret_access_key_file`.
public enum UploadCredentials {
    /// The longest secret accepted (AWS's are 40 characters; others up to a few hundred).
    static let maximumBytes = 4096

    /// Reads the secret: the file's first line, surrounding white space removed.
    /// - Throws: `UploadError.credentials` naming the key and the fix when the file is
    ///   missing, unreadable, empty or not a short text file.
    public static func secret(fromFile path: String) throws(UploadError) -> String {
        let key = "[upload] secret_access_key_file"
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else {
            let code = errno
            let fix = code == ENOENT
                ? "create it with the bucket user's secret key on one line (and chmod 600 it), or correct the path"
                : "it must be readable by the user kioskcam runs as (kioskcam): `chown kioskcam FILE; chmod 600 FILE`"
            throw UploadError(.credentials, "\(key) = \"\(path)\" cannot be read: \(String(cString: strerror(code))); \(fix)")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw UploadError(.credentials, "\(key) = \"\(path)\" is not a regular file: name the file that holds the secret key")
        }
        var bytes = [UInt8](repeating: 0, count: maximumBytes + 1)
        var count = 0
        while count < bytes.count {
            let got = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + count, $0.count - count) }
            if got < 0 {
                if errno == EINTR { continue }
                throw UploadError(.credentials, "\(key) = \"\(path)\" cannot be read: \(String(cString: strerror(errno))); check its permissions")
            }
            if got == 0 { break }
            count += got
        }
        guard count <= maximumBytes else {
            throw UploadError(.credentials, "\(key) = \"\(path)\" is larger than \(maximumBytes) bytes: it must hold only the secret key, on one line")
        }
        let text = String(decoding: bytes[..<count], as: UTF8.self)
        let firstLine = text.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        let secret = firstLine.trimmingCharacters(in: .whitespaces)
        guard !secret.isEmpty else {
            throw UploadError(.credentials, "\(key) = \"\(path)\" is empty: put the bucket user's secret access key in it, on one line")
        }
        guard secret.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7f }) else {
            throw UploadError(.credentials, "\(key) = \"\(path)\": the secret key holds spaces or characters other than printable ASCII; put only the key on the first line")
        }
        return secret
    }
}
