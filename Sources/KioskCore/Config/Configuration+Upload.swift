extension Configuration {
    /// Offsite copies to S3-compatible storage (`[upload]`): AWS S3, MinIO, Backblaze B2, Garage.
    ///
    /// Off while `url` is empty. The secret key is never in this file: `secret_access_key_file`
    /// names a file (root-only) the daemon reads once at start.
    public struct Upload: Sendable, Equatable {
        /// `s3://bucket/prefix`; "" = no uploads.
        public var url = ""
        /// The server, `http(s)://host[:port]`; "" = AWS, `https://s3.<region>.amazonaws.com`.
        public var endpoint = ""
        /// The region the signature is made for (MinIO and Garage accept any, usually us-east-1).
        public var region = "us-east-1"
        public var accessKeyID = ""
        /// An absolute path to a file holding the secret access key (one line).
        public var secretAccessKeyFile = ""
        /// What is copied; every kind by default.
        public var kinds: Set<UploadKind> = Set(UploadKind.allCases)
        /// Upload bandwidth limit in kilobits a second; 0 = no limit.
        public var maxKbps = 0
        /// Delete the local file once its copy is checked.
        public var deleteAfterUpload = false

        public init() {}

        /// Whether uploads are on.
        public var isEnabled: Bool { !url.isEmpty }

        /// The bucket and prefix `url` names (nil while off).
        public var location: S3Location? { S3Location(url: url) }

        /// The server actually used: `endpoint`, or AWS's for `region`.
        public var effectiveEndpoint: String {
            endpoint.isEmpty ? "https://s3.\(region).amazonaws.com" : endpoint
        }

        /// The upload limit in bytes a second (nil: no limit).
        public var maxBytesPerSecond: Int64? { maxKbps > 0 ? Int64(maxKbps) * 1000 / 8 : nil }

        /// What keeps the settings from working together, for a person to fix; nil when
        /// uploads are off or everything needed is set. Each key alone is checked when the
        /// file is read; this checks the keys that only make sense together.
        public var problem: ConfigurationError? {
            guard isEnabled else { return nil }
            if accessKeyID.isEmpty {
                return ConfigurationError(key: "upload.access_key_id",
                                          message: "[upload] url is set but access_key_id is not: set it to the access key of the bucket's user, or set url = \"\" to switch uploads off")
            }
            if secretAccessKeyFile.isEmpty {
                return ConfigurationError(key: "upload.secret_access_key_file",
                                          message: "[upload] url is set but secret_access_key_file is not: put the secret key in a root-only file (chmod 600) and name it here, or set url = \"\" to switch uploads off")
            }
            return nil
        }
    }

    /// The keys of the `[upload]` section.
    static var uploadSchema: [ConfigKey] {
        [
            .string("upload.url", allowed: "\"\" (off) or \"s3://BUCKET/PREFIX\": a bucket name of 3 to 63 lowercase letters, digits, dots and hyphens, and an optional prefix of letters, digits, '-', '_', '.' and '/'") { c, text in
                guard text.isEmpty || S3Location(url: text) != nil else { return false }
                c.upload.url = text
                return true
            },
            .string("upload.endpoint", allowed: "\"\" (AWS: https://s3.REGION.amazonaws.com) or a server's address such as \"http://127.0.0.1:9000\" or \"https://s3.example.net\" (no path)") { c, text in
                guard text.isEmpty || S3Location.isValidEndpoint(text) else { return false }
                var trimmed = text
                while trimmed.hasSuffix("/") { trimmed.removeLast() }
                c.upload.endpoint = trimmed
                return true
            },
            .string("upload.region", allowed: "a region name of lowercase letters, digits and hyphens, such as \"us-east-1\"") { c, text in
                guard (1...32).contains(text.utf8.count),
                      text.utf8.allSatisfy({ S3Location.isLowercaseLetterOrDigit($0) || $0 == UInt8(ascii: "-") }) else { return false }
                c.upload.region = text
                return true
            },
            .string("upload.access_key_id", allowed: "\"\" (unset) or the access key's id: 1 to 128 letters, digits and '-', '_', '.' (the secret goes in secret_access_key_file)") { c, text in
                guard text.utf8.count <= 128,
                      text.utf8.allSatisfy({ S3Location.isLetterOrDigit($0) || "-_.".utf8.contains($0) }) else { return false }
                c.upload.accessKeyID = text
                return true
            },
            .string("upload.secret_access_key_file", allowed: "the absolute path of a root-only file holding the secret access key, such as \"/etc/kioskcam/s3-secret\" (never the secret itself)") { c, text in
                guard text.hasPrefix("/"), text.count > 1, !text.contains(where: { $0.isNewline || $0 == "\0" }) else { return false }
                c.upload.secretAccessKeyFile = text
                return true
            },
            ConfigKey(path: "upload.kinds",
                      allowed: "a list of one or more of " + UploadKind.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
                        + ", such as [\"events\", \"photo\"]") { c, value in
                guard case .array(let items) = value, !items.isEmpty else { return false }
                var kinds: Set<UploadKind> = []
                for item in items {
                    guard case .string(let text) = item, let kind = UploadKind(rawValue: text) else { return false }
                    kinds.insert(kind)
                }
                c.upload.kinds = kinds
                return true
            },
            .integer("upload.max_kbps", 0...10_000_000, unit: " kilobits a second (0: no limit)") { c, v in c.upload.maxKbps = v },
            .bool("upload.delete_after_upload") { c, v in c.upload.deleteAfterUpload = v },
        ]
    }
}
