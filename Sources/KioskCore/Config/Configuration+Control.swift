extension Configuration {
    /// The daemon: control socket, state directory, metrics.
    public struct Control: Sendable, Equatable {
        /// Root-only folder for the device ID, the PIN hash and throttling state.
        public var stateDirectory = "/var/lib/kioskcam"
        /// The Unix socket the CLI and the SSH scripts talk to the daemon through.
        public var socketPath = "/run/kioskcam/control.sock"

        public init() {}
    }

    /// The keys of the `[control]` section.
    static var controlSchema: [ConfigKey] {
        [
            .string("control.state_directory", allowed: "an absolute path such as \"/var/lib/kioskcam\"") { c, text in
                guard text.hasPrefix("/"), text.count > 1 else { return false }
                c.control.stateDirectory = text
                return true
            },
            .string("control.socket", allowed: "an absolute path such as \"/run/kioskcam/control.sock\"") { c, text in
                guard text.hasPrefix("/"), text.count > 1 else { return false }
                c.control.socketPath = text
                return true
            },
        ]
    }
}
