/// A setup or run-time failure of the appliance, as one line that says what went wrong
/// and what to do about it.
public struct ApplianceError: Error, CustomStringConvertible, Sendable {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
