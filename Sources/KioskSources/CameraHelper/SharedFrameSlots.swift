import Foundation
import Glibc
import KioskCore

/// Equal slots of memory shared by the camera helper (which writes frames into them)
/// and the daemon (which reads them in place): one memory file, mapped once on each
/// side and unmapped with this value. The helper's mapping is writable, the daemon's
/// read-only.
public final class SharedFrameSlots: @unchecked Sendable {
    public let slotBytes: Int
    public let slotCount: Int
    public let base: UnsafeMutableRawPointer
    private let length: Int

    /// Makes the memory file (the helper). Its descriptor is returned for the channel to
    /// pass on; the caller closes it once sent.
    public static func create(slotBytes: Int, slotCount: Int) throws(CameraHelperError) -> (SharedFrameSlots, Int32) {
        guard slotBytes > 0, slotCount > 0, slotBytes <= 1 << 28, slotCount <= 64 else {
            throw CameraHelperError("frame slots of \(slotBytes) bytes × \(slotCount) are out of range")
        }
        typealias MemfdCreate = @convention(c) (UnsafePointer<CChar>?, UInt32) -> Int32
        guard let symbol = dlsym(nil, "memfd_create") else { throw CameraHelperError("this C library has no memfd_create") }
        let descriptor = unsafeBitCast(symbol, to: MemfdCreate.self)("kioskcam-camera-frames", 1 /* MFD_CLOEXEC */)
        guard descriptor >= 0 else { throw CameraHelperError("memfd_create: \(String(cString: strerror(errno)))") }
        guard ftruncate(descriptor, off_t(slotBytes * slotCount)) == 0 else {
            let message = String(cString: strerror(errno))
            close(descriptor)
            throw CameraHelperError("sizing the frame slots (\(slotBytes * slotCount) bytes): \(message)")
        }
        do {
            return (try SharedFrameSlots(descriptor: descriptor, slotBytes: slotBytes, slotCount: slotCount, writable: true), descriptor)
        } catch {
            close(descriptor)
            throw error
        }
    }

    /// Maps a memory file the helper passed (the daemon); checks its size first.
    public init(descriptor: Int32, slotBytes: Int, slotCount: Int, writable: Bool = false) throws(CameraHelperError) {
        guard slotBytes > 0, slotCount > 0, slotBytes <= 1 << 28, slotCount <= 64 else {
            throw CameraHelperError("frame slots of \(slotBytes) bytes × \(slotCount) are out of range")
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0, Int(info.st_size) >= slotBytes * slotCount else {
            throw CameraHelperError("the frame slots' memory is smaller than \(slotCount) × \(slotBytes) bytes")
        }
        length = slotBytes * slotCount
        let protection = writable ? PROT_READ | PROT_WRITE : PROT_READ
        let mapped = mmap(nil, length, protection, MAP_SHARED, descriptor, 0)
        guard let mapped, mapped != MAP_FAILED else {
            throw CameraHelperError("mapping the frame slots: \(String(cString: strerror(errno)))")
        }
        base = mapped
        self.slotBytes = slotBytes
        self.slotCount = slotCount
    }

    deinit { munmap(base, length) }

    /// Slot `index`'s memory; nil for an index out of range.
    public func slot(_ index: Int) -> UnsafeMutableRawPointer? {
        guard index >= 0, index < slotCount else { return nil }
        return base + index * slotBytes
    }
}
