extension Configuration {
    /// The framebuffer screen, screensaver and PIN lock.
    public struct Screen: Sendable, Equatable {
        public init() {}
    }

    /// The keys of the `[screen]` section.
    static var screenSchema: [ConfigKey] {
        []
    }
}
