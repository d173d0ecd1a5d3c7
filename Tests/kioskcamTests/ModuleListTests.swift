import Foundation
import KioskTestSupport
import XCTest

/// docs/ARCHITECTURE.md's module list is where a newcomer starts: it must name every
/// module Package.swift builds into the programs, and nothing else (issue 30: three
/// lists had drifted apart).
final class ModuleListTests: XCTestCase {
    /// The modules Package.swift declares for the programs: system libraries, libraries
    /// and the two executables — not the tests, the fuzz targets or their support.
    func packageModules() throws -> Set<String> {
        let text = try String(contentsOfFile: Package.root() + "/Package.swift", encoding: .utf8)
        let pattern = try NSRegularExpression(pattern: #"(?:systemLibrary\(|(?:\.target|\.executableTarget|\.systemLibrary)\(\s*name:\s*)"([A-Za-z0-9-]+)""#)
        let names = pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap {
            Range($0.range(at: 1), in: text).map { String(text[$0]) }
        }
        return Set(names.filter { !$0.hasPrefix("Fuzz") && $0 != "CLibFuzzer" && $0 != "KioskTestSupport" })
    }

    /// The names that open a line of the first code block under "## Modules" (the system
    /// libraries are listed several to a line at its top).
    func documentedModules() throws -> Set<String> {
        let text = try String(contentsOfFile: Package.root() + "/docs/ARCHITECTURE.md", encoding: .utf8)
        guard let section = text.range(of: "## Modules\n"),
              let open = text.range(of: "```\n", range: section.upperBound..<text.endIndex),
              let close = text.range(of: "\n```", range: open.upperBound..<text.endIndex) else {
            XCTFail("docs/ARCHITECTURE.md has no module list under ## Modules")
            return []
        }
        var names: Set<String> = []
        for line in text[open.upperBound..<close.lowerBound].split(separator: "\n") where !line.hasPrefix(" ") {
            let words = line.split(separator: " ")
            // A line of system libraries only, or one module and what it is.
            if words.allSatisfy({ $0.hasPrefix("C") && $0.allSatisfy { $0.isLetter || $0.isNumber } }) {
                names.formUnion(words.map(String.init))
            } else if let first = words.first {
                names.insert(String(first))
            }
        }
        return names
    }

    func testTheArchitectureListsEveryModuleOfThePackageAndNoOther() throws {
        let package = try packageModules()
        let documented = try documentedModules()
        XCTAssertGreaterThan(package.count, 30, "the package's modules were read: \(package.sorted())")
        XCTAssertEqual(package.subtracting(documented).sorted(), [], "in Package.swift, missing from docs/ARCHITECTURE.md")
        XCTAssertEqual(documented.subtracting(package).sorted(), [], "in docs/ARCHITECTURE.md, not in Package.swift")
    }
}
