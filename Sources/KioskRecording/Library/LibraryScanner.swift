import Glibc
import KioskCore
import SystemPackage

/// Reads the library's shape with `lstat` semantics: a symlink is reported as a
/// symlink and never followed, so nothing outside the root is ever looked at.
///
/// Walks each folder once with `readdir` and `fstatat(AT_SYMLINK_NOFOLLOW)` relative to
/// an open directory descriptor — no path strings rebuilt per file, no FileManager — so
/// 30 days × 1,440 files scan in well under a second.
public struct LibraryScanner: Sendable {
    public let layout: LibraryLayout

    /// Subfolders inside a date folder are summed to this depth; deeper ones are
    /// reported instead (a date folder normally has none).
    static let maximumDepth = 16

    public init(layout: LibraryLayout) { self.layout = layout }

    /// Scans the three kind folders.
    ///
    /// A missing root or kind folder is an empty library, not an error. A kind folder
    /// that is a symlink or cannot be read is listed in `problems`.
    /// - Throws: `RecorderError.library` when the media root exists but cannot be opened.
    public func scan() throws(RecorderError) -> LibraryScan {
        var scan = LibraryScan()
        let rootFD = open(layout.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard rootFD >= 0 else {
            if errno == ENOENT { return scan }
            throw RecorderError(.library, "cannot read the media root \(layout.root): \(String(cString: strerror(errno)))")
        }
        defer { close(rootFD) }
        for kind in MediaKind.allCases {
            scanKind(kind, rootFD: rootFD, into: &scan)
        }
        scan.dateFolders.sort { ($0.date, kindOrder($0.kind)) < ($1.date, kindOrder($1.kind)) }
        return scan
    }

    /// Free space on the filesystem holding `path`, as `statvfs` reports it: `free` is
    /// what an unprivileged process may still write (`f_bavail × f_frsize`), `total`
    /// the filesystem's size (`f_blocks × f_frsize`).
    /// - Throws: `RecorderError.library` when `statvfs` fails (no such path, no permission).
    public static func freeSpace(of path: String) throws(RecorderError) -> (free: Int64, total: Int64) {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else {
            throw RecorderError(.library, "cannot read the free space of \(path): \(String(cString: strerror(errno)))")
        }
        let unit = UInt64(info.f_frsize)
        func bytes(_ blocks: UInt64) -> Int64 {
            let (product, overflow) = blocks.multipliedReportingOverflow(by: unit)
            return overflow || product > UInt64(Int64.max) ? Int64.max : Int64(product)
        }
        return (bytes(UInt64(info.f_bavail)), bytes(UInt64(info.f_blocks)))
    }

    private func scanKind(_ kind: MediaKind, rootFD: Int32, into scan: inout LibraryScan) {
        let kindFD = openat(rootFD, kind.rawValue, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard kindFD >= 0 else {
            let reason = String(cString: strerror(errno))
            var info = stat()
            if errno == ENOENT || fstatat(rootFD, kind.rawValue, &info, AT_SYMLINK_NOFOLLOW) != 0 {
                if errno != ENOENT { scan.problems.append(.init(relativePath: kind.rawValue, reason: reason)) }
                return
            }
            switch Self.entryType(info.st_mode) {
            case .symlink: scan.problems.append(.init(relativePath: kind.rawValue, reason: "a symlink, not followed"))
            case .file, .other: scan.problems.append(.init(relativePath: kind.rawValue, reason: "not a folder"))
            case .directory: scan.problems.append(.init(relativePath: kind.rawValue, reason: reason))
            }
            return
        }
        guard let directory = fdopendir(kindFD) else {
            scan.problems.append(.init(relativePath: kind.rawValue, reason: String(cString: strerror(errno))))
            close(kindFD)
            return
        }
        defer { closedir(directory) }
        Self.forEachEntry(directory) { name, result in
            let entryName = String(cString: name)
            guard case .success(let info) = result else {
                // Gone since readdir (ENOENT) is nothing; anything else is worth a look.
                if case .failure(let error) = result, error != .noSuchFileOrDirectory {
                    scan.problems.append(.init(relativePath: kind.rawValue + "/" + entryName, reason: "cannot stat it: \(error)"))
                }
                return
            }
            let type = Self.entryType(info.st_mode)
            let entry = LibraryEntry(kind: kind, name: entryName, type: type)
            scan.entries.append(entry)
            guard type == .directory, let date = entry.date else { return }
            var folder = LibraryScan.DateFolder(kind: kind, date: date, files: [], bytes: 0, diskBytes: 0, otherEntries: 0)
            if let problem = scanDateFolder(parentFD: dirfd(directory), name: name, into: &folder) {
                scan.problems.append(.init(relativePath: entry.relativePath, reason: problem))
            }
            folder.files.sort { $0.name < $1.name }
            scan.dateFolders.append(folder)
        }
    }

    /// Fills in one date folder's files and sizes; returns a problem, if any.
    private func scanDateFolder(parentFD: Int32, name: UnsafePointer<CChar>, into folder: inout LibraryScan.DateFolder) -> String? {
        guard let directory = Self.openDirectory(parentFD, name) else { return String(cString: strerror(errno)) }
        defer { closedir(directory) }
        var problem: String?
        Self.forEachEntry(directory) { name, result in
            guard case .success(let info) = result else {
                if case .failure(let error) = result, error != .noSuchFileOrDirectory {
                    problem = problem ?? "cannot stat \(String(cString: name)): \(error)"
                }
                return
            }
            folder.diskBytes += Int64(info.st_blocks) * 512
            switch info.st_mode & S_IFMT {
            case S_IFREG:
                folder.bytes += Int64(info.st_size)
                folder.files.append(.init(name: String(cString: name), bytes: Int64(info.st_size),
                                          modified: Int64(info.st_mtim.tv_sec), diskBytes: Int64(info.st_blocks) * 512))
            case S_IFDIR:
                folder.otherEntries += 1
                if let nested = sumSubfolder(parentFD: dirfd(directory), name: name, depth: 1) {
                    folder.bytes += nested.bytes
                    folder.diskBytes += nested.diskBytes
                }
            default:
                folder.otherEntries += 1
            }
        }
        return problem
    }

    /// Sizes below a subfolder of a date folder, never following symlinks.
    private func sumSubfolder(parentFD: Int32, name: UnsafePointer<CChar>, depth: Int) -> (bytes: Int64, diskBytes: Int64)? {
        guard depth <= Self.maximumDepth, let directory = Self.openDirectory(parentFD, name) else { return nil }
        defer { closedir(directory) }
        var total: (bytes: Int64, diskBytes: Int64) = (0, 0)
        Self.forEachEntry(directory) { name, result in
            guard case .success(let info) = result else { return }
            total.diskBytes += Int64(info.st_blocks) * 512
            switch info.st_mode & S_IFMT {
            case S_IFREG:
                total.bytes += Int64(info.st_size)
            case S_IFDIR:
                if let nested = sumSubfolder(parentFD: dirfd(directory), name: name, depth: depth + 1) {
                    total.bytes += nested.bytes
                    total.diskBytes += nested.diskBytes
                }
            default:
                break
            }
        }
        return total
    }

    /// Opens `name` under `parentFD` as a directory stream, refusing symlinks (`O_NOFOLLOW`).
    static func openDirectory(_ parentFD: Int32, _ name: UnsafePointer<CChar>) -> OpaquePointer? {
        let fd = openat(parentFD, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        guard let directory = fdopendir(fd) else {
            let saved = errno
            close(fd)
            errno = saved
            return nil
        }
        return directory
    }

    static func entryType(_ mode: mode_t) -> LibraryEntry.EntryType {
        switch mode & S_IFMT {
        case S_IFDIR: return .directory
        case S_IFLNK: return .symlink
        case S_IFREG: return .file
        default: return .other
        }
    }

    private func kindOrder(_ kind: MediaKind) -> Int { MediaKind.allCases.firstIndex(of: kind) ?? 0 }
}

extension LibraryScanner {
    /// Calls `body` with every name in `directory` but "." and "..", and its `lstat`
    /// information (`fstatat` with `AT_SYMLINK_NOFOLLOW`) or, when that failed, its errno.
    /// The name pointer is valid only during the call.
    static func forEachEntry(_ directory: OpaquePointer, _ body: (UnsafePointer<CChar>, Result<stat, Errno>) -> Void) {
        let fd = dirfd(directory)
        while let entry = readdir(directory) {
            withUnsafePointer(to: &entry.pointee.d_name) { tuple in
                tuple.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: tuple.pointee)) { name in
                    if name[0] == 0x2E && (name[1] == 0 || (name[1] == 0x2E && name[2] == 0)) { return }  // "." and ".."
                    var info = stat()
                    body(name, fstatat(fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0 ? .success(info) : .failure(Errno(rawValue: errno)))
                }
            }
        }
    }
}
