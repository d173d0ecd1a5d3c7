import CAVUtil

/// The process heap as the encoders use it.
///
/// Every segment opens a new H.264 encoder — tens of MiB of frame buffers at 1280x720 —
/// and frees the previous one. glibc serves blocks this large with `mmap`, but each time
/// such a block is freed it raises its threshold to that block's size, so the next
/// encoder's buffers come from the heap instead, where freed memory stays resident. In
/// the soak (scripts/soak) resident memory wandered between 150 and 265 MiB from one
/// 1-minute segment to the next. A fixed threshold keeps every block of 128 KiB or more
/// in a mapping of its own, returned to the system when it is freed.
public enum MediaMemory {
    /// The size from which a block gets a mapping of its own (glibc's default start value).
    public static let mappedBlockThreshold = 128 << 10

    /// Fixes glibc's mmap threshold. Call once at start, before the first encoder opens.
    /// The corresponding C function is `mallopt(M_MMAP_THRESHOLD, …)`.
    /// - Returns: Whether the allocator took the setting (a sanitizer's allocator does not).
    @discardableResult
    public static func keepLargeBuffersOutOfTheHeap() -> Bool {
        kc_malloc_set_mmap_threshold(Int32(mappedBlockThreshold)) == 1
    }

    /// Bytes in blocks the allocator mapped on their own (`mallinfo2().hblkhd`).
    public static var mappedBytes: Int { Int(kc_malloc_mapped_bytes()) }
}
