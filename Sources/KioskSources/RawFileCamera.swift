import KioskCore
import SystemPackage

/// Replays raw frames (tightly packed, in `format`) from a file: for tests and the
/// benchmark. Real time (`realtime`) paces frames like a camera; otherwise frames go
/// as fast as the pipeline takes them, stamped as if they had come at `fps`.
public final class RawFileCamera: VideoSource, @unchecked Sendable {
    public let format: VideoFormat
    public let path: String
    public let realtime: Bool
    public var name: String { "file \(path)" }
    private let pool: BufferPool
    private let clock = SystemClock()
    private let thread = SourceThread()
    private var file: FileDescriptor?

    /// Opens the file.
    /// - Throws: `CaptureSourceError` when it is missing, unreadable or holds no whole frame.
    public init(path: String, format: VideoFormat, realtime: Bool, bufferCount: Int = 12) throws(CaptureSourceError) {
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
        pool = BufferPool(bufferCapacity: format.frameByteCount, count: bufferCount)
    }

    deinit { try? file?.close() }

    public func start(into sink: CaptureSink) {
        let start = clock.now()
        let pacer = Pacer(start: start, periodNanoseconds: format.frameDurationNanoseconds)
        thread.start(name: "kioskcam.camera.file") { [self] thread in
            var sequence = 0
            var end = SourceEnd.stopped
            while !thread.shouldStop {
                if realtime { SystemClock.sleep(until: pacer.deadline(sequence)) }
                guard let buffer = pool.take() else {
                    // Every buffer is queued: wait for the encoder (replay never drops).
                    SystemClock.sleep(until: clock.now().advanced(byNanoseconds: 1_000_000))
                    continue
                }
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
                let timestamp = realtime ? clock.now() : pacer.deadline(sequence)
                sink.deliver(VideoFrame(buffer: buffer, format: format, timestamp: timestamp, sequence: sequence))
                sequence += 1
            }
            sink.videoSourceEnded(name, end)
        }
    }

    public func stop() { thread.stop() }

    private func readFully(into target: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let file else { return 0 }
        var total = 0
        while total < target.count {
            let count = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: target[total...]))
            if count == 0 { break }
            total += count
        }
        return total
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
