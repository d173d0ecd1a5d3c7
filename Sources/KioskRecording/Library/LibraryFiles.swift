import Glibc
import KioskCore

/// The library's file operations: folders, the atomic no-clobber move into place,
/// and the directory syncs that make a finished recording survive a power cut.
public struct LibraryFiles: Sendable {
    public let layout: LibraryLayout

    public init(layout: LibraryLayout) { self.layout = layout }

    /// Creates the media root and temp area, failing with a message that names the fix.
    /// - Throws: `RecorderError.library` when the root cannot be created or written.
    public func prepare() throws(RecorderError) {
        try makeDirectories(layout.incomingDirectory)
        guard access(layout.incomingDirectory, W_OK) == 0 else {
            throw RecorderError(.library, "the media root \(layout.root) is not writable (\(String(cString: strerror(errno)))); "
                                + "choose another with --root or storage.media_root, or fix its permissions")
        }
    }

    /// `mkdir -p`.
    public func makeDirectories(_ path: String) throws(RecorderError) {
        var built = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            built += "/" + component
            if mkdir(built, 0o755) != 0 && errno != EEXIST {
                let reason = String(cString: strerror(errno))
                throw RecorderError(.library, "cannot create \(built): \(reason); choose another media root with --root or storage.media_root")
            }
        }
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            throw RecorderError(.library, "\(path) exists but is not a folder")
        }
    }

    /// Moves a finished temp file to its library name without ever replacing an
    /// existing recording: `HHMMSS.mp4`, else `HHMMSS-1.mp4`, …, and notes its
    /// duration in the day's index.
    /// - Returns: The final path.
    public func moveIntoLibrary(_ tempPath: String, kind: MediaKind, time: LocalTimestamp,
                                seconds: Double = 0, label: String? = nil) throws(RecorderError) -> String {
        let target = try move(tempPath, kind: kind, time: time, label: label)
        appendToIndex(directory: layout.dateDirectory(kind, time), name: String(target.split(separator: "/").last ?? ""), seconds: seconds)
        return target
    }

    /// The library name a temp file is already linked to, when a crash cut a move short
    /// between its link and its unlink; nil when it is not in the library.
    /// - Parameter info: The temp file's `stat`.
    public func libraryName(linkedTo info: stat, kind: MediaKind, time: LocalTimestamp, label: String? = nil) -> String? {
        guard info.st_nlink > 1 else { return nil }
        // A move takes the first free name, so every name before the one it took exists.
        for attempt in 0..<1000 {
            let target = layout.finalPath(kind, time, attempt: attempt, label: label)
            var other = stat()
            guard lstat(target, &other) == 0 else { return nil }
            if other.st_ino == info.st_ino && other.st_dev == info.st_dev { return target }
        }
        return nil
    }

    /// Completes a move that a crash cut short between its link and its unlink: the temp
    /// name goes, and the day's index gets the file's line if it lacks it.
    public func completeInterruptedMove(_ tempPath: String, to target: String, kind: MediaKind,
                                        time: LocalTimestamp, seconds: Double) {
        unlink(tempPath)
        syncDirectory(layout.incomingDirectory)
        let directory = layout.dateDirectory(kind, time)
        let name = String(target.split(separator: "/").last ?? "")
        let indexed = LibraryListing.read(directory + "/" + LibraryIndex.fileName).map(LibraryIndex.parse) ?? [:]
        if indexed[name] == nil { appendToIndex(directory: directory, name: name, seconds: seconds) }
    }

    /// Appends one line to a day's index; a failure only costs `list` a probe later.
    private func appendToIndex(directory: String, name: String, seconds: Double) {
        let fd = open(directory + "/" + LibraryIndex.fileName, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return }
        let line = Array(LibraryIndex.line(name: name, seconds: seconds).utf8)
        _ = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    private func move(_ tempPath: String, kind: MediaKind, time: LocalTimestamp, label: String?) throws(RecorderError) -> String {
        let directory = layout.dateDirectory(kind, time)
        try makeDirectories(directory)
        for attempt in 0..<1000 {
            let target = layout.finalPath(kind, time, attempt: attempt, label: label)
            // link() fails with EEXIST instead of replacing: an atomic no-clobber move.
            if link(tempPath, target) == 0 {
                unlink(tempPath)
                syncDirectory(directory)
                syncDirectory(layout.incomingDirectory)
                return target
            }
            switch errno {
            case EEXIST:
                continue
            case EPERM, ENOTSUP, EOPNOTSUPP:
                // File systems without hard links (vfat/exFAT): rename after a check.
                var info = stat()
                if stat(target, &info) == 0 { continue }
                if rename(tempPath, target) == 0 {
                    syncDirectory(directory)
                    return target
                }
                fallthrough
            default:
                let reason = String(cString: strerror(errno))
                throw RecorderError(errno == ENOSPC ? .diskFull : .library, "cannot move \(tempPath) to \(target): \(reason)")
            }
        }
        throw RecorderError(.library, "too many recordings named \(time.timeStamp) in \(directory)")
    }

    /// Moves a file salvage could not repair into `<root>/.quarantine` (same file system:
    /// a rename, needing no space), never replacing anything there, with a `.txt` beside
    /// it saying why. The `.part` suffix is dropped so a person's tools know the type.
    /// - Returns: The quarantined file's path.
    /// - Throws: `RecorderError.library` when the folder cannot be made or the move fails.
    public func moveToQuarantine(_ path: String, reason: String) throws(RecorderError) -> String {
        let directory = layout.quarantineDirectory
        try makeDirectories(directory)
        var name = String(path.split(separator: "/").last ?? "file")
        if name.hasSuffix(LibraryLayout.partSuffix) { name.removeLast(LibraryLayout.partSuffix.count) }
        for attempt in 0..<1000 {
            let target = directory + "/" + (attempt == 0 ? name : "\(attempt)-" + name)
            if link(path, target) == 0 {
                unlink(path)
            } else if errno == EEXIST {
                continue
            } else {
                // No hard links here (vfat/exFAT): rename after a check.
                var info = stat()
                if stat(target, &info) == 0 { continue }
                guard rename(path, target) == 0 else { throw Self.failure("move \(path) to", target) }
            }
            let note = Array("\(reason)\n".utf8)
            let fd = open(target + ".txt", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            if fd >= 0 {
                _ = note.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                close(fd)
            }
            syncDirectory(directory)
            syncDirectory(layout.incomingDirectory)
            return target
        }
        throw RecorderError(.library, "too many files named \(name) in \(directory)")
    }

    /// Files in `<root>/.quarantine` (their `.txt` notes not counted): for status and metrics.
    public func quarantinedFileCount() -> Int {
        guard let directory = opendir(layout.quarantineDirectory) else { return 0 }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if !name.hasPrefix("."), !name.hasSuffix(".txt") { count += 1 }
        }
        return count
    }

    private static func failure(_ operation: String, _ path: String) -> RecorderError {
        let code = errno
        return RecorderError(code == ENOSPC ? .diskFull : .library, "cannot \(operation) \(path): \(String(cString: strerror(code)))")
    }

    /// Writes `bytes` to a new library file via the temp area (for stills).
    public func writeFile(_ bytes: [UInt8], kind: MediaKind, time: LocalTimestamp, label: String? = nil) throws(RecorderError) -> String {
        try prepare()
        var serial = 0
        var temp = layout.incomingPath(kind, time, label: label)
        var fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        while fd < 0 && errno == EEXIST && serial < 100 {
            serial += 1
            temp = layout.incomingPath(kind, time, serial: serial, label: label)
            fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        }
        guard fd >= 0 else { throw RecorderError(.library, "cannot create \(temp): \(String(cString: strerror(errno)))") }
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let writeErrno = errno
        let synced = fdatasync(fd) == 0
        close(fd)
        guard written == bytes.count, synced else {
            unlink(temp)
            throw RecorderError(writeErrno == ENOSPC ? .diskFull : .library,
                                "cannot write \(temp): \(String(cString: strerror(writeErrno)))")
        }
        return try moveIntoLibrary(temp, kind: kind, time: time, label: label)
    }

    private func syncDirectory(_ path: String) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }
}
