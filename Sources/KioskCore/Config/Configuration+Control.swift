extension Configuration {
    /// The daemon: control socket, state directory, metrics.
    public struct Control: Sendable, Equatable {
        public init() {}
    }

    /// The keys of the `[control]` section.
    static var controlSchema: [ConfigKey] {
        []
    }
}
