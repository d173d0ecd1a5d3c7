import CAVUtil

/// The process heap as the encoders use it.
///
/// The encoders open when a recording (or another output) starts and close after it
/// stops — megabytes of frame buffers at 1280x720 each time (before the media graph, at
/// every segment). glibc serves blocks this large with `mmap`, but each time
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

    /// Turns transparent huge pages off for this process. x264 asks for them on its large
    /// buffers; each costs a whole 2 MiB of resident memory, and one that the kernel
    /// collapses later makes resident memory jump by up to 2 MiB in the middle of a long
    /// recording (the soak saw +1.8 MiB at 18 minutes). Off, a 720p recording also needs
    /// about 6 MiB less.
    /// - Returns: Whether the kernel took the setting.
    @discardableResult
    public static func avoidTransparentHugePages() -> Bool {
        kc_disable_transparent_huge_pages() == 0
    }

    /// Bytes in blocks the allocator mapped on their own (`mallinfo2().hblkhd`).
    public static var mappedBytes: Int { Int(kc_malloc_mapped_bytes()) }
}
