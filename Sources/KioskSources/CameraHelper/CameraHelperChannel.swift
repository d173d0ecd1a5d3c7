import Foundation
import Glibc
import KioskCore

/// What the daemon and its camera helper process say to each other: one JSON message
/// per datagram of a `SOCK_SEQPACKET` socket pair (a few dozen a second, so JSON costs
/// nothing that matters); the frames themselves go through shared memory.
public enum CameraHelperMessage: Codable, Sendable, Equatable {
    // The helper to the daemon.
    /// The camera is open; the shared frame slots' memory file rides along with it.
    case opened(CameraHelperOpened)
    /// The camera could not be opened: the error as the camera's own code words it.
    case openFailed(String)
    /// A frame is in `slot`; the daemon sends `release` when it has let go of it.
    case frame(CameraHelperFrame)
    /// A frame was dropped (every slot held): the counters, which also say the helper lives.
    case counters(CameraFrameCounters)
    /// The answer to `call` `id` (camera-specific bytes).
    case answer(id: Int, payload: Data)
    /// The camera stopped delivering, and why; the helper exits after it.
    case ended(SourceEnd)
    // The daemon to the helper.
    case start
    case stop
    case release(slot: Int)
    /// A camera-specific request (controls, focus), answered by `answer`.
    case call(id: Int, payload: Data)
}

/// What the helper opened: the camera's name and format, the slots, and details only
/// the camera's own kind reads (libcamera's controls and how the format was chosen).
public struct CameraHelperOpened: Codable, Sendable, Equatable {
    public var name: String
    public var width: Int
    public var height: Int
    public var pixelFormat: PixelFormat
    public var framesPerSecond: Int
    public var slotBytes: Int
    public var slotCount: Int
    public var details: Data

    public init(name: String, format: VideoFormat, slotBytes: Int, slotCount: Int, details: Data) {
        self.name = name
        width = format.size.width
        height = format.size.height
        pixelFormat = format.pixelFormat
        framesPerSecond = format.framesPerSecond
        self.slotBytes = slotBytes
        self.slotCount = slotCount
        self.details = details
    }

    /// The camera's format, when every number is one a camera can have (sides of 1 to
    /// 8,192 pixels, 1 to 1,000 frames a second); nil otherwise. The helper is another
    /// process: its numbers reach the frame-size arithmetic and the encoder's 32-bit
    /// fields, so they are checked here, once.
    public var format: VideoFormat? {
        guard (1...8192).contains(width), (1...8192).contains(height), (1...1000).contains(framesPerSecond) else { return nil }
        return VideoFormat(size: FrameSize(width: width, height: height), pixelFormat: pixelFormat, framesPerSecond: framesPerSecond)
    }
}

/// One frame in a slot, with the camera's counters as they were when it was sent.
public struct CameraHelperFrame: Codable, Sendable, Equatable {
    public var slot: Int
    public var byteCount: Int
    /// CLOCK_MONOTONIC nanoseconds: the same clock in both processes.
    public var timestampNanoseconds: Int64
    public var sequence: Int
    public var counters: CameraFrameCounters

    public init(slot: Int, byteCount: Int, timestampNanoseconds: Int64, sequence: Int, counters: CameraFrameCounters) {
        self.slot = slot
        self.byteCount = byteCount
        self.timestampNanoseconds = timestampNanoseconds
        self.sequence = sequence
        self.counters = counters
    }
}

extension CameraHelperMessage {
    /// The message as sent: the per-frame ones (`frame`, `release`, `counters`) as a tag
    /// byte and fixed little-endian fields — JSON for each cost more CPU than the frame's
    /// copy under the guest's emulation — and the rest as JSON.
    public func encoded() -> [UInt8]? {
        var bytes: [UInt8] = []
        func put(_ value: Int64) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
        func put(_ counters: CameraFrameCounters) {
            for value in [counters.delivered, counters.leased, counters.copied, counters.paced, counters.dropped, counters.corrupt] {
                put(Int64(value))
            }
        }
        switch self {
        case .frame(let frame):
            bytes.append(Self.frameTag)
            for value in [Int64(frame.slot), Int64(frame.byteCount), frame.timestampNanoseconds, Int64(frame.sequence)] { put(value) }
            put(frame.counters)
        case .release(let slot):
            bytes.append(Self.releaseTag)
            put(Int64(slot))
        case .counters(let counters):
            bytes.append(Self.countersTag)
            put(counters)
        default:
            guard let json = try? JSONEncoder().encode(self) else { return nil }
            return Array(json)
        }
        return bytes
    }

    /// A received datagram as a message; nil when it is not one (wrong length, a value
    /// out of range, JSON that does not decode).
    public static func decode(_ bytes: UnsafeRawBufferPointer) -> CameraHelperMessage? {
        guard let tag = bytes.first else { return nil }
        func fields(_ count: Int) -> [Int64]? {
            guard bytes.count == 1 + 8 * count else { return nil }
            return (0..<count).map { Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: 1 + 8 * $0, as: Int64.self)) }
        }
        func counters(_ values: ArraySlice<Int64>) -> CameraFrameCounters? {
            guard values.count == 6, values.allSatisfy({ $0 >= 0 && $0 <= Int64(Int32.max) }) else { return nil }
            let v = values.map { Int($0) }
            return CameraFrameCounters(delivered: v[0], leased: v[1], copied: v[2], paced: v[3], dropped: v[4], corrupt: v[5])
        }
        func small(_ value: Int64) -> Int? { (0...Int64(Int32.max)).contains(value) ? Int(value) : nil }
        switch tag {
        case frameTag:
            guard let values = fields(10), let slot = small(values[0]), let byteCount = small(values[1]),
                  let counters = counters(values[4...]) else { return nil }
            return .frame(CameraHelperFrame(slot: slot, byteCount: byteCount, timestampNanoseconds: values[2],
                                            sequence: Int(values[3]), counters: counters))
        case releaseTag:
            guard let values = fields(1), let slot = small(values[0]) else { return nil }
            return .release(slot: slot)
        case countersTag:
            guard let values = fields(6), let counters = counters(values[...]) else { return nil }
            return .counters(counters)
        default:
            return try? JSONDecoder().decode(CameraHelperMessage.self, from: Data(bytes))
        }
    }

    static let frameTag: UInt8 = 1, releaseTag: UInt8 = 2, countersTag: UInt8 = 3
}

/// Why the channel failed.
public struct CameraHelperError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// One end of the socket pair. Sends may come from any thread (a datagram is sent
/// whole); one thread receives. The descriptor is closed with the channel.
public final class CameraHelperChannel: @unchecked Sendable {
    public let descriptor: Int32
    /// The receiving thread's buffers (one thread receives), kept rather than allocated
    /// for every message.
    private let body = UnsafeMutableRawPointer.allocate(byteCount: maximumMessageBytes, alignment: 8)
    private let control = UnsafeMutableRawPointer.allocate(byteCount: controlSpace, alignment: 8)
    /// The largest message: a frame or an answer is a few hundred bytes; details a few kB.
    static let maximumMessageBytes = 256 << 10

    /// Takes ownership of `descriptor`.
    public init(descriptor: Int32) { self.descriptor = descriptor }

    deinit {
        close(descriptor)
        body.deallocate()
        control.deallocate()
    }

    /// A connected pair, both ends close-on-exec (the spawn puts the helper's end on its
    /// standard input, where it stays open).
    public static func pair() throws(CameraHelperError) -> (CameraHelperChannel, CameraHelperChannel) {
        var ends: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            throw CameraHelperError("socketpair: \(String(cString: strerror(errno)))")
        }
        return (CameraHelperChannel(descriptor: ends[0]), CameraHelperChannel(descriptor: ends[1]))
    }

    /// Sends one message, with `passing` (a descriptor) attached when given.
    /// - Returns: False when the other end is gone.
    @discardableResult
    public func send(_ message: CameraHelperMessage, passing attached: Int32? = nil) -> Bool {
        guard let data = message.encoded() else { return false }
        return data.withUnsafeBytes { body -> Bool in
            var part = iovec(iov_base: UnsafeMutableRawPointer(mutating: body.baseAddress), iov_len: body.count)
            return withUnsafeMutablePointer(to: &part) { partPointer -> Bool in
                var header = msghdr()
                header.msg_iov = partPointer
                header.msg_iovlen = 1
                // Control bytes only when a descriptor rides along (once per helper, not per frame).
                let control = attached.map { _ in UnsafeMutableRawPointer.allocate(byteCount: Self.controlSpace, alignment: 8) }
                defer { control?.deallocate() }
                if let attached, let control {
                    control.initializeMemory(as: UInt8.self, repeating: 0, count: Self.controlSpace)
                    let cmsg = control.assumingMemoryBound(to: cmsghdr.self)
                    cmsg.pointee.cmsg_len = Self.controlHeaderBytes + MemoryLayout<Int32>.size
                    cmsg.pointee.cmsg_level = SOL_SOCKET
                    cmsg.pointee.cmsg_type = Int32(SCM_RIGHTS)
                    control.storeBytes(of: attached, toByteOffset: Self.controlHeaderBytes, as: Int32.self)
                    header.msg_control = control
                    header.msg_controllen = Self.controlSpace
                }
                while true {
                    if sendmsg(descriptor, &header, Int32(MSG_NOSIGNAL)) >= 0 { return true }
                    if errno != EINTR { return false }
                }
            }
        }
    }

    /// Waits up to `timeout` seconds (nil: for ever) for one message.
    /// - Returns: The message and a descriptor that came with it, or nil on timeout.
    /// - Throws: `CameraHelperError` when the other end is gone or sent what is not a message.
    public func receive(timeout: Double?) throws(CameraHelperError) -> (CameraHelperMessage, Int32?)? {
        var waiting = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let milliseconds = timeout.map { Int32(clamping: Int(max($0, 0) * 1000)) } ?? -1
        let ready = poll(&waiting, 1, milliseconds)
        if ready < 0 {
            if errno == EINTR { return nil }
            throw CameraHelperError("poll: \(String(cString: strerror(errno)))")
        }
        if ready == 0 { return nil }
        var part = iovec(iov_base: body, iov_len: Self.maximumMessageBytes)
        var header = msghdr()
        header.msg_control = control
        header.msg_controllen = Self.controlSpace
        let received = withUnsafeMutablePointer(to: &part) { pointer -> Int in
            header.msg_iov = pointer
            header.msg_iovlen = 1
            return recvmsg(descriptor, &header, Int32(MSG_CMSG_CLOEXEC))
        }
        if received < 0 {
            if errno == EINTR || errno == EAGAIN { return nil }
            throw CameraHelperError("recvmsg: \(String(cString: strerror(errno)))")
        }
        if received == 0 { throw CameraHelperError("the other end closed the channel") }
        var attached: Int32?
        if header.msg_controllen >= Self.controlHeaderBytes + MemoryLayout<Int32>.size {
            let cmsg = control.assumingMemoryBound(to: cmsghdr.self)
            if cmsg.pointee.cmsg_level == SOL_SOCKET, cmsg.pointee.cmsg_type == Int32(SCM_RIGHTS) {
                attached = control.load(fromByteOffset: Self.controlHeaderBytes, as: Int32.self)
            }
        }
        guard header.msg_flags & Int32(MSG_TRUNC) == 0,
              let message = CameraHelperMessage.decode(UnsafeRawBufferPointer(start: body, count: received)) else {
            if let attached { close(attached) }
            throw CameraHelperError("a message that is not one (\(received) bytes)")
        }
        return (message, attached)
    }

    /// `CMSG_ALIGN(sizeof(struct cmsghdr))` and `CMSG_SPACE(sizeof(int))`: the header is
    /// padded to the size of `size_t`.
    private static let controlHeaderBytes = (MemoryLayout<cmsghdr>.size + MemoryLayout<Int>.size - 1) & ~(MemoryLayout<Int>.size - 1)
    private static let controlSpace = controlHeaderBytes + ((MemoryLayout<Int32>.size + MemoryLayout<Int>.size - 1) & ~(MemoryLayout<Int>.size - 1))
}
