import Foundation
import Glibc
import KioskControl
import KioskTestSupport
import XCTest

final class DeviceIdentityTests: XCTestCase {
    func testCreatedOnceWithRootOnlyModesAndKept() throws {
        let folder = TemporaryDirectory()
        let state = folder.path + "/state/kioskcam"
        let first = try DeviceIdentity.loadOrCreate(directory: state)
        XCTAssertEqual(first.origin, .created)
        XCTAssertEqual(first.path, state + "/device-id")
        XCTAssertEqual(fileMode(state), 0o700)
        XCTAssertEqual(fileMode(first.path), 0o600)
        XCTAssertEqual(try String(contentsOfFile: first.path, encoding: .utf8), first.text + "\n")
        XCTAssertEqual(first.text, first.text.lowercased())
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: state), ["device-id"], "no temp file left")

        // Kept: the next start (a reinstalled binary) reads the same ID.
        let again = try DeviceIdentity.loadOrCreate(directory: state)
        XCTAssertEqual(again.id, first.id)
        XCTAssertEqual(again.origin, .loaded)
    }

    func testAnExistingLooseDirectoryIsTightened() throws {
        let folder = TemporaryDirectory()
        chmod(folder.path, 0o755)
        _ = try DeviceIdentity.loadOrCreate(directory: folder.path)
        XCTAssertEqual(fileMode(folder.path), 0o700)
    }

    func testADamagedFileIsKeptAsideAndReplaced() throws {
        let folder = TemporaryDirectory()
        let path = folder.path + "/device-id"
        for damaged in ["", "not-a-uuid\n", String(repeating: "z", count: 5000)] {
            _ = FileManager.default.createFile(atPath: path, contents: Data(damaged.utf8))
            let identity = try DeviceIdentity.loadOrCreate(directory: folder.path)
            guard case .replacedDamaged(let preserved, let reason) = identity.origin else {
                return XCTFail("\(identity.origin)")
            }
            XCTAssertEqual(FileManager.default.contents(atPath: preserved), Data(damaged.utf8), "the damaged bytes are kept")
            XCTAssertFalse(reason.isEmpty)
            XCTAssertEqual(try DeviceIdentity.loadOrCreate(directory: folder.path).id, identity.id)
            try FileManager.default.removeItem(atPath: preserved)
        }
        // Surrounding whitespace is tolerated, upper case too.
        let id = UUID()
        _ = FileManager.default.createFile(atPath: path, contents: Data("  \(id.uuidString)\n\n".utf8))
        XCTAssertEqual(try DeviceIdentity.loadOrCreate(directory: folder.path).id, id)
    }

    func testConcurrentFirstStartsAgreeOnOneID() throws {
        let folder = TemporaryDirectory()
        let ids = LockedArray()
        let directory = folder.path
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            if let identity = try? DeviceIdentity.loadOrCreate(directory: directory) { ids.append(identity.id) }
        }
        XCTAssertEqual(ids.values.count, 8)
        XCTAssertEqual(Set(ids.values).count, 1)
    }

    func testUnusableStateDirectoryNamesIt() {
        let folder = TemporaryDirectory()
        let file = folder.path + "/file"
        _ = FileManager.default.createFile(atPath: file, contents: Data())
        XCTAssertThrowsError(try DeviceIdentity.loadOrCreate(directory: file)) { error in
            XCTAssertTrue("\(error)".contains(file) && "\(error)".contains("control.state_directory"), "\(error)")
        }
    }
}

final class LockedArray: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [UUID] = []
    var values: [UUID] { lock.withLock { items } }
    func append(_ id: UUID) { lock.withLock { items.append(id) } }
}
