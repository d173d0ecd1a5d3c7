
/// The memory of one video frame or audio chunk, shared by reference.
///
/// A frame goes to several consumers at once — the encoder, the preview, a still, the
/// luma branch — without a copy: each holds the same `MediaBuffer`, and when the last
/// one lets go (ARC) the memory goes back where it came from: its `BufferPool`, or (for
/// a V4L2 mmap buffer handed over as it is) the driver's queue. Nobody writes to a
/// buffer once it has been delivered, which is what makes sharing it safe.
// @unchecked: it hands raw memory from thread to thread by reference; `byteCount` and the
// bytes are written only by the producer before delivery (the hand-off orders them).
public final class MediaBuffer: @unchecked Sendable {
    public let capacity: Int
    /// Bytes of `capacity` that hold data; set by the producer before delivery.
    public var byteCount: Int
    public let baseAddress: UnsafeMutableRawPointer
    private let release: Release

    private enum Release {
        /// Memory of our own, freed with the buffer.
        case own
        /// A pool's block, given back to it.
        case pool(BufferPool, index: Int)
        /// Someone else's memory (a driver buffer): they are told when it is free again.
        case external(@Sendable () -> Void)
    }

    /// Says this thread has finished reading the buffer (it may still hold it). A pool's
    /// block goes back to the pool on whichever thread lets go last — often the producer,
    /// after a consumer read it and let go first. That hand-off is ordered by the Swift
    /// runtime's reference count, an atomic ThreadSanitizer does not see (the runtime is
    /// not instrumented); this lock round trip on the pool's lock, which `take()` also
    /// passes, makes the order visible to it. Costs one uncontended lock per consumer.
    public func doneReading() {
        if case .pool(let pool, _) = release { pool.synchronize() }
    }

    /// A standalone buffer with memory of its own.
    public init(capacity: Int) {
        self.capacity = capacity
        byteCount = 0
        baseAddress = UnsafeMutableRawPointer.allocate(byteCount: max(capacity, 1), alignment: 64)
        release = .own
    }

    /// A buffer over memory the caller owns (a V4L2 mmap buffer): `onRelease` runs, on
    /// whichever thread lets go last, once no consumer holds it any more.
    public init(wrapping baseAddress: UnsafeMutableRawPointer, byteCount: Int, onRelease: @escaping @Sendable () -> Void) {
        capacity = byteCount
        self.byteCount = byteCount
        self.baseAddress = baseAddress
        release = .external(onRelease)
    }

    fileprivate init(pool: BufferPool, index: Int, baseAddress: UnsafeMutableRawPointer) {
        capacity = pool.bufferCapacity
        byteCount = 0
        self.baseAddress = baseAddress
        release = .pool(pool, index: index)
    }

    deinit {
        switch release {
        case .own: baseAddress.deallocate()
        case .pool(let pool, let index): pool.giveBack(index)
        case .external(let onRelease): onRelease()
        }
    }

    public var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: baseAddress, count: byteCount) }
    public var mutableBytes: UnsafeMutableRawBufferPointer {
        UnsafeMutableRawBufferPointer(start: baseAddress, count: capacity)
    }
}

/// A fixed set of equally sized memory blocks. `take()` returns nil when all are in use
/// (held by consumers), which the caller counts as a dropped frame rather than
/// allocating more: memory never grows with time.
public final class BufferPool: Sendable {
    public let bufferCapacity: Int
    public let bufferCount: Int
    private let memory: UnsafeMutableRawPointerBox
    private let stride: Int
    /// The free blocks' indices. Under `Locked` (a pthread mutex), not a Swift `Mutex`:
    /// ThreadSanitizer sees the hand-off of a block from its last reader to its next
    /// writer only through a lock it intercepts (a contended `Mutex` waits in the
    /// uninstrumented standard library, and through it reused blocks read as data races).
    private let free: Locked<[Int]>

    public init(bufferCapacity: Int, count: Int) {
        self.bufferCapacity = bufferCapacity
        bufferCount = count
        // One allocation for all blocks, each aligned for SIMD and swscale.
        stride = (max(bufferCapacity, 1) + 63) & ~63
        memory = UnsafeMutableRawPointerBox(UnsafeMutableRawPointer.allocate(byteCount: stride * max(count, 1), alignment: 64))
        free = Locked(Array((0..<count).reversed()))
    }

    deinit { memory.pointer.deallocate() }

    /// A free block as a buffer (its `byteCount` 0), or nil when every block is held.
    public func take() -> MediaBuffer? {
        guard let index = free.withLock({ $0.popLast() }) else { return nil }
        return MediaBuffer(pool: self, index: index, baseAddress: memory.pointer + index * stride)
    }

    /// A lock round trip: see `MediaBuffer.doneReading()`.
    fileprivate func synchronize() { free.withLock { _ in } }

    fileprivate func giveBack(_ index: Int) {
        free.withLock { $0.append(index) }
    }

    public var freeCount: Int { free.withLock { $0.count } }
}

/// A raw pointer that is only ever read, so a `Sendable` class can hold it.
// @unchecked: raw pointers are not Sendable; this one is set once and never changed.
private struct UnsafeMutableRawPointerBox: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer
    init(_ pointer: UnsafeMutableRawPointer) { self.pointer = pointer }
}
