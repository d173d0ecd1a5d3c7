/// Which GPIO chip the buttons and the LED are on.
public enum GPIOChipSelector: Sendable, Equatable, CustomStringConvertible {
    /// The board's main GPIO chip (a Raspberry Pi's pin controller) if there is one,
    /// else the first chip; no chip at all means no buttons, like a missing camera.
    case automatic
    /// No GPIO at all.
    case disabled
    /// A chip's name ("gpiochip0"), its label ("pinctrl-bcm2711") or its path ("/dev/gpiochip0").
    case named(String)

    /// Parses the config value: "auto", "none", or a name, label or path.
    public init?(parsing text: String) {
        switch text {
        case "auto": self = .automatic
        case "none": self = .disabled
        default:
            guard !text.isEmpty, !text.contains(where: \.isNewline) else { return nil }
            self = .named(text)
        }
    }

    public var description: String {
        switch self {
        case .automatic: "auto"
        case .disabled: "none"
        case .named(let name): name
        }
    }

    /// Labels of the chips that carry a Raspberry Pi's header pins, most preferred first:
    /// Pi 5 (RP1), Pi 4, Pi 3 / Zero 2.
    public static let raspberryPiLabels = ["pinctrl-rp1", "pinctrl-bcm2711", "pinctrl-bcm2835"]

    /// The chip `automatic` picks: the first whose label is a Raspberry Pi pin controller,
    /// else the first chip in number order.
    /// - Parameter chips: The chips there are, as (name, label), in number order.
    /// - Returns: The chosen chip's name, or nil when there is none.
    public static func automaticChoice(from chips: [(name: String, label: String)]) -> String? {
        for label in raspberryPiLabels {
            if let chip = chips.first(where: { $0.label == label }) { return chip.name }
        }
        return chips.first?.name
    }
}

/// One line on a GPIO chip: by offset, or by the name the board gives it.
public enum GPIOLineSelector: Sendable, Hashable, CustomStringConvertible {
    /// The line's offset on its chip (on a Raspberry Pi, the BCM GPIO number).
    case offset(Int)
    /// The line's name as the device tree gives it ("GPIO17" on a Raspberry Pi).
    case name(String)

    public var description: String {
        switch self {
        case .offset(let offset): "line \(offset)"
        case .name(let name): "line \"\(name)\""
        }
    }
}

/// The pull resistor asked of the kernel for an input line.
public enum GPIOBias: String, Sendable, Equatable, CaseIterable, CustomStringConvertible {
    /// Buttons to ground (active low) need this unless the board has its own resistors.
    case pullUp = "pull-up"
    case pullDown = "pull-down"
    /// No internal resistor (external ones are fitted).
    case disable
    /// Leave whatever the firmware or device tree set.
    case asIs = "as-is"

    public var description: String { rawValue }
}
