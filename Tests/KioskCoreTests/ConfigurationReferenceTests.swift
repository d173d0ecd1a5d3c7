import Foundation
import XCTest

@testable import KioskCore

/// docs/configuration-reference.md is generated from the schema and the example file
/// (issue 30): it fails here when either changes and the page was not written again.
final class ConfigurationReferenceTests: XCTestCase {
    private var packageRoot: URL {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/", !FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
            url.deleteLastPathComponent()
        }
        return url
    }

    func testTheReferencePageIsWhatTheSchemaAndTheExampleGive() throws {
        let example = try String(contentsOf: packageRoot.appendingPathComponent("rootfs/etc/kioskcam/kioskcam.toml"), encoding: .utf8)
        let generated = ConfigurationReference.markdown(example: example)
        let page = packageRoot.appendingPathComponent("docs/configuration-reference.md")
        if ProcessInfo.processInfo.environment["KIOSKCAM_WRITE_REFERENCE"] == "1" {
            try generated.write(to: page, atomically: true, encoding: .utf8)
        }
        let onDisk = (try? String(contentsOf: page, encoding: .utf8)) ?? ""
        XCTAssertEqual(onDisk, generated, "docs/configuration-reference.md is stale: KIOSKCAM_WRITE_REFERENCE=1 swift test --filter ConfigurationReferenceTests")
        // Every key is on the page, with a default and a meaning from the example.
        for key in Configuration.knownKeys {
            let name = String(key.split(separator: ".")[1])
            XCTAssertTrue(generated.contains("| `\(name)` | `") || generated.contains("| `\(name)` | unset (example: `"),
                          "\(key) has no default on the page")
        }
        XCTAssertEqual(generated.components(separatedBy: "\n| `").count - 1, Configuration.knownKeys.count)
    }

    /// The example file shows each key at its default, but for the few where the default
    /// is "unset" (the camera's controls, the S3 secret's file): the page says which.
    func testThePageTellsAnExampleFromADefault() throws {
        let example = try String(contentsOf: packageRoot.appendingPathComponent("rootfs/etc/kioskcam/kioskcam.toml"), encoding: .utf8)
        let notDefaults = ConfigurationReference.exampleEntries(example).filter { key, entry in
            let parts = key.split(separator: ".").map(String.init)
            return !ConfigurationReference.isDefault(section: parts[0], name: parts[1], value: entry.value)
        }.keys.sorted()
        XCTAssertEqual(notDefaults, ["camera.brightness", "camera.contrast", "camera.exposure", "camera.focus", "camera.white_balance",
                                     "camera.zoom", "upload.secret_access_key_file"])
        XCTAssertTrue(ConfigurationReference.markdown(example: example).contains("| `zoom` | unset (example: `100`) |"))
    }

    func testCommentsAndSharedCommentsAreFoundAndCellsEscaped() {
        let entries = ConfigurationReference.exampleEntries("""
        # the file's header
        [a]
        # First line,
        # second line.
        one = 1
        two = "x"

        three = true
        [b]
        # b's
        four = [1, 2]
        """)
        XCTAssertEqual(entries["a.one"]?.meaning, "First line, second line.")
        XCTAssertEqual(entries["a.two"]?.meaning, "as above")
        XCTAssertEqual(entries["a.two"]?.value, "\"x\"")
        XCTAssertEqual(entries["a.three"]?.meaning, "")
        XCTAssertEqual(entries["b.four"]?.value, "[1, 2]")
        XCTAssertEqual(ConfigurationReference.cell("a | b"), "a \\| b")
    }
}
