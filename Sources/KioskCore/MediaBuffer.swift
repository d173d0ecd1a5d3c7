/// A fixed-capacity block of memory for one video frame or audio chunk, recycled
/// through its `BufferPool` so steady-state capture allocates nothing.
///
/// Ownership moves with the frame: the source fills it, the queue holds it, the
/// encoder reads it and then calls `recycle()`. Only one party touches it at a time,
/// which is why it is `@unchecked Sendable`.
public final class MediaBuffer: @unchecked Sendable {
    public let capacity: Int
    /// Bytes of `capacity` that hold data.
    public var byteCount: Int
    public let baseAddress: UnsafeMutableRawPointer
    fileprivate weak var pool: BufferPool?

    public init(capacity: Int) {
        self.capacity = capacity
        self.byteCount = 0
        self.baseAddress = UnsafeMutableRawPointer.allocate(byteCount: max(capacity, 1), alignment: 64)
    }

    deinit { baseAddress.deallocate() }

    public var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: baseAddress, count: byteCount) }
    public var mutableBytes: UnsafeMutableRawBufferPointer {
        UnsafeMutableRawBufferPointer(start: baseAddress, count: capacity)
    }

    /// Hands the buffer back to its pool (a no-op for a buffer without one).
    public func recycle() { pool?.put(self) }
}

/// A fixed set of equally sized buffers. `take()` returns nil when all are in use,
/// which the caller counts as a dropped frame rather than allocating more.
public final class BufferPool: @unchecked Sendable {
    public let bufferCapacity: Int
    public let bufferCount: Int
    private let lock = Lock()
    private var free: [MediaBuffer]
    /// Keeps every buffer alive: `MediaBuffer.pool` is weak, the pool owns them.
    private let all: [MediaBuffer]

    public init(bufferCapacity: Int, count: Int) {
        self.bufferCapacity = bufferCapacity
        self.bufferCount = count
        let buffers = (0..<count).map { _ in MediaBuffer(capacity: bufferCapacity) }
        all = buffers
        free = buffers
        free.reserveCapacity(count)
        for buffer in buffers { buffer.pool = self }
    }

    public func take() -> MediaBuffer? {
        lock.withLock {
            guard let buffer = free.popLast() else { return nil }
            buffer.byteCount = 0
            return buffer
        }
    }

    fileprivate func put(_ buffer: MediaBuffer) {
        lock.withLock {
            // A double recycle would hand one buffer to two owners; ignore the second.
            guard !free.contains(where: { $0 === buffer }) else { return }
            free.append(buffer)
        }
    }

    public var freeCount: Int { lock.withLock { free.count } }
}
