import Crypto
import Foundation
import _CryptoExtras

/// A salted slow hash of a PIN, as stored in the PIN file: one line
///
///     pbkdf2-sha256$<iterations>$<salt, base64>$<hash, base64>
///
/// PBKDF2-HMAC-SHA256, 16 random bytes of salt, 32 bytes of output. A four-digit PIN
/// has only 10,000 values, so the hash alone cannot stop someone who has the file;
/// the file is root-only and the hash only makes each guess cost a noticeable time.
public struct PinHash: Sendable, Equatable {
    public static let scheme = "pbkdf2-sha256"
    /// New hashes use this many iterations: swift-crypto's minimum for its checked API,
    /// above the 100,000 floor and about 0.1–0.3 s per check on a Pi-class board.
    public static let defaultIterations = 210_000
    /// Files with fewer iterations are refused as tampered with or corrupt.
    public static let minimumIterations = 100_000
    static let saltByteCount = 16
    static let hashByteCount = 32

    public let iterations: Int
    public let salt: [UInt8]
    let hash: [UInt8]

    /// Hashes `pin` with a fresh random salt.
    /// - Throws: `PinStoreError.crypto` if the hash function fails.
    public init(pin: String, iterations: Int = defaultIterations) throws(PinStoreError) {
        var random = SystemRandomNumberGenerator()
        let salt = (0..<Self.saltByteCount).map { _ in UInt8.random(in: 0 ... .max, using: &random) }
        self.iterations = iterations
        self.salt = salt
        hash = try Self.derive(pin, salt: salt, iterations: iterations)
    }

    /// Reads the PIN file's line.
    /// - Throws: `PinStoreError.corrupt` naming what is wrong (never the content).
    public init(parsing text: String, path: String? = nil) throws(PinStoreError) {
        func corrupt(_ detail: String) -> PinStoreError {
            PinStoreError(.corrupt, operation: "read the PIN hash", path: path, detail: detail,
                          hint: "set a new PIN with `kioskcam pin set` (or remove the file to go back to the factory-default PIN)")
        }
        let line = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let parts = line.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == Self.scheme else { throw corrupt("expected \(Self.scheme)$iterations$salt$hash") }
        guard let iterations = Int(parts[1]), iterations >= Self.minimumIterations, iterations <= 100_000_000 else {
            throw corrupt("the iteration count must be a number from \(Self.minimumIterations) to 100000000")
        }
        guard let salt = Data(base64Encoded: String(parts[2])), salt.count >= 8 else { throw corrupt("the salt is not base64 of 8 bytes or more") }
        guard let hash = Data(base64Encoded: String(parts[3])), hash.count == Self.hashByteCount else {
            throw corrupt("the hash is not base64 of \(Self.hashByteCount) bytes")
        }
        self.iterations = iterations
        self.salt = Array(salt)
        self.hash = Array(hash)
    }

    /// The line written to the PIN file (with a trailing newline).
    public var encoded: String {
        "\(Self.scheme)$\(iterations)$\(Data(salt).base64EncodedString())$\(Data(hash).base64EncodedString())\n"
    }

    /// Whether `pin` hashes to the stored value. Takes the full PBKDF2 time whatever the
    /// answer, and compares in constant time.
    /// - Throws: `PinStoreError.crypto` if the hash function fails.
    public func matches(_ pin: String) throws(PinStoreError) -> Bool {
        constantTimeEqual(try Self.derive(pin, salt: salt, iterations: iterations), hash)
    }

    private static func derive(_ pin: String, salt: [UInt8], iterations: Int) throws(PinStoreError) -> [UInt8] {
        do {
            // The unchecked entry point: files written with 100,000–209,999 iterations
            // (the floor) must still verify; `init(parsing:)` enforces the floor.
            let key = try KDF.Insecure.PBKDF2.deriveKey(from: Array(pin.utf8), salt: salt, using: .sha256,
                                                         outputByteCount: hashByteCount, unsafeUncheckedRounds: iterations)
            return key.withUnsafeBytes { Array($0) }
        } catch {
            throw PinStoreError(.crypto, operation: "hash the PIN", detail: "\(error)")
        }
    }
}

/// Compares without an early exit, so the time taken says nothing about where the
/// first difference is.
func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    var difference: UInt8 = 0
    for index in a.indices { difference |= a[index] ^ b[index] }
    return difference == 0
}
