import Glibc
import KioskCore
import SystemPackage

/// Replays raw frames (tightly packed, in `format`) from a file: for tests and the
/// benchmark. Real time (`realtime`) paces frames like a camera; otherwise frames go
/// as fast as the pipeline takes them, stamped as if they had come at `fps`.
///
/// The file is mapped, and each frame goes on as a view of the mapping — the way a
/// V4L2 camera's mmap buffers go on — so a replay, like a camera, costs no copy per
/// frame. Only when the file cannot be mapped are frames read into pool buffers.
public final class RawFileCamera: VideoSource, Sendable {
    public let format: VideoFormat
    public let path: String
    public let realtime: Bool
    public var name: String { "file \(path)" }
    private let pool: BufferPool
    private let clock = SystemClock()
    private let thread = SourceThread()
    private let file: FileDescriptor
    private let mapped: MappedFrames?
    /// How many frames may be out at once: as many as the pool has buffers.
    private let framesInFlight: Int

    /// Frames a replay may have out when no `bufferCount` is given. Paced like a camera,
    /// as many as a V4L2 camera's pool. As fast as possible, the replay waits for the
    /// encoder rather than drop, and two keep it busy: one in the encoder, the next in
    /// its queue; handing out the one after is a view of the mapping, not a read, done
    /// long before the encoder lets go of the first. More would only sit in a full
    /// queue, 1.8 MiB of resident memory each at 1280x720 YUYV (scripts/bench's
    /// `record`: 74 MiB with 12).
    public static func defaultBufferCount(realtime: Bool) -> Int { realtime ? 12 : 2 }

    /// Opens the file.
    /// - Throws: `CaptureSourceError` when it is missing, unreadable or holds no whole frame.
    public init(path: String, format: VideoFormat, realtime: Bool, bufferCount: Int? = nil) throws(CaptureSourceError) {
        let bufferCount = max(1, bufferCount ?? Self.defaultBufferCount(realtime: realtime))
        self.format = format
        self.path = path
        self.realtime = realtime
        let file: FileDescriptor
        do {
            file = try FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec])
        } catch {
            throw CaptureSourceError(source: path, operation: "open raw video file", reason: "\(error)",
                                     hint: "Check the path given to --camera file:PATH")
        }
        let size = (try? file.seek(offset: 0, from: .end)) ?? 0
        _ = try? file.seek(offset: 0, from: .start)
        guard size >= Int64(format.frameByteCount) else {
            try? file.close()
            throw CaptureSourceError(source: path, operation: "open raw video file",
                                     reason: "it holds \(size) bytes, less than one \(format) frame (\(format.frameByteCount) bytes)",
                                     hint: "Give the frame size and pixel format the file was made with (--size, --pixel-format)")
        }
        self.file = file
        framesInFlight = bufferCount
        mapped = Int(exactly: size).flatMap { MappedFrames(file: file, byteCount: $0, frameByteCount: format.frameByteCount) }
        pool = BufferPool(bufferCapacity: mapped == nil ? format.frameByteCount : 1, count: bufferCount)
    }

    deinit { try? file.close() }

    public func start(into sink: CaptureSink) {
        let start = clock.now()
        let pacer = Pacer(start: start, periodNanoseconds: format.frameDurationNanoseconds)
        thread.start(name: "kioskcam.camera.file") { [self] thread in
            var sequence = 0
            var end = SourceEnd.stopped
            while !thread.shouldStop {
                if realtime { SystemClock.sleep(until: pacer.deadline(sequence)) }
                let next: MediaBuffer?
                if let mapped {
                    guard sequence < mapped.frameCount else {
                        end = .endOfInput
                        break
                    }
                    next = mapped.frame(sequence, ifFewerThan: framesInFlight)
                } else {
                    next = pool.take()
                }
                guard let buffer = next else {
                    // Every buffer is queued: wait for the encoder (replay never drops).
                    SystemClock.sleep(until: clock.now().advanced(byNanoseconds: 1_000_000))
                    continue
                }
                if mapped == nil {
                    let count: Int
                    do {
                        count = try readFully(into: UnsafeMutableRawBufferPointer(rebasing: buffer.mutableBytes[0..<format.frameByteCount]))
                    } catch {
                        end = .failed("reading \(path) failed: \(error)")
                        break
                    }
                    guard count == format.frameByteCount else {
                        end = .endOfInput
                        break
                    }
                    buffer.byteCount = count
                }
                let timestamp = realtime ? clock.now() : pacer.deadline(sequence)
                sink.deliver(VideoFrame(buffer: buffer, format: format, timestamp: timestamp, sequence: sequence))
                sequence += 1
            }
            sink.videoSourceEnded(name, end)
        }
    }

    public func stop() { thread.stop() }

    private func readFully(into target: UnsafeMutableRawBufferPointer) throws -> Int {
        var total = 0
        while total < target.count {
            let count = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: target[total...]))
            if count == 0 { break }
            total += count
        }
        return total
    }
}

/// A raw video file mapped read-only, handing out its frames as buffers that view the
/// mapping. The mapping lives until the camera and every frame still held let go. A
/// frame's pages are dropped from the process when its last reader lets go, so the
/// replay's resident memory stays a few frames, not the file.
private final class MappedFrames: @unchecked Sendable { // @unchecked: the mapping's raw pointer, only read
    let frameCount: Int
    private let base: UnsafeMutableRawPointer
    private let length: Int
    private let frameByteCount: Int
    /// Frames handed out and not yet let go.
    private let held = Locked(0)

    /// Nil when the file cannot be mapped (too large for the address space, a file
    /// system without mmap): the caller reads frames instead.
    init?(file: FileDescriptor, byteCount: Int, frameByteCount: Int) {
        guard frameByteCount > 0, byteCount >= frameByteCount else { return nil }
        let frameCount = byteCount / frameByteCount
        let (length, overflow) = frameCount.multipliedReportingOverflow(by: frameByteCount)
        guard !overflow, let address = mmap(nil, length, PROT_READ, MAP_PRIVATE, file.rawValue, 0),
              address != UnsafeMutableRawPointer(bitPattern: -1) else { return nil }
        _ = madvise(address, length, MADV_SEQUENTIAL)
        self.base = address
        self.length = length
        self.frameCount = frameCount
        self.frameByteCount = frameByteCount
    }

    deinit { munmap(base, length) }

    /// Frame `index` as a buffer, or nil while `limit` frames are still held.
    func frame(_ index: Int, ifFewerThan limit: Int) -> MediaBuffer? {
        guard index >= 0, index < frameCount else { return nil }
        let admitted = held.withLock { (held: inout Int) -> Bool in
            guard held < limit else { return false }
            held += 1
            return true
        }
        guard admitted else { return nil }
        let start = base + index * frameByteCount
        // Fault the frame's pages in here, in one call, rather than page by page in the
        // encoder; kernels before 5.14 refuse the advice and the reader faults instead.
        _ = madvise(Self.pageStart(start), Self.pageSpan(start, frameByteCount), MADV_POPULATE_READ)
        return MediaBuffer(wrapping: start, byteCount: frameByteCount) { [self] in release(index) }
    }

    private func release(_ index: Int) {
        // Unmapping a read-only private file page loses nothing: it is read again from
        // the page cache if a neighbouring frame that shares it needs it.
        let start = base + index * frameByteCount
        _ = madvise(Self.pageStart(start), Self.pageSpan(start, frameByteCount), MADV_DONTNEED)
        held.withLock { $0 -= 1 }
    }

    private static let pageSize = max(Int(sysconf(Int32(_SC_PAGESIZE))), 4096)

    private static func pageStart(_ address: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer {
        address - (Int(bitPattern: address) & (pageSize - 1))
    }

    private static func pageSpan(_ address: UnsafeMutableRawPointer, _ count: Int) -> Int {
        address - pageStart(address) + count
    }
}

/// A capture source that cannot start, said so a person can fix it.
public struct CaptureSourceError: Error, Sendable, CustomStringConvertible {
    public var source: String
    public var operation: String
    public var reason: String
    public var hint: String?

    public init(source: String, operation: String, reason: String, hint: String? = nil) {
        self.source = source
        self.operation = operation
        self.reason = reason
        self.hint = hint
    }

    public var description: String {
        "\(operation) failed for \(source): \(reason)" + (hint.map { ". " + $0 } ?? "")
    }
}
