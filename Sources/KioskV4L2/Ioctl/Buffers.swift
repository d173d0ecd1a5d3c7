import CV4L2
import Glibc
import SystemPackage

/// What VIDIOC_DQBUF hands back.
enum DequeueResult {
    /// A filled buffer: index, bytes used, flags, timestamp, sequence.
    case buffer(v4l2_buffer)
    /// EAGAIN on the non-blocking descriptor: no frame yet — not an error.
    case notReady
}

extension V4L2Device {
    /// Asks for `count` mmap buffers (0 frees them) and returns how many the driver granted.
    /// - Throws: `V4L2Error` (`.busy`: another process streams; ENOMEM).
    ///
    /// The corresponding ioctl is `VIDIOC_REQBUFS`.
    func requestBuffers(_ count: Int) throws(V4L2Error) -> Int {
        var request = v4l2_requestbuffers()
        request.count = UInt32(clamping: count)
        request.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        request.memory = V4L2_MEMORY_MMAP.rawValue
        try ioctl(kc_vidioc_reqbufs(), &request, name: "VIDIOC_REQBUFS")
        return Int(request.count)
    }

    /// Where buffer `index` lives for mmap: (offset, length).
    ///
    /// The corresponding ioctl is `VIDIOC_QUERYBUF`.
    func queryBuffer(_ index: Int) throws(V4L2Error) -> (offset: Int64, length: Int) {
        var buffer = Self.mmapBuffer(index)
        try ioctl(kc_vidioc_querybuf(), &buffer, name: "VIDIOC_QUERYBUF")
        return (Int64(buffer.m.offset), Int(buffer.length))
    }

    /// Hands buffer `index` (back) to the driver to be filled.
    ///
    /// The corresponding ioctl is `VIDIOC_QBUF`.
    func queueBuffer(_ index: Int) throws(V4L2Error) {
        var buffer = Self.mmapBuffer(index)
        try ioctl(kc_vidioc_qbuf(), &buffer, name: "VIDIOC_QBUF")
    }

    /// Takes the oldest filled buffer, or `.notReady` (EAGAIN).
    /// - Throws: `V4L2Error`: `.unplugged` for ENODEV/EIO, EPIPE (end of stream) as `.system`.
    ///
    /// The corresponding ioctl is `VIDIOC_DQBUF`.
    func dequeueBuffer() throws(V4L2Error) -> DequeueResult {
        var buffer = Self.mmapBuffer(0)
        if let errno = ioctlErrno(kc_vidioc_dqbuf(), &buffer) {
            if errno == .resourceTemporarilyUnavailable { return .notReady }
            throw V4L2Error(path: path, operation: "VIDIOC_DQBUF", errno: errno)
        }
        return .buffer(buffer)
    }

    static func mmapBuffer(_ index: Int) -> v4l2_buffer {
        var buffer = v4l2_buffer()
        buffer.index = UInt32(clamping: index)
        buffer.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        buffer.memory = V4L2_MEMORY_MMAP.rawValue
        return buffer
    }

    /// Starts (`true`) or stops capture. Stopping also takes every buffer back from the driver.
    ///
    /// The corresponding ioctls are `VIDIOC_STREAMON` and `VIDIOC_STREAMOFF`.
    func setStreaming(_ on: Bool) throws(V4L2Error) {
        var type = Int32(V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue)
        try ioctl(on ? kc_vidioc_streamon() : kc_vidioc_streamoff(), &type,
                  name: on ? "VIDIOC_STREAMON" : "VIDIOC_STREAMOFF")
    }

    /// Maps `length` bytes of the device at `offset` (libv4l2's `v4l2_mmap`).
    ///
    /// The corresponding C function is `v4l2_mmap`.
    func map(offset: Int64, length: Int) throws(V4L2Error) -> UnsafeMutableRawPointer {
        let address = v4l2_mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor.rawValue, offset)
        guard let address, address != kc_map_failed() else {
            throw V4L2Error(path: path, operation: "mmap", errno: Errno(rawValue: Glibc.errno),
                            detail: "mapping a \(length)-byte capture buffer")
        }
        return address
    }

    /// The corresponding C function is `v4l2_munmap`.
    func unmap(_ address: UnsafeMutableRawPointer, length: Int) {
        _ = v4l2_munmap(address, length)
    }
}
