import CGPIOD
import Glibc
import KioskCore

/// One edge the kernel saw on an input line.
public struct GPIOEdge: Sendable, Equatable, CustomStringConvertible {
    /// The line's level right after the edge, active-low already applied (true: pressed).
    /// With both edges watched the kernel reads the level when it handles the interrupt,
    /// so fast bounces can arrive as several edges of the same kind.
    public var isActive: Bool
    /// The kernel's timestamp (CLOCK_MONOTONIC on Linux ≥ 5.7).
    public var time: MonotonicInstant

    public init(isActive: Bool, time: MonotonicInstant) {
        self.isActive = isActive
        self.time = time
    }

    public var description: String { "\(isActive ? "rising" : "falling") at \(time)" }
}

/// The consumer name the kernel shows for our lines (`gpioinfo`).
let gpioConsumer = "kioskcam"

/// A line requested as an input with both-edge events: the kernel queues each edge with
/// its timestamp on `fileDescriptor` (non-blocking), which the owner polls.
/// Released when dropped. The corresponding C function is `gpiod_line_request_both_edges_events_flags`.
public final class GPIOInputLine {
    private let chip: GPIOChip
    private let raw: OpaquePointer
    /// "line 17 (GPIO17)".
    public let lineDescription: String
    public let offset: Int
    /// Pollable for POLLIN while edges are queued.
    public let fileDescriptor: Int32

    init(chip: GPIOChip, line: OpaquePointer, activeLow: Bool, bias: GPIOBias, setting: String?) throws(GPIOError) {
        var flags: Int32 = activeLow ? Int32(GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW) : 0
        switch bias {
        case .pullUp: flags |= Int32(GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_UP)
        case .pullDown: flags |= Int32(GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_DOWN)
        case .disable: flags |= Int32(GPIOD_LINE_REQUEST_FLAG_BIAS_DISABLE)
        case .asIs: break
        }
        guard gpiod_line_request_both_edges_events_flags(line, gpioConsumer, flags) == 0 else {
            throw chip.requestError(line, .requestInput, errno: Glibc.errno, setting: setting)
        }
        let fd = gpiod_line_event_get_fd(line)
        // The event fd blocks by default; the poll loop must never block on a read.
        let status = fd >= 0 ? fcntl(fd, F_GETFL) : -1
        guard status >= 0, fcntl(fd, F_SETFL, status | O_NONBLOCK) == 0 else {
            let code = Glibc.errno
            gpiod_line_release(line)
            throw chip.requestError(line, .requestInput, errno: code == 0 ? EBADF : code, setting: setting)
        }
        self.chip = chip
        raw = line
        lineDescription = GPIOChip.describe(line)
        offset = Int(gpiod_line_offset(line))
        fileDescriptor = fd
    }

    deinit { gpiod_line_release(raw) }

    /// Edges the kernel keeps queued per line (GPIO uAPI v1); more are dropped.
    public static let kernelQueueLength = 16

    /// The chip this line belongs to.
    public var chipName: String { chip.name }

    /// The line's level now (true: active, i.e. pressed).
    /// - Throws: `GPIOError` with `.readValue`.
    public func isActive() throws(GPIOError) -> Bool {
        let value = gpiod_line_get_value(raw)
        guard value >= 0 else {
            throw GPIOError(chip: chip.name, line: lineDescription, operation: .readValue, errno: Glibc.errno)
        }
        return value == 1
    }

    /// Every edge queued now, oldest first; empty when none is (never blocks).
    /// - Throws: `GPIOError` with `.readEvents` when the read fails for another reason
    ///   than "nothing queued" (e.g. ENODEV: the chip went away).
    public func readEvents() throws(GPIOError) -> [GPIOEdge] {
        var edges: [GPIOEdge] = []
        let capacity = Self.kernelQueueLength
        var buffer = [gpiod_line_event](repeating: gpiod_line_event(), count: capacity)
        while true {
            let count = buffer.withUnsafeMutableBufferPointer {
                gpiod_line_event_read_multiple(raw, $0.baseAddress, UInt32(capacity))
            }
            if count < 0 {
                let code = Glibc.errno
                if code == EINTR { continue }
                if code == EAGAIN || code == EWOULDBLOCK { break }
                throw GPIOError(chip: chip.name, line: lineDescription, operation: .readEvents, errno: code)
            }
            for event in buffer.prefix(Int(count)) {
                let nanoseconds = Int64(event.ts.tv_sec) * 1_000_000_000 + Int64(event.ts.tv_nsec)
                edges.append(GPIOEdge(isActive: event.event_type == Int32(GPIOD_LINE_EVENT_RISING_EDGE),
                                      time: MonotonicInstant(nanoseconds: nanoseconds)))
            }
            if count < capacity { break }
        }
        return edges
    }
}

/// A line requested as an output (the status LED). Released when dropped; the kernel
/// then stops driving it. The corresponding C function is `gpiod_line_request_output_flags`.
public final class GPIOOutputLine {
    private let chip: GPIOChip
    private let raw: OpaquePointer
    public let lineDescription: String
    public let offset: Int
    /// The value last set (true: on).
    public private(set) var isOn: Bool

    init(chip: GPIOChip, line: OpaquePointer, activeLow: Bool, initiallyOn: Bool, setting: String?) throws(GPIOError) {
        let flags: Int32 = activeLow ? Int32(GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW) : 0
        guard gpiod_line_request_output_flags(line, gpioConsumer, flags, initiallyOn ? 1 : 0) == 0 else {
            throw chip.requestError(line, .requestOutput, errno: Glibc.errno, setting: setting)
        }
        self.chip = chip
        raw = line
        lineDescription = GPIOChip.describe(line)
        offset = Int(gpiod_line_offset(line))
        isOn = initiallyOn
    }

    deinit { gpiod_line_release(raw) }

    /// Drives the line (active-low already applied).
    /// - Throws: `GPIOError` with `.setValue`.
    public func set(_ on: Bool) throws(GPIOError) {
        guard gpiod_line_set_value(raw, on ? 1 : 0) == 0 else {
            throw GPIOError(chip: chip.name, line: lineDescription, operation: .setValue, errno: Glibc.errno)
        }
        isOn = on
    }
}
