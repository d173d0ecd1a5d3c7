extension Configuration {
    /// GPIO buttons and the status LED (libgpiod). The defaults match the wiring in
    /// `hardware/`: buttons from GPIO17 (record) and GPIO27 (snapshot) to ground, using
    /// the internal pull-ups, and an LED on GPIO22 through a resistor to ground.
    public struct Buttons: Sendable, Equatable {
        /// One button: its line and what its presses do.
        public struct Button: Sendable, Equatable {
            /// nil: this button is not fitted.
            public var line: GPIOLineSelector?
            public var shortPress: ButtonAction
            /// `.none` turns long presses off for this button (every press is short).
            public var longPress: ButtonAction

            public init(line: GPIOLineSelector?, shortPress: ButtonAction, longPress: ButtonAction) {
                self.line = line
                self.shortPress = shortPress
                self.longPress = longPress
            }
        }

        public var chip: GPIOChipSelector = .automatic
        public var record = Button(line: .offset(17), shortPress: .recordToggle, longPress: .none)
        public var snapshot = Button(line: .offset(27), shortPress: .snapshot, longPress: .none)
        /// A third button, not fitted by default.
        public var extra = Button(line: nil, shortPress: .audioToggle, longPress: .none)
        /// Pressed reads low (buttons to ground with pull-ups).
        public var activeLow = true
        public var bias: GPIOBias = .pullUp
        /// A level must hold this long to count (contact bounce is shorter).
        public var debounceMilliseconds = 30
        /// Held this long is a long press.
        public var longPressMilliseconds = 1000
        /// The status LED's line; nil: no LED.
        public var statusLED: GPIOLineSelector? = .offset(22)
        /// The LED lights when the line is low (wired from 3.3 V to the pin).
        public var statusLEDActiveLow = false

        public init() {}

        /// The fitted buttons, by name, in a fixed order.
        public var fittedButtons: [(name: String, button: Button)] {
            [("record", record), ("snapshot", snapshot), ("extra", extra)].filter { $0.button.line != nil }
        }
    }

    /// The keys of the `[buttons]` section.
    static var buttonsSchema: [ConfigKey] {
        [
            .string("buttons.chip", allowed: "\"auto\", \"none\", a chip name such as \"gpiochip0\", a label such as \"pinctrl-bcm2711\", or a path such as \"/dev/gpiochip0\"") { c, text in
                guard let chip = GPIOChipSelector(parsing: text) else { return false }
                c.buttons.chip = chip
                return true
            },
            .gpioLine("buttons.record_line") { c, v in c.buttons.record.line = v },
            .choice("buttons.record_short", ButtonAction.self) { c, v in c.buttons.record.shortPress = v },
            .choice("buttons.record_long", ButtonAction.self) { c, v in c.buttons.record.longPress = v },
            .gpioLine("buttons.snapshot_line") { c, v in c.buttons.snapshot.line = v },
            .choice("buttons.snapshot_short", ButtonAction.self) { c, v in c.buttons.snapshot.shortPress = v },
            .choice("buttons.snapshot_long", ButtonAction.self) { c, v in c.buttons.snapshot.longPress = v },
            .gpioLine("buttons.extra_line") { c, v in c.buttons.extra.line = v },
            .choice("buttons.extra_short", ButtonAction.self) { c, v in c.buttons.extra.shortPress = v },
            .choice("buttons.extra_long", ButtonAction.self) { c, v in c.buttons.extra.longPress = v },
            .gpioFlag("buttons.active_low") { c, v in c.buttons.activeLow = v },
            .choice("buttons.bias", GPIOBias.self) { c, v in c.buttons.bias = v },
            .integer("buttons.debounce_ms", 0...1000, unit: " milliseconds") { c, v in c.buttons.debounceMilliseconds = v },
            .integer("buttons.long_press_ms", 100...10_000, unit: " milliseconds") { c, v in c.buttons.longPressMilliseconds = v },
            .gpioLine("buttons.led_line") { c, v in c.buttons.statusLED = v },
            .gpioFlag("buttons.led_active_low") { c, v in c.buttons.statusLEDActiveLow = v },
        ]
    }
}

extension ConfigKey {
    /// A GPIO line: an offset, a line name, or "none" (not fitted).
    static func gpioLine(_ path: String, _ set: @escaping (inout Configuration, GPIOLineSelector?) -> Void) -> ConfigKey {
        ConfigKey(path: path, allowed: "a line offset from 0 to 1023 (the BCM GPIO number on a Raspberry Pi), a line name such as \"GPIO17\", or \"none\"") { config, value in
            switch value {
            case .integer(let raw):
                guard let offset = Int(exactly: raw), (0...1023).contains(offset) else { return false }
                set(&config, .offset(offset))
            case .string("none"):
                set(&config, nil)
            case .string(let name):
                guard !name.isEmpty, !name.contains(where: \.isNewline) else { return false }
                set(&config, .name(name))
            default:
                return false
            }
            return true
        }
    }

    /// true or false.
    static func gpioFlag(_ path: String, _ set: @escaping (inout Configuration, Bool) -> Void) -> ConfigKey {
        ConfigKey(path: path, allowed: "true or false") { config, value in
            guard case .boolean(let flag) = value else { return false }
            set(&config, flag)
            return true
        }
    }
}
