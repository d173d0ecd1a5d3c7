import Glibc
import KioskCore

/// Writes `MP4HeaderTruth`'s patches into a finished (or salvaged) file, in place: the
/// fields first, synced, then the reserved box's new type, synced. A power cut at any
/// point leaves a playable file whose header is either still "unknown" or right.
public enum HeaderTruthWriter {
    /// Patches the file open for writing on `fd`, whose `moov` is read from the file.
    /// - Returns: How many fields were corrected (0 when the header has none to correct).
    /// - Throws: `MediaError.io` (`.diskFull`) when a write or sync fails.
    @discardableResult
    public static func apply(fd: Int32, tracks: [MP4HeaderTruth.Track], path: String) throws(MediaError) -> Int {
        guard let (moov, offset) = MP4HeaderTruth.moov(read: FragmentedMP4Scan.reader(of: fd)) else { return 0 }
        return try write(MP4HeaderTruth.patches(moov: moov, at: offset, tracks: tracks), fd: fd, path: path)
    }

    /// Writes the patches: fields, sync, commit, sync.
    static func write(_ patches: MP4HeaderTruth.Patches, fd: Int32, path: String) throws(MediaError) -> Int {
        guard !patches.isEmpty else { return 0 }
        for patch in patches.fields { try write(patch, fd: fd, path: path) }
        try sync(fd, path)
        for patch in patches.commit { try write(patch, fd: fd, path: path) }
        try sync(fd, path)
        return patches.fields.count
    }

    private static func write(_ patch: MP4HeaderTruth.Patch, fd: Int32, path: String) throws(MediaError) {
        let written = patch.bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(patch.offset)) }
        guard written == patch.bytes.count else { throw failure(written < 0 ? errno : EIO, path) }
    }

    private static func sync(_ fd: Int32, _ path: String) throws(MediaError) {
        guard fdatasync(fd) == 0 else { throw failure(errno, path) }
    }

    private static func failure(_ code: Int32, _ path: String) -> MediaError {
        MediaError(code == ENOSPC ? .diskFull : .io, operation: "write the file's length into its header", path: path,
                   detail: String(cString: strerror(code)))
    }
}

extension FragmentedMP4Scan {
    /// The scan's reader for a file open on `fd`: up to `count` bytes at `offset` with
    /// `pread` (fewer at its end, none on an error). Salvage and the timelapse use it.
    public static func reader(of fd: Int32) -> (_ offset: Int64, _ count: Int) -> [UInt8] {
        { offset, count in
            guard count > 0, offset >= 0 else { return [] }
            var bytes = [UInt8](repeating: 0, count: count)
            let got = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(offset)) }
            return Array(bytes.prefix(max(0, got)))
        }
    }
}
