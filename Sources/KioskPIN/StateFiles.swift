import Glibc

/// Small root-only files in the state directory, read and written whole.
enum StateFiles {
    /// Creates `path` with mode 0700 if it is missing; an existing folder is left as it is.
    /// - Throws: `PinStoreError` when the folder cannot be created (no permission, missing parent).
    static func ensureDirectory(_ path: String) throws(PinStoreError) {
        var info = stat()
        if stat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else {
                throw PinStoreError(.io, operation: "use the state directory", path: path, detail: "not a folder",
                                    hint: "check [control] state_directory")
            }
            return
        }
        guard errno == ENOENT else { throw .system("look at the state directory", path: path, errno: errno) }
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw .system("create the state directory", path: path, errno: errno)
        }
        // mkdir's mode is filtered by the umask; make it exactly 0700.
        _ = chmod(path, 0o700)
    }

    /// Whether `path` exists.
    /// - Throws: `PinStoreError` when it cannot be looked at (usually: not root).
    static func exists(_ path: String) throws(PinStoreError) -> Bool {
        var info = stat()
        if stat(path, &info) == 0 { return true }
        if errno == ENOENT { return false }
        throw .system("look at the file", path: path, errno: errno)
    }

    /// The whole file as text, or nil if it does not exist.
    /// - Throws: `PinStoreError` when it exists but cannot be read.
    static func read(_ path: String, limit: Int = 4096) throws(PinStoreError) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw .system("read", path: path, errno: errno)
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 512)
        while bytes.count <= limit {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .system("read", path: path, errno: errno)
            }
            if count == 0 { break }
            bytes += buffer[0..<count]
        }
        guard bytes.count <= limit else {
            throw PinStoreError(.corrupt, operation: "read", path: path, detail: "larger than \(limit) bytes",
                                hint: "remove it; `kioskcam pin set` writes a new one")
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Replaces `path` with `text` so that a reader (or a power cut) sees the old file or
    /// the new one, never a mix: temp file (mode 0600), fsync, rename, fsync the folder.
    /// - Throws: `PinStoreError` naming the file that could not be written.
    static func writeAtomically(_ text: String, to path: String, directory: String) throws(PinStoreError) {
        var random = SystemRandomNumberGenerator()
        let temp = "\(path).tmp-\(getpid())-\(UInt32.random(in: 0 ... .max, using: &random))"
        let fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .system("create", path: temp, errno: errno) }
        var written = false
        defer { if !written { unlink(temp) } }
        do {
            defer { close(fd) }
            _ = fchmod(fd, 0o600)
            followDirectoryOwner(fd, directory: directory)
            let bytes = Array(text.utf8)
            var offset = 0
            while offset < bytes.count {
                let count = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
                if count < 0 {
                    if errno == EINTR { continue }
                    throw PinStoreError.system("write", path: temp, errno: errno)
                }
                offset += count
            }
            guard fsync(fd) == 0 else { throw PinStoreError.system("flush", path: temp, errno: errno) }
        }
        guard rename(temp, path) == 0 else { throw .system("replace", path: path, errno: errno) }
        written = true
        syncDirectory(directory)
    }

    /// Gives a file that root writes (`sudo kioskcam pin set`, `web-user set`) to the owner
    /// of the state directory, the daemon's own user, which must read it. Only root can
    /// change an owner; anyone else already writes as the owner.
    static func followDirectoryOwner(_ fd: Int32, directory: String) {
        guard geteuid() == 0 else { return }
        var info = stat()
        guard stat(directory, &info) == 0, info.st_uid != 0 || info.st_gid != 0 else { return }
        _ = fchown(fd, info.st_uid, info.st_gid)
    }

    /// Removes `path`; a missing file is fine.
    static func remove(_ path: String, directory: String) throws(PinStoreError) {
        guard unlink(path) == 0 || errno == ENOENT else { throw .system("remove", path: path, errno: errno) }
        syncDirectory(directory)
    }

    /// Makes a rename or unlink durable. Best effort: the data itself is already on disk.
    private static func syncDirectory(_ directory: String) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }
}

/// An exclusive `flock` on the store's lock file, so that the daemon and `kioskcam pin`
/// never interleave a read-modify-write of the throttle state.
enum StoreLock {
    /// Runs `body` while holding the lock (blocking until it is free); closing the file
    /// releases it, also when `body` throws.
    /// - Throws: `PinStoreError` when the lock file cannot be opened, or what `body` throws.
    static func holding<T>(_ path: String, _ body: () throws(PinStoreError) -> T) throws(PinStoreError) -> T {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .system("open the lock file", path: path, errno: errno) }
        defer { close(fd) }
        if let slash = path.lastIndex(of: "/") { StateFiles.followDirectoryOwner(fd, directory: String(path[..<slash])) }
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else { throw .system("lock", path: path, errno: errno) }
        }
        return try body()
    }
}
