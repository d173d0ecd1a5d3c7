extension Configuration {
    /// The screensaver and PIN lock (SPEC §5).
    public struct Lock: Sendable, Equatable {
        public init() {}
    }

    /// The keys of the `[lock]` section.
    static var lockSchema: [ConfigKey] {
        []
    }
}
