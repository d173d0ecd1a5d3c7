import CGPIOD
import Glibc
import KioskCore

/// What `GPIOChip.available()` reports about one chip.
public struct GPIOChipInfo: Sendable, Equatable, CustomStringConvertible {
    /// "gpiochip0".
    public var name: String
    /// The driver's label ("pinctrl-bcm2711", "gpio-sim.0-node0"); empty if the chip could not be opened.
    public var label: String
    public var lineCount: Int
    /// Why the chip could not be opened (errno), if it could not.
    public var openErrno: Int32?

    public var path: String { "/dev/" + name }

    public var description: String {
        if let openErrno { return "\(name) (cannot open: \(String(cString: strerror(openErrno))))" }
        return "\(name) [\(label)] (\(lineCount) lines)"
    }
}

/// An open GPIO chip (`struct gpiod_chip *`). Lines requested from it keep it open;
/// it closes when the last of them and its owner let go.
/// The corresponding C function is `gpiod_chip_open`.
public final class GPIOChip {
    let raw: OpaquePointer
    /// "gpiochip0".
    public let name: String
    /// The driver's label, e.g. "pinctrl-bcm2711".
    public let label: String
    public let lineCount: Int

    /// Opens a chip.
    /// - Parameter selector: A name ("gpiochip0"), a number ("0"), a path ("/dev/gpiochip0")
    ///   or a label ("pinctrl-bcm2711").
    /// - Throws: `GPIOError` with `.openChip`: code `.chipMissing` (the hint lists the chips
    ///   there are) or `.permissionDenied` (the hint names the group and the udev rule).
    public init(opening selector: String) throws(GPIOError) {
        let chip: OpaquePointer?
        if selector.hasPrefix("/") {
            chip = gpiod_chip_open(selector)
        } else if selector.hasPrefix("gpiochip"), !selector.dropFirst(8).isEmpty, selector.dropFirst(8).allSatisfy(\.isNumber) {
            chip = gpiod_chip_open_by_name(selector)
        } else if !selector.isEmpty, selector.allSatisfy(\.isNumber), let number = UInt32(selector) {
            chip = gpiod_chip_open_by_number(number)
        } else {
            chip = gpiod_chip_open_by_label(selector)
        }
        guard let chip else {
            let code = Glibc.errno == 0 ? ENOENT : Glibc.errno
            throw GPIOError(chip: selector, operation: .openChip, errno: code,
                            context: .init(availableChips: Self.available().map(\.description)))
        }
        raw = chip
        name = String(cString: gpiod_chip_name(chip))
        label = String(cString: gpiod_chip_label(chip))
        lineCount = Int(gpiod_chip_num_lines(chip))
    }

    deinit { gpiod_chip_close(raw) }

    /// Opens the chip a `[buttons] chip` setting names.
    /// - Returns: nil for `.disabled`, and for `.automatic` on a machine with no GPIO chip.
    /// - Throws: `GPIOError` as `init(opening:)`.
    public static func open(_ selector: GPIOChipSelector) throws(GPIOError) -> GPIOChip? {
        switch selector {
        case .disabled:
            return nil
        case .named(let name):
            return try GPIOChip(opening: name)
        case .automatic:
            let chips = available()
            let openable = chips.filter { $0.openErrno == nil }.map { (name: $0.name, label: $0.label) }
            if let choice = GPIOChipSelector.automaticChoice(from: openable) {
                return try GPIOChip(opening: choice)
            }
            // Chips that exist but cannot be opened are an error worth a message, not "no GPIO".
            if let first = chips.first { return try GPIOChip(opening: first.name) }
            return nil
        }
    }

    /// The chips in /dev, in number order, each opened briefly for its label and size.
    public static func available() -> [GPIOChipInfo] {
        guard let directory = opendir("/dev") else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasPrefix("gpiochip"), let _ = Int(name.dropFirst(8)) { names.append(name) }
        }
        names.sort { Int($0.dropFirst(8))! < Int($1.dropFirst(8))! }
        return names.map { name in
            guard let chip = gpiod_chip_open_by_name(name) else {
                return GPIOChipInfo(name: name, label: "", lineCount: 0, openErrno: Glibc.errno)
            }
            defer { gpiod_chip_close(chip) }
            return GPIOChipInfo(name: name, label: String(cString: gpiod_chip_label(chip)),
                                lineCount: Int(gpiod_chip_num_lines(chip)), openErrno: nil)
        }
    }

    /// Finds a line.
    /// - Parameters:
    ///   - selector: Offset or name.
    ///   - setting: The config key the selector came from, for the hint.
    /// - Throws: `GPIOError` with `.findLine`: `.offsetOutOfRange` (the hint says how many
    ///   lines the chip has) or `.lineMissing` (the hint lists named lines).
    func line(_ selector: GPIOLineSelector, setting: String?) throws(GPIOError) -> OpaquePointer {
        switch selector {
        case .offset(let offset):
            guard offset >= 0, offset < lineCount, let line = gpiod_chip_get_line(raw, UInt32(offset)) else {
                throw GPIOError(chip: name, line: selector.description, operation: .findLine, errno: nil,
                                code: .offsetOutOfRange, context: .init(lineCount: lineCount, setting: setting))
            }
            return line
        case .name(let lineName):
            guard let line = gpiod_chip_find_line(raw, lineName) else {
                let code = Glibc.errno
                throw GPIOError(chip: name, line: selector.description, operation: .findLine,
                                errno: code == 0 ? ENOENT : code, code: code == ENOENT || code == 0 ? .lineMissing : nil,
                                context: .init(lineNames: namedLines(limit: 12), setting: setting))
            }
            return line
        }
    }

    /// Up to `limit` line names of this chip, in offset order.
    func namedLines(limit: Int) -> [String] {
        var names: [String] = []
        for offset in 0..<lineCount where names.count < limit {
            if let line = gpiod_chip_get_line(raw, UInt32(offset)), let name = gpiod_line_name(line) {
                names.append(String(cString: name))
            }
        }
        return names
    }

    /// "line 17 (GPIO17)" for a found line.
    static func describe(_ line: OpaquePointer) -> String {
        let offset = gpiod_line_offset(line)
        if let name = gpiod_line_name(line) { return "line \(offset) (\(String(cString: name)))" }
        return "line \(offset)"
    }

    /// Who holds a line now, if anyone (re-read from the kernel).
    /// - Parameter selector: Offset or name.
    /// - Returns: The consumer's name, "" for an unnamed user, nil when the line is free or missing.
    public func consumer(of selector: GPIOLineSelector) -> String? {
        guard let line = try? line(selector, setting: nil) else { return nil }
        _ = gpiod_line_update(line)
        guard gpiod_line_is_used(line) else { return nil }
        return gpiod_line_consumer(line).map { String(cString: $0) } ?? ""
    }

    /// Requests a line as a button input with both-edge events, consumer "kioskcam".
    /// - Parameters:
    ///   - selector: Offset or name.
    ///   - activeLow: Whether pressed reads low; edges and values are reported as pressed/released.
    ///   - bias: The pull resistor to ask for.
    ///   - setting: The config key, for hints.
    /// - Throws: `GPIOError` with `.findLine` (see `line(_:setting:)`), or `.requestInput`:
    ///   `.busy` (the hint names the consumer), `.permissionDenied`, `.unsupported`.
    public func requestInput(_ selector: GPIOLineSelector, activeLow: Bool, bias: GPIOBias,
                             setting: String? = nil) throws(GPIOError) -> GPIOInputLine {
        let line = try line(selector, setting: setting)
        return try GPIOInputLine(chip: self, line: line, activeLow: activeLow, bias: bias, setting: setting)
    }

    /// Requests a line as an output (an LED), consumer "kioskcam".
    /// - Parameters:
    ///   - selector: Offset or name.
    ///   - activeLow: Whether "on" drives the line low.
    ///   - initiallyOn: The value to start with.
    ///   - setting: The config key, for hints.
    /// - Throws: `GPIOError` with `.findLine`, or `.requestOutput`: `.busy`, `.permissionDenied`.
    public func requestOutput(_ selector: GPIOLineSelector, activeLow: Bool, initiallyOn: Bool = false,
                              setting: String? = nil) throws(GPIOError) -> GPIOOutputLine {
        let line = try line(selector, setting: setting)
        return try GPIOOutputLine(chip: self, line: line, activeLow: activeLow, initiallyOn: initiallyOn, setting: setting)
    }

    /// The error for a failed request, with the current holder of the line when it is busy.
    func requestError(_ line: OpaquePointer, _ operation: GPIOOperation, errno code: Int32, setting: String?) -> GPIOError {
        var consumer: String?
        if code == EBUSY {
            _ = gpiod_line_update(line)
            consumer = gpiod_line_consumer(line).map { String(cString: $0) }
        }
        return GPIOError(chip: name, line: Self.describe(line), operation: operation, errno: code,
                         context: .init(consumer: consumer, setting: setting))
    }
}
