extension Configuration {
    /// The touch screen (libevdev).
    public struct Touch: Sendable, Equatable {
        public init() {}
    }

    /// The keys of the `[touch]` section.
    static var touchSchema: [ConfigKey] {
        []
    }
}
