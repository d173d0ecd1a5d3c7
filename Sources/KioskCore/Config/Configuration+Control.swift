extension Configuration {
    /// The daemon: control socket, state directory, metrics.
    public struct Control: Sendable, Equatable {
        /// Root-only folder for the device ID, the PIN hash and throttling state.
        public var stateDirectory = "/var/lib/kioskcam"
        /// The Unix socket the CLI and the SSH scripts talk to the daemon through.
        public var socketPath = "/run/kioskcam/control.sock"
        /// Members of this group may use the socket (mode 0660); nil: only its owner's group.
        public var socketGroup: String? = "kioskcam"
        /// Most clients connected at once; one more gets a `busy` answer.
        public var maxClients = 16
        /// A client that sends nothing for this long is disconnected (subscribers excepted).
        public var idleTimeoutSeconds: Double = 60
        /// The Prometheus textfile (node_exporter textfile collector); nil: not written.
        public var metricsFile: String? = "/var/lib/prometheus/node-exporter/kioskcam.prom"
        /// How often the metrics file is rewritten.
        public var metricsIntervalSeconds: Double = 5

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
                // sun_path holds 108 bytes including the terminating NUL.
                guard text.hasPrefix("/"), text.count > 1, text.utf8.count < 108 else { return false }
                c.control.socketPath = text
                return true
            },
            .string("control.socket_group", allowed: "a group name such as \"kioskcam\", or \"\" for the owner's group only") { c, text in
                guard text.isEmpty || text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "_-.".contains($0)) }) else { return false }
                c.control.socketGroup = text.isEmpty ? nil : text
                return true
            },
            .integer("control.max_clients", 1...256) { c, v in c.control.maxClients = v },
            .number("control.idle_timeout_seconds", 1...86_400, unit: " seconds") { c, v in c.control.idleTimeoutSeconds = v },
            .string("control.metrics_file", allowed: "an absolute path ending in .prom, or \"\" for none") { c, text in
                if text.isEmpty { c.control.metricsFile = nil; return true }
                guard text.hasPrefix("/"), text.hasSuffix(".prom"), text.count > 6 else { return false }
                c.control.metricsFile = text
                return true
            },
            .number("control.metrics_interval_seconds", 1...3600, unit: " seconds") { c, v in c.control.metricsIntervalSeconds = v },
        ]
    }
}
