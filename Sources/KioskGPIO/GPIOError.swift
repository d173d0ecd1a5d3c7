import Glibc
import KioskCore

/// A failed GPIO step on one chip (and line): what was attempted, the kernel's errno,
/// and what to do about it.
///
/// Every libgpiod failure becomes this type in `init(chip:line:operation:errno:code:context:)`
/// and nowhere else, so each message names the chip, the line, the step and the fix the
/// same way (the rendering is `DeviceError`'s):
///
///     request as a button input (both edges) failed for gpiochip0 line 17 (GPIO17): Device or resource busy (EBUSY).
///     The line is held by "gpiomon": stop that program, or choose another line for buttons.record_line.
public typealias GPIOError = DeviceError<GPIOErrorCode>

/// What kind of trouble, for callers that react differently (retry, disable GPIO).
public enum GPIOErrorCode: DeviceErrorCode {
    /// The steps of using a chip and its lines, a closed set.
    public typealias Call = GPIOOperation

    /// No such chip (ENOENT, ENODEV) or not a GPIO chip (ENOTTY).
    case chipMissing
    /// No line by that name on the chip.
    case lineMissing
    /// The offset is not below the chip's line count.
    case offsetOutOfRange
    /// EBUSY: another consumer holds the line.
    case busy
    /// EACCES/EPERM: the user may not open /dev/gpiochipN.
    case permissionDenied
    /// EINVAL/EOPNOTSUPP: the kernel refused the flags (bias, active-low).
    case unsupported
    /// The configuration contradicts itself (one line used twice).
    case configuration
    case other
}

/// The step that failed.
public enum GPIOOperation: String, Hashable, Sendable, CustomStringConvertible {
    case openChip = "open the chip"
    case findLine = "find the line"
    case requestInput = "request as a button input (both edges)"
    case requestOutput = "request as an output"
    case readEvents = "read edge events"
    case readValue = "read the value"
    case setValue = "set the value"
    case wait = "wait for edge events"
    case configure = "check the configuration"

    public var description: String { rawValue }
}

/// Facts gathered where the failure happened, to put into the hint.
public struct GPIOErrorContext: Sendable, Equatable {
    /// The chips there are, described (for a missing chip).
    public var availableChips: [String]?
    /// The chip's line count (for an offset out of range).
    public var lineCount: Int?
    /// Who holds the line (for a busy line).
    public var consumer: String?
    /// Some named lines of the chip (for a missing line name).
    public var lineNames: [String]?
    /// The config key the value came from ("buttons.record_line").
    public var setting: String?
    /// What is wrong, for `.configuration` errors (the error's detail).
    public var detail: String?

    public init(availableChips: [String]? = nil, lineCount: Int? = nil, consumer: String? = nil,
                lineNames: [String]? = nil, setting: String? = nil, detail: String? = nil) {
        self.availableChips = availableChips
        self.lineCount = lineCount
        self.consumer = consumer
        self.lineNames = lineNames
        self.setting = setting
        self.detail = detail
    }
}

extension DeviceError where Code == GPIOErrorCode {
    public typealias Context = GPIOErrorContext

    /// The group that owns /dev/gpiochip* on Raspberry Pi OS, and with our udev rule elsewhere.
    public static var group: String { "gpio" }
    /// Where the rootfs overlay's udev rule lands on the device.
    public static var udevRule: String { "/usr/lib/udev/rules.d/70-kioskcam.rules" }

    /// Maps a failure; the single place where errno values become codes and hints.
    /// - Parameters:
    ///   - chip: The chip's name, label or path.
    ///   - line: The line, described ("line 17 (GPIO17)", "line \"GPIO17\""), or nil for chip-level steps.
    ///   - operation: The step that failed.
    ///   - errno: The errno libgpiod left (positive); nil when no system call failed
    ///     (offsets and names checked before the call, the configuration).
    ///   - code: Overrides the errno-based code.
    ///   - context: Facts for the hint.
    public init(chip: String, line: String? = nil, operation: GPIOOperation, errno: Int32?,
                code: Code? = nil, context: Context = Context()) {
        let subject = line.map { "\(chip) \($0)" } ?? chip
        let setting = context.setting.map { " for \($0)" } ?? ""
        let resolved: Code = code ?? {
            switch errno ?? 0 {
            case ENOENT, ENODEV, ENXIO, ENOTTY:
                return operation == .openChip ? .chipMissing : (operation == .findLine ? .lineMissing : .other)
            case EBUSY: return .busy
            case EACCES, EPERM: return .permissionDenied
            case EINVAL, EOPNOTSUPP: return operation == .requestInput || operation == .requestOutput ? .unsupported : .other
            default: return .other
            }
        }()
        let hint: String?
        var detail = ""
        switch resolved {
        case .chipMissing:
            if let chips = context.availableChips, !chips.isEmpty {
                hint = "The chips here are: \(chips.joined(separator: "; ")). Set buttons.chip to one of their names, labels or paths, or \"auto\"."
            } else {
                hint = "This machine has no GPIO chips (no /dev/gpiochip*). Set buttons.chip = \"none\" to run without buttons."
            }
        case .lineMissing:
            if let names = context.lineNames, !names.isEmpty {
                hint = "No line has that name on \(chip); its named lines include \(names.joined(separator: ", ")). Use one of those or a line offset\(setting) (`gpioinfo \(chip)` lists them)."
            } else {
                hint = "\(chip) names none of its lines: use a line offset\(setting) (`gpioinfo \(chip)` lists them)."
            }
        case .offsetOutOfRange:
            detail = "no such line"
            let count = context.lineCount ?? 0
            hint = "\(chip) has \(count) line\(count == 1 ? "" : "s")\(count > 0 ? " (offsets 0–\(count - 1))" : ""); choose one of those\(setting), or another chip with buttons.chip."
        case .busy:
            let holder = context.consumer.map { "The line is held by \"\($0)\"" } ?? "Another program holds the line"
            hint = "\(holder): stop that program (or the other kioskcam), or choose another line\(setting)."
        case .permissionDenied:
            hint = "Permission denied: add the user to the `\(Self.group)` group (`sudo usermod -aG \(Self.group) USER`, then log in again); "
                + "the udev rule \(Self.udevRule) (from rootfs/) gives that group /dev/gpiochip*."
        case .unsupported:
            hint = "The kernel refused the line's settings: try buttons.bias = \"as-is\" (and external resistors), or another line\(setting)."
        case .configuration:
            detail = context.detail ?? ""
            hint = nil
        case .other:
            hint = operation == .readEvents || operation == .wait
                ? "The chip may have gone away; restart kioskcam once it is back."
                : nil
        }
        self.init(resolved, subject: subject, call: operation, errno: errno,
                  systemMessage: errno.map { String(cString: strerror($0)) }, detail: detail, hint: hint)
    }
}
