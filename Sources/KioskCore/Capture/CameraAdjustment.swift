import Foundation

/// The camera settings a person can change while kioskcam runs (`kioskcam camera set`,
/// the socket's `camera.set`), by the names the configuration uses.
public enum CameraSettingName: String, CaseIterable, Sendable, Codable, Comparable {
    case zoom, focus, exposure
    case whiteBalance = "white_balance"
    case brightness, contrast, torch

    public static func < (a: Self, b: Self) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }

    /// What a value means, for messages.
    public var expected: String {
        switch self {
        case .zoom: "a factor from 1 (no zoom) to 16, such as 2.0"
        case .torch: "on or off"
        default: "auto or a number in the camera's own units (kioskcam camera get shows the range)"
        }
    }
}

/// One setting's new value.
public enum CameraSettingValue: Sendable, Equatable, CustomStringConvertible {
    /// The camera's automatic mode (focus, exposure, white balance), or its default.
    case automatic
    case value(Double)

    public var description: String {
        switch self {
        case .automatic: "auto"
        case .value(let number): number == number.rounded() && abs(number) < 1e9 ? String(Int(number)) : String(number)
        }
    }
}

/// Settings to change, each once, in the order of `CameraSettingName`.
public struct CameraAdjustment: Sendable, Equatable, CustomStringConvertible {
    public private(set) var settings: [(name: CameraSettingName, value: CameraSettingValue)] = []

    public init() {}

    public static func == (a: Self, b: Self) -> Bool {
        a.settings.map(\.name) == b.settings.map(\.name) && a.settings.map(\.value) == b.settings.map(\.value)
    }

    public var isEmpty: Bool { settings.isEmpty }

    /// Sets (or replaces) one setting.
    /// - Throws: `CameraAdjustmentError` naming what is allowed when the value does not fit.
    public mutating func set(_ name: CameraSettingName, _ value: CameraSettingValue) throws(CameraAdjustmentError) {
        let bad: Bool
        switch value {
        case .automatic: bad = name == .torch
        case .value(let number): bad = !number.isFinite || abs(number) >= 1e9 || (name == .zoom && !(1...16).contains(number))
        }
        if bad { throw CameraAdjustmentError(name: name, message: "\(name.rawValue) must be \(name.expected)") }
        if let index = settings.firstIndex(where: { $0.name == name }) {
            settings[index].value = value
        } else {
            settings.append((name, value))
            settings.sort { $0.name < $1.name }
        }
    }

    /// Merges `other` over this one (later settings win): what the camera should be given
    /// again after a reconnect.
    public func merging(_ other: CameraAdjustment) -> CameraAdjustment {
        var merged = self
        for (name, value) in other.settings { try? merged.set(name, value) }
        return merged
    }

    public func value(_ name: CameraSettingName) -> CameraSettingValue? {
        settings.first { $0.name == name }?.value
    }

    /// Parses `kioskcam camera set` words: `zoom=2.0 focus=auto torch=on`.
    /// - Throws: `CameraAdjustmentError` for an unknown name, a missing `=` or a bad value.
    public init(parsing words: [String]) throws(CameraAdjustmentError) {
        for word in words {
            guard let equals = word.firstIndex(of: "=") else {
                throw CameraAdjustmentError(name: nil, message: "\(word): write name=value, such as zoom=2.0")
            }
            let key = String(word[..<equals]).lowercased().replacingOccurrences(of: "-", with: "_")
            let text = String(word[word.index(after: equals)...]).lowercased()
            guard let name = CameraSettingName(rawValue: key) else {
                throw CameraAdjustmentError(name: nil, message: "\(key): not a camera setting; settings: \(CameraSettingName.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            let value: CameraSettingValue
            switch (name, text) {
            case (.torch, "on"), (.torch, "true"), (.torch, "1"): value = .value(1)
            case (.torch, "off"), (.torch, "false"), (.torch, "0"): value = .value(0)
            case (_, "auto"): value = .automatic
            default:
                guard let number = Double(text), name != .torch else {
                    throw CameraAdjustmentError(name: name, message: "\(name.rawValue) must be \(name.expected)")
                }
                value = .value(number)
            }
            try set(name, value)
        }
    }

    /// "zoom=2 focus=auto".
    public var description: String { settings.map { "\($0.name.rawValue)=\($0.value)" }.joined(separator: " ") }
}

public struct CameraAdjustmentError: Error, Sendable, Equatable, CustomStringConvertible {
    public var name: CameraSettingName?
    public var message: String
    public var description: String { message }
}

/// Zoom as a factor (1 = the whole picture) to and from a camera's zoom control.
///
/// V4L2 leaves the control's units to the camera. UVC webcams mostly count from 100 (1×)
/// up (500 = 5×), so a range that starts above zero is read as "minimum = 1×" and the
/// factor scales it; a range that starts at 0 or 1 is spread linearly from 1× at its
/// minimum to `assumedMaximumFactor` at its maximum.
public enum ZoomMapping {
    public static let assumedMaximumFactor = 4.0

    /// The largest factor the control reaches.
    public static func maximumFactor(minimum: Int, maximum: Int) -> Double {
        guard maximum > minimum else { return 1 }
        return minimum >= 10 ? Double(maximum) / Double(minimum) : assumedMaximumFactor
    }

    /// The control value for `factor`, clamped to the range.
    public static func deviceValue(factor: Double, minimum: Int, maximum: Int) -> Int {
        guard maximum > minimum, factor.isFinite else { return minimum }
        let top = maximumFactor(minimum: minimum, maximum: maximum)
        let clamped = min(max(1, factor), top)
        let value = minimum >= 10
            ? Double(minimum) * clamped
            : Double(minimum) + (clamped - 1) / (top - 1) * Double(maximum - minimum)
        return min(max(minimum, Int(value.rounded())), maximum)
    }

    /// The factor a control value stands for.
    public static func factor(deviceValue: Int, minimum: Int, maximum: Int) -> Double {
        guard maximum > minimum else { return 1 }
        let top = maximumFactor(minimum: minimum, maximum: maximum)
        let value = Double(min(max(minimum, deviceValue), maximum))
        return minimum >= 10 ? value / Double(minimum) : 1 + (value - Double(minimum)) / Double(maximum - minimum) * (top - 1)
    }
}

extension CameraSettingName {
    /// This setting as `kioskcam camera get` prints it from its `camera.get` entry:
    /// "exposure: 150 (range 1…10000 × 100 µs, default 200), libcamera ExposureTime".
    /// The entry comes over the socket: numbers are checked before they are converted.
    public func getLine(_ entry: [String: JSONValue]) -> String {
        func whole(_ number: Double) -> String {
            number.isFinite && abs(number) < 1e15 ? String(Int64(number.rounded())) : "?"
        }
        let how = entry["how"]?.stringValue ?? "?"
        guard how != "none" else {
            return "\(rawValue): " + (entry["message"]?.stringValue ?? "the camera has no \(rawValue) control")
        }
        var line = "\(rawValue): "
        if let value = entry["value"]?.doubleValue {
            line += self == .zoom ? String(format: "%.2f", value) : whole(value)
        } else if let value = entry["value"]?.stringValue {
            line += value
        }
        let unit = entry["unit"]?.stringValue.map { " \($0)" } ?? ""
        if let minimum = entry["minimum"]?.doubleValue, let maximum = entry["maximum"]?.doubleValue {
            line += " (range \(whole(minimum))…\(whole(maximum))\(unit)"
                + (entry["default"]?.doubleValue.map { ", default \(whole($0))" } ?? "") + ")"
        } else if let maximum = entry["maximum"]?.doubleValue {
            line += " (up to \(String(format: "%.1f", maximum))×)"
        }
        switch how {
        case "digital": line += ", digital"
        case "libcamera": line += ", libcamera " + (entry["control"]?.stringValue ?? "control")
        default: line += ", the camera's"
        }
        return line
    }
}
