import CV4L2
import Glibc
import KioskCore
import SystemPackage

/// An open V4L2 device node, used through libv4l2 (so libv4l plugins work). The ioctls
/// themselves live in `Ioctl/`, one file per request family, each with its own error cases.
///
/// A class rather than a `~Copyable` struct: one open device is shared by the camera's
/// capture thread, its controls (a zoom ramp runs on a thread of its own while frames
/// stream) and the caller asking for capabilities — a non-copyable value would need a
/// class box for that anyway. The descriptor is closed exactly once: by `close()` (which
/// is idempotent) or, failing that, by `deinit`. V4L2 serialises ioctls on one descriptor
/// in the driver, so calls from several threads are safe; `close()` must come after the
/// last of them (the camera joins its thread first).
public final class V4L2Device: Sendable {
    /// The device node, e.g. "/dev/video0".
    public let path: String
    /// What the driver says it is and can do.
    public let capabilities: V4L2Capabilities
    let descriptor: FileDescriptor
    private let isClosed = Locked(false)

    /// Opens `path` read-write, non-blocking and close-on-exec.
    ///
    /// The node is opened with `open` and checked with VIDIOC_QUERYCAP before libv4l2
    /// takes it over (`v4l2_fd_open`) — what `v4l2_open` does inside, minus the message
    /// libv4l2 prints on stderr when the file is not a V4L2 device at all.
    /// - Throws: `V4L2Error` with `.noSuchDevice` (ENOENT), `.permissionDenied` (EACCES),
    ///   `.busy`, `.notAVideoDevice` (a regular file, /dev/null, a directory), or
    ///   `.system` when libv4l2 refuses the descriptor.
    public init(path: String) throws(V4L2Error) {
        self.path = path
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.open(FilePath(path), .readWrite, options: [.nonBlocking, .closeOnExec])
        } catch let errno as Errno {
            throw V4L2Error(path: path, operation: "open", errno: errno)
        } catch {
            throw V4L2Error(.system, path: path, operation: "open", detail: "\(error)")
        }
        var raw = v4l2_capability()
        if let errno = Self.retryingIoctl(descriptor.rawValue, kc_vidioc_querycap(), &raw, throughLibV4L2: false) {
            try? descriptor.close()
            throw V4L2Error(path: path, operation: "VIDIOC_QUERYCAP", errno: errno,
                            detail: errno == .inappropriateIOCTLForDevice ? "not a V4L2 device" : nil)
        }
        if kc_v4l2_fd_open(descriptor.rawValue) == -1 {
            let errno = Errno(rawValue: Glibc.errno)
            try? descriptor.close()
            throw V4L2Error(path: path, operation: "v4l2_fd_open", errno: errno,
                            detail: "libv4l2 could not take over the device")
        }
        self.descriptor = descriptor
        capabilities = V4L2Capabilities(raw)
    }

    deinit { close() }

    /// Closes the device (libv4l2's `v4l2_close`); later calls do nothing.
    /// Call it only when no other thread uses the device any more.
    ///
    /// The corresponding C function is `v4l2_close`.
    public func close() {
        let shouldClose = isClosed.withLock { isClosed in
            defer { isClosed = true }
            return !isClosed
        }
        if shouldClose { _ = v4l2_close(descriptor.rawValue) }
    }

    /// Whether `close()` has run.
    public var closed: Bool { isClosed.withLock { $0 } }

    /// Runs one ioctl through libv4l2, retrying on EINTR, and maps a failure once.
    /// - Parameters:
    ///   - request: The request number (`kc_vidioc_…()`).
    ///   - arg: The request's struct, read and written by the driver.
    ///   - name: The request's name for errors ("VIDIOC_S_FMT").
    ///   - detail: Extra words for the error message.
    /// - Throws: `V4L2Error` carrying the path, `name` and the errno.
    func ioctl<T>(_ request: UInt, _ arg: inout T, name: String, detail: String? = nil) throws(V4L2Error) {
        if let errno = ioctlErrno(request, &arg) {
            throw V4L2Error(path: path, operation: name, errno: errno, detail: detail)
        }
    }

    /// Like `ioctl`, but hands back the errno for callers where some errors are answers
    /// (EINVAL ends an enumeration, EAGAIN means "no frame yet").
    func ioctlErrno<T>(_ request: UInt, _ arg: inout T) -> Errno? {
        guard !closed else { return .badFileDescriptor }
        return Self.retryingIoctl(descriptor.rawValue, request, &arg, throughLibV4L2: true)
    }

    /// The EINTR retry loop, as swift-system's `valueOrErrno(retryOnInterrupt:)`.
    static func retryingIoctl<T>(_ fd: CInt, _ request: UInt, _ arg: inout T, throughLibV4L2: Bool) -> Errno? {
        withUnsafeMutablePointer(to: &arg) { pointer in
            while true {
                let result = throughLibV4L2 ? kc_v4l2_ioctl(fd, request, pointer) : Glibc.ioctl(fd, request, pointer)
                if result != -1 { return nil }
                let errno = Errno(rawValue: Glibc.errno)
                if errno != .interrupted { return errno }
            }
        }
    }

    /// Throws `.notACaptureDevice` unless the device captures video with streaming I/O.
    /// - Throws: `V4L2Error` naming what the device is instead.
    public func requireStreamingCapture() throws(V4L2Error) {
        let caps = capabilities
        guard caps.videoCapture else {
            let what = caps.videoCaptureMultiplanar
                ? "it captures with the multi-planar API, which kioskcam does not support yet"
                : "it is a \(caps.summary) device, not a video capture device"
            throw V4L2Error(.notACaptureDevice, path: path, operation: "VIDIOC_QUERYCAP",
                            detail: "\(caps.card) (\(caps.driver)): \(what)",
                            hint: "a camera often has several nodes (one for video, one for metadata); list them with `kioskcam probe` or `v4l2-ctl --list-devices`")
        }
        guard caps.streaming else {
            throw V4L2Error(.notACaptureDevice, path: path, operation: "VIDIOC_QUERYCAP",
                            detail: "\(caps.card) (\(caps.driver)) has no streaming I/O (V4L2_CAP_STREAMING)",
                            hint: "kioskcam needs a camera with mmap streaming")
        }
    }
}

/// What VIDIOC_QUERYCAP says. The flags are the node's own (`device_caps`) when the
/// driver reports them, else the whole physical device's.
public struct V4L2Capabilities: Sendable, Hashable, Codable {
    public var driver: String
    public var card: String
    public var busInfo: String
    /// The driver's (usually the kernel's) version, "6.1.192".
    public var version: String
    /// V4L2_CAP_* bits of this node.
    public var flags: UInt32

    init(_ raw: v4l2_capability) {
        driver = cString(raw.driver)
        card = cString(raw.card)
        busInfo = cString(raw.bus_info)
        version = "\(raw.version >> 16).\((raw.version >> 8) & 0xFF).\(raw.version & 0xFF)"
        flags = raw.capabilities & UInt32(V4L2_CAP_DEVICE_CAPS) != 0 ? raw.device_caps : raw.capabilities
    }

    public init(driver: String, card: String, busInfo: String, version: String, flags: UInt32) {
        self.driver = driver
        self.card = card
        self.busInfo = busInfo
        self.version = version
        self.flags = flags
    }

    private func has(_ flag: Int32) -> Bool { flags & UInt32(bitPattern: flag) != 0 }

    public var videoCapture: Bool { has(V4L2_CAP_VIDEO_CAPTURE) }
    public var videoCaptureMultiplanar: Bool { has(V4L2_CAP_VIDEO_CAPTURE_MPLANE) }
    public var streaming: Bool { has(V4L2_CAP_STREAMING) }
    public var readWrite: Bool { has(V4L2_CAP_READWRITE) }
    public var metadataCapture: Bool { has(V4L2_CAP_META_CAPTURE) }

    /// Human names of the set flags: "video capture, streaming, read/write".
    public var names: [String] {
        let known: [(Int32, String)] = [
            (V4L2_CAP_VIDEO_CAPTURE, "video capture"), (V4L2_CAP_VIDEO_CAPTURE_MPLANE, "multi-planar video capture"),
            (V4L2_CAP_VIDEO_OUTPUT, "video output"), (V4L2_CAP_VIDEO_OUTPUT_MPLANE, "multi-planar video output"),
            (V4L2_CAP_VIDEO_M2M, "memory-to-memory"), (V4L2_CAP_VIDEO_M2M_MPLANE, "multi-planar memory-to-memory"),
            (V4L2_CAP_VIDEO_OVERLAY, "overlay"), (V4L2_CAP_VBI_CAPTURE, "VBI capture"),
            (V4L2_CAP_SDR_CAPTURE, "SDR capture"), (V4L2_CAP_META_CAPTURE, "metadata capture"),
            (V4L2_CAP_META_OUTPUT, "metadata output"), (V4L2_CAP_TUNER, "tuner"), (V4L2_CAP_RADIO, "radio"),
            (V4L2_CAP_TOUCH, "touch"), (V4L2_CAP_STREAMING, "streaming"), (V4L2_CAP_READWRITE, "read/write"),
        ]
        return known.filter { has($0.0) }.map(\.1)
    }

    /// "metadata capture, streaming" or "no known capabilities".
    public var summary: String { names.isEmpty ? "no known capabilities" : names.joined(separator: ", ") }
}

/// A fixed-size C `char`/`__u8` array (imported as a tuple) up to its first NUL.
func cString<T>(_ tuple: T) -> String {
    withUnsafeBytes(of: tuple) { bytes in
        let end = bytes.firstIndex(of: 0) ?? bytes.count
        return String(decoding: bytes[..<end], as: UTF8.self)
    }
}
