import Crypto
import Foundation
import Glibc
import KioskCore
import KioskRecording
import NIOSSL
import SwiftASN1
import X509

/// The web server's certificate and key, and the SHA-256 fingerprint a user compares
/// with the browser's warning.
public struct WebCertificate: Sendable {
    public let certificateChain: [NIOSSLCertificate]
    public let privateKey: NIOSSLPrivateKey
    /// `AB:CD:…`, 32 pairs: SHA-256 of the leaf certificate's DER.
    public let fingerprint: String
    /// The files it came from.
    public let certificatePath: String
    public let keyPath: String

    /// The self-signed certificate in `stateDirectory` (`web-cert.pem`, `web-key.pem`),
    /// made on the first start — ECDSA P-256, the device id in its subject, valid 10
    /// years — and kept, so the fingerprint a user once checked stays the same.
    /// - Throws: `WebError` naming the file that cannot be read or written.
    public static func selfSigned(stateDirectory: String, deviceID: String?, hostNames: [String]) throws(WebError) -> WebCertificate {
        let certificatePath = stateDirectory + "/web-cert.pem"
        let keyPath = stateDirectory + "/web-key.pem"
        if FileManager.default.fileExists(atPath: certificatePath) || FileManager.default.fileExists(atPath: keyPath) {
            return try load(certificatePath: certificatePath, keyPath: keyPath,
                            hint: "remove both \(certificatePath) and \(keyPath) to make a new self-signed certificate (its fingerprint changes)")
        }
        let (certificatePEM, keyPEM) = try make(deviceID: deviceID, hostNames: hostNames)
        try write(keyPEM, to: keyPath, mode: 0o600, directory: stateDirectory)
        try write(certificatePEM, to: certificatePath, mode: 0o644, directory: stateDirectory)
        return try load(certificatePath: certificatePath, keyPath: keyPath, hint: "")
    }

    /// The user's own certificate chain and key (`[web] tls = "files"`).
    /// - Throws: `WebError` naming the file that cannot be read or parsed.
    public static func load(certificatePath: String, keyPath: String, hint: String) throws(WebError) -> WebCertificate {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificatePath)
        } catch {
            throw WebError("cannot read the certificate \(certificatePath): \(error)",
                           hint: hint.isEmpty ? "check [web] cert_file: a PEM certificate (chain) readable by kioskcam" : hint)
        }
        guard let leaf = chain.first else {
            throw WebError("\(certificatePath) holds no certificate", hint: hint.isEmpty ? "check [web] cert_file" : hint)
        }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: keyPath, format: .pem)
        } catch {
            throw WebError("cannot read the private key \(keyPath): \(error)",
                           hint: hint.isEmpty ? "check [web] key_file: a PEM private key readable by kioskcam" : hint)
        }
        let der: [UInt8]
        do {
            der = try leaf.toDERBytes()
        } catch {
            throw WebError("cannot encode the certificate \(certificatePath): \(error)", hint: hint)
        }
        return WebCertificate(certificateChain: chain, privateKey: key, fingerprint: fingerprint(ofDER: der),
                              certificatePath: certificatePath, keyPath: keyPath)
    }

    /// `AB:CD:…` for a certificate's DER bytes.
    public static func fingerprint(ofDER der: [UInt8]) -> String {
        SHA256.hash(data: der).map { byte in
            let hex = String(byte, radix: 16, uppercase: true)
            return hex.count == 1 ? "0" + hex : hex
        }.joined(separator: ":")
    }

    /// A new self-signed certificate and its key, both PEM.
    static func make(deviceID: String?, hostNames: [String]) throws(WebError) -> (certificate: String, key: String) {
        let key = P256.Signing.PrivateKey()
        let name = "kioskcam " + (deviceID ?? "appliance")
        do {
            let subject = try DistinguishedName {
                OrganizationName("KioskCam")
                CommonName(name)
            }
            let now = Date()
            var alternativeNames: [GeneralName] = hostNames.map { .dnsName($0) }
            alternativeNames.append(.dnsName("localhost"))
            alternativeNames.append(.ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])))
            let certificate = try Certificate(
                version: .v3,
                serialNumber: Certificate.SerialNumber(),
                publicKey: .init(key.publicKey),
                notValidBefore: now.addingTimeInterval(-3600),
                notValidAfter: now.addingTimeInterval(10 * 365.25 * 24 * 3600),
                issuer: subject,
                subject: subject,
                signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.notCertificateAuthority)
                    Critical(KeyUsage(digitalSignature: true))
                    try ExtendedKeyUsage([.serverAuth])
                    SubjectAlternativeNames(alternativeNames)
                },
                issuerPrivateKey: .init(key)
            )
            var serializer = DER.Serializer()
            try serializer.serialize(certificate)
            let certificatePEM = PEMDocument(type: "CERTIFICATE", derBytes: serializer.serializedBytes).pemString
            return (certificatePEM + "\n", key.pemRepresentation + "\n")
        } catch {
            throw WebError("cannot make the self-signed certificate: \(error)", hint: "report this as a bug; meanwhile set [web] tls = \"files\"")
        }
    }

    private static func write(_ text: String, to path: String, mode: mode_t, directory: String) throws(WebError) {
        do {
            try AtomicFile.replace(path, with: Array(text.utf8), mode: mode)
        } catch {
            throw WebError(error.description, hint: error.operation == "create"
                           ? "check that [control] state_directory (\(directory)) exists and is writable by kioskcam"
                           : "free some space on the state directory's disk")
        }
    }
}

/// Why the web app cannot start or a request failed in the server itself, with the fix.
public struct WebError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public var hint: String

    public init(_ message: String, hint: String) {
        self.message = message
        self.hint = hint
    }

    public var description: String { hint.isEmpty ? message : "\(message). \(hint)" }
}
