import Foundation
import Glibc
import KioskMedia
import XCTest

/// Every segment frees one encoder's buffers and allocates the next one's: they must go
/// back to the system, whatever was freed before. Without the fixed threshold the
/// soak's resident memory wandered by over 100 MiB from one segment to the next.
final class MediaMemoryTests: XCTestCase {
    static let childVariable = "KIOSKCAM_MEDIA_MEMORY_CHILD"

    func testALargeBufferIsItsOwnMappingEvenAfterALargerOneWasFreed() throws {
        guard ProcessInfo.processInfo.environment[Self.childVariable] != nil else {
            // In a fresh process of this test binary: here, free blocks that earlier tests
            // left in the heap would serve the allocation below whatever the threshold.
            let child = Process()
            child.executableURL = URL(fileURLWithPath: ProcessInfo.processInfo.arguments[0])
            child.arguments = ["KioskMediaTests.MediaMemoryTests/testALargeBufferIsItsOwnMappingEvenAfterALargerOneWasFreed"]
            child.environment = ProcessInfo.processInfo.environment.merging([Self.childVariable: "1"]) { $1 }
            let output = Pipe()
            child.standardOutput = output
            child.standardError = output
            try child.run()
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            child.waitUntilExit()
            XCTAssertEqual(child.terminationStatus, 0, text)
            XCTAssertTrue(text.contains("Executed 1 test"), text)
            return
        }
        // Under scripts/sanitize the allocator is the sanitizer's: mallopt and mallinfo2 do
        // not describe it.
        let environment = ProcessInfo.processInfo.environment
        try XCTSkipIf(environment["TSAN_OPTIONS"] != nil || environment["ASAN_OPTIONS"] != nil,
                      "under a sanitizer, whose allocator is not glibc's")
        try XCTSkipUnless(MediaMemory.keepLargeBuffersOutOfTheHeap(), "not glibc's allocator")
        // By default, freeing this raises glibc's threshold to 16 MiB …
        let larger = try XCTUnwrap(malloc(16 << 20))
        memset(larger, 1, 16 << 20)
        free(larger)
        // … and a 2 MiB block (a frame buffer of the next encoder) then comes from the heap.
        let before = MediaMemory.mappedBytes
        let block = try XCTUnwrap(malloc(2 << 20))
        memset(block, 1, 2 << 20)
        let mapped = MediaMemory.mappedBytes
        XCTAssertGreaterThanOrEqual(mapped - before, 2 << 20, "a mapping of its own")
        free(block)
        XCTAssertLessThanOrEqual(MediaMemory.mappedBytes, mapped - (2 << 20), "unmapped when freed")
    }
}
