extension Configuration {
    /// GPIO buttons and the status LED (libgpiod).
    public struct Buttons: Sendable, Equatable {
        public init() {}
    }

    /// The keys of the `[buttons]` section.
    static var buttonsSchema: [ConfigKey] {
        []
    }
}
