import CV4L2
import Glibc
import KioskCore
import KioskWakeUp
import KioskMedia

/// The driver's mmap buffers, mapped; unmapped and freed (REQBUFS 0) exactly once, by
/// `release()` or when dropped.
// @unchecked: it holds the driver's mmap pointers, set before streaming and emptied only
// after the last lease and the capture thread are done; the lease state is `Locked`.
final class MappedBuffers: @unchecked Sendable {
    struct Region {
        var address: UnsafeMutableRawPointer
        var length: Int
    }

    let device: V4L2Device
    /// Set before streaming, read by the capture thread; emptied only when no lease is
    /// out and the capture thread has finished.
    private(set) var regions: [Region] = []
    /// Wakes the capture thread when a lent buffer comes back (the camera's).
    private let wakeUp: WakeUpEvent?
    private struct Leases {
        var released = false
        var streaming = true
        var lent = 0
        var returned: [Int] = []
        var releaseWhenReturned = false
    }
    private let leases = Locked(Leases())

    /// - Throws: `V4L2Error` from REQBUFS/QUERYBUF/mmap; whatever was mapped is undone.
    init(device: V4L2Device, count: Int, wakeUp: WakeUpEvent? = nil) throws(V4L2Error) {
        self.device = device
        self.wakeUp = wakeUp
        let granted = try device.requestBuffers(count)
        guard granted >= 2 else {
            _ = try? device.requestBuffers(0)
            throw V4L2Error(.system, path: device.path, operation: "VIDIOC_REQBUFS",
                            detail: "the driver granted \(granted) capture buffers; streaming needs at least 2")
        }
        do {
            for index in 0..<granted {
                let (offset, length) = try device.queryBuffer(index)
                regions.append(Region(address: try device.map(offset: offset, length: length), length: length))
            }
        } catch {
            release()
            throw error
        }
    }

    deinit { release() }

    /// Buffer `index` as a frame's buffer, by reference, or nil when fewer than
    /// `keepingQueued` others would be left with the driver (the caller copies instead).
    /// The lease holds these mappings; when the last holder lets go, the index is handed
    /// back to the capture thread (`takeReturned`), which requeues it.
    func lease(_ index: Int, byteCount: Int, keepingQueued: Int) -> MediaBuffer? {
        guard regions.indices.contains(index), byteCount <= regions[index].length else { return nil }
        let count = regions.count
        let granted = leases.withLock { leases -> Bool in
            // This one is out of the driver's queue already: `lent + 1` are then out.
            guard leases.streaming, count - (leases.lent + 1) >= keepingQueued else { return false }
            leases.lent += 1
            return true
        }
        guard granted else { return nil }
        return MediaBuffer(wrapping: regions[index].address, byteCount: byteCount) { [self] in giveBack(index) }
    }

    /// The lent buffers that came back since the last call, for the capture thread to requeue.
    func takeReturned() -> [Int] {
        leases.withLock { leases in
            defer { leases.returned.removeAll(keepingCapacity: true) }
            return leases.returned
        }
    }

    /// A lease's last holder let go (any thread).
    private func giveBack(_ index: Int) {
        let unmapNow = leases.withLock { leases -> Bool in
            leases.lent -= 1
            if leases.streaming {
                leases.returned.append(index)
                wakeUp?.signal()
                return false
            }
            guard leases.releaseWhenReturned, leases.lent == 0, !leases.released else { return false }
            leases.released = true
            return true
        }
        if unmapNow { unmapAll() }
    }

    /// Unmaps every buffer and gives them back to the driver (after STREAMOFF). While a
    /// frame still holds one of them, that waits for the last such frame to be let go.
    func release() {
        let unmapNow = leases.withLock { leases -> Bool in
            leases.streaming = false
            leases.returned.removeAll()
            guard !leases.released else { return false }
            if leases.lent > 0 {
                leases.releaseWhenReturned = true
                return false
            }
            leases.released = true
            return true
        }
        if unmapNow { unmapAll() }
    }

    private func unmapAll() {
        for region in regions { device.unmap(region.address, length: region.length) }
        regions = []
        if !device.closed { _ = try? device.requestBuffers(0) }
    }
}
