import CAVFormat
import CAVUtil
import Glibc

/// The file an `MP4Writer` writes through: our own fd behind a custom `AVIOContext`,
/// so that we count bytes exactly, see the real errno (ENOSPC) and decide when data
/// is pushed to the storage device (`fdatasync`) for power-cut safety.
final class FileOutput {
    let path: String
    let fd: Int32
    private(set) var bytesWritten: Int64 = 0
    /// errno of the first failed write, kept so the error names the real cause.
    private(set) var writeErrno: Int32 = 0
    private(set) var io: UnsafeMutablePointer<AVIOContext>?

    /// Creates the file (failing if it exists) and its I/O context.
    /// - Throws: `MediaError.io` naming the path and the system's reason.
    init(creating path: String) throws(MediaError) {
        self.path = path
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            let code = errno
            throw MediaError(code == ENOSPC ? .diskFull : .io, operation: "create recording file", path: path,
                             detail: String(cString: strerror(code)),
                             hint: code == EACCES ? "Check that the media root is writable by kioskcam" : nil)
        }
        self.fd = fd
        // Marks the file as being written: start-up salvage skips files it cannot lock,
        // so a second kioskcam never "repairs" a recording that is still in progress.
        _ = flock(fd, LOCK_EX | LOCK_NB)
        let bufferSize = 64 * 1024
        guard let buffer = av_malloc(bufferSize) else {
            Glibc.close(fd)
            throw MediaError(.io, operation: "create recording file", path: path, detail: "out of memory")
        }
        let opaque = Unmanaged.passUnretained(self).toOpaque()
        guard let io = avio_alloc_context(buffer.assumingMemoryBound(to: UInt8.self), Int32(bufferSize), 1, opaque,
                                          nil, fileOutputWrite, fileOutputSeek) else {
            av_free(buffer)
            Glibc.close(fd)
            throw MediaError(.io, operation: "create recording file", path: path, detail: "out of memory")
        }
        self.io = io
    }

    private var isOpen = true

    deinit { close() }

    /// Frees the AVIO context and closes the file, releasing its lock (idempotent).
    func close() {
        if io != nil {
            av_free(io?.pointee.buffer)
            avio_context_free(&io)
        }
        if isOpen {
            isOpen = false
            Glibc.close(fd)
        }
    }

    /// Pushes written data from the page cache to the device.
    func sync() { if isOpen { _ = fdatasync(fd) } }

    /// While set, what the muxer writes is kept here instead of going to the file: the
    /// header, which the writer amends before it writes it (`writeCaptured`).
    private var captured: [UInt8]?

    /// From now on, writes are kept in memory until `writeCaptured`.
    func startCapture() { captured = [] }

    /// Ends the capture: `amend` gets what was captured and returns what goes to the file.
    /// - Returns: The bytes written.
    func writeCaptured(_ amend: ([UInt8]) -> [UInt8]) -> (captured: [UInt8], written: [UInt8], result: Int32) {
        let kept = captured ?? []
        captured = nil
        let amended = amend(kept)
        let result = amended.withUnsafeBufferPointer { buffer in
            buffer.baseAddress.map { write($0, buffer.count) } ?? 0
        }
        return (kept, amended, result)
    }

    fileprivate func write(_ buffer: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
        if captured != nil {
            captured?.append(contentsOf: UnsafeBufferPointer(start: buffer, count: count))
            return Int32(count)
        }
        var offset = 0
        while offset < count {
            let written = Glibc.write(fd, buffer + offset, count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                writeErrno = errno
                return kc_averror(errno)
            }
            offset += written
        }
        bytesWritten = max(bytesWritten, Int64(lseek(fd, 0, SEEK_CUR)))
        return Int32(count)
    }

    fileprivate func seek(_ offset: Int64, _ whence: Int32) -> Int64 {
        if whence & kc_avseek_size() != 0 {
            var info = stat()
            return fstat(fd, &info) == 0 ? Int64(info.st_size) : Int64(kc_averror(errno))
        }
        let result = lseek(fd, off_t(offset), whence & ~0x20000 /* AVSEEK_FORCE */)
        return result < 0 ? Int64(kc_averror(errno)) : Int64(result)
    }
}

private func fileOutputWrite(_ opaque: UnsafeMutableRawPointer?, _ buffer: UnsafeMutablePointer<UInt8>?, _ count: Int32) -> Int32 {
    guard let opaque, let buffer else { return kc_averror(EINVAL) }
    return Unmanaged<FileOutput>.fromOpaque(opaque).takeUnretainedValue().write(buffer, Int(count))
}

private func fileOutputSeek(_ opaque: UnsafeMutableRawPointer?, _ offset: Int64, _ whence: Int32) -> Int64 {
    guard let opaque else { return Int64(kc_averror(EINVAL)) }
    return Unmanaged<FileOutput>.fromOpaque(opaque).takeUnretainedValue().seek(offset, whence)
}
