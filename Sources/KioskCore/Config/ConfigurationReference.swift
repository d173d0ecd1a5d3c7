import Foundation

/// docs/configuration-reference.md, generated: every key of the schema (in its order,
/// by section) with the values it accepts (the schema's own words, the ones its errors
/// use), and its default and meaning from the example file
/// (`rootfs/etc/kioskcam/kioskcam.toml`), which shows every key at its default under the
/// comment that explains it. A test regenerates it and fails when the file differs, so
/// the reference cannot drift from the code.
public enum ConfigurationReference {
    /// The page, from the example file's text.
    public static func markdown(example: String) -> String {
        let documented = exampleEntries(example)
        var out = """
        # Configuration reference

        Generated from the configuration schema (`Sources/KioskCore/Config`) and the example
        file [`rootfs/etc/kioskcam/kioskcam.toml`](../rootfs/etc/kioskcam/kioskcam.toml),
        which shows every key at its default (an example where the default is unset); a test
        fails when this page differs from what they give (`KIOSKCAM_WRITE_REFERENCE=1 swift test --filter ConfigurationReferenceTests`
        writes it again). Every key is optional. The same keys in more words, by subject:
        [Configuration](configuration.md).

        """
        var section = ""
        for key in Configuration.schema {
            let parts = key.path.split(separator: ".", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { continue }
            if parts[0] != section {
                section = parts[0]
                out += "\n## [\(section)]\n\n| key | default | accepts | what it does |\n|---|---|---|---|\n"
            }
            let entry = documented[key.path]
            let shown = entry.map { entry in
                isDefault(section: parts[0], name: parts[1], value: entry.value)
                    ? "`\(cell(entry.value))`" : "unset (example: `\(cell(entry.value))`)"
            } ?? ""
            out += "| `\(parts[1])` | \(shown) | \(cell(key.allowed)) | \(cell(entry?.meaning ?? "")) |\n"
        }
        return out
    }

    /// Whether the example's value is the default: set alone, it leaves the configuration
    /// as it is without the key. (A few keys show an example where the default is "unset",
    /// such as the camera's controls, which default to the camera's own.)
    static func isDefault(section: String, name: String, value: String) -> Bool {
        guard let set = try? Configuration(toml: "[\(section)]\n\(name) = \(value)\n", file: "example") else { return false }
        return set == Configuration()
    }

    /// Each `key = value` of the example file with the comment above it; a key right
    /// below another shares its comment ("as above").
    static func exampleEntries(_ text: String) -> [String: (value: String, meaning: String)] {
        var entries: [String: (value: String, meaning: String)] = [:]
        var section = ""
        var comment: [String] = []
        var previousWasKey = false
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty {
                comment = []
                previousWasKey = false
            } else if line.hasPrefix("[") {
                section = String(line.dropFirst().prefix { $0 != "]" })
                comment = []
                previousWasKey = false
            } else if line.hasPrefix("#") {
                comment.append(String(line.drop { $0 == "#" }).trimmingCharacters(in: .whitespaces))
                previousWasKey = false
            } else if let equals = line.firstIndex(of: "=") {
                let name = line[..<equals].trimmingCharacters(in: .whitespaces)
                let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
                let meaning = comment.isEmpty ? (previousWasKey ? "as above" : "") : comment.joined(separator: " ")
                entries[section + "." + name] = (value, meaning)
                comment = []
                previousWasKey = true
            }
        }
        return entries
    }

    /// Text made safe for a table cell.
    static func cell(_ text: String) -> String {
        text.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\n", with: " ")
    }
}
