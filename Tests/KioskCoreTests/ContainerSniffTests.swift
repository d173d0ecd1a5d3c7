import KioskCore
import XCTest

/// Which demuxer a file gets, from its first bytes — and the name of anything else.
final class ContainerSniffTests: XCTestCase {
    func testOurContainersAndTheOthersNamed() {
        let box: (String) -> [UInt8] = { [0, 0, 0, 24] + Array($0.utf8) + [0, 0, 0, 0] }
        for type in ["ftyp", "moov", "moof", "mdat", "free", "styp"] { XCTAssertEqual(ContainerSniff(box(type)), .isoMedia, type) }
        XCTAssertEqual(ContainerSniff(Array("RIFF".utf8) + [36, 0, 0, 0] + Array("WAVE".utf8)), .wave)
        XCTAssertEqual(ContainerSniff(box("ftyp")).demuxerName, "mov")
        XCTAssertEqual(ContainerSniff.wave.demuxerName, "wav")
        XCTAssertEqual(ContainerSniff([0xFF, 0xD8, 0xFF, 0xE0]), .jpeg, "kioskcam's stills, for thumbnails")
        let others: [([UInt8], String)] = [
            (Array("#EXTM3U\n#EXT-X-VERSION:3\n".utf8), "an HLS playlist"),
            ([0x47, 0x40, 0x00, 0x10] + [UInt8](repeating: 0xFF, count: 8), "an MPEG transport stream"),
            ([0x1A, 0x45, 0xDF, 0xA3, 1, 2, 3], "a Matroska or WebM file"),
            ([0xFF, 0xF1, 0x50, 0x80], "raw AAC (ADTS)"),
            ([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A], "a PNG picture"),
            (Array("FLV".utf8) + [1, 5], "an FLV file"),
            (Array("RIFF".utf8) + [36, 0, 0, 0] + Array("AVI ".utf8), "a RIFF file that is not WAV (AVI?)"),
            ([0, 0, 0, 1, 0x67, 0x42], "a raw H.264 stream"),
            ([], "an empty file"),
            (Array("hello".utf8), "not a recognised media file"),
            ([0, 0, 0], "not a recognised media file"),
        ]
        for (bytes, what) in others {
            XCTAssertEqual(ContainerSniff(bytes), .other(what: what), what)
            XCTAssertNil(ContainerSniff(bytes).demuxerName)
        }
    }

    /// Salvage names another container under a recording's name, but calls bytes that are
    /// no container (zeros a power cut left at the start) damage, not a container.
    func testOnlyAnotherContainerIsNamedAsOne() {
        XCTAssertEqual(ContainerSniff(Array("#EXTM3U\n".utf8)).otherContainer, "an HLS playlist")
        XCTAssertEqual(ContainerSniff(Array("RIFF".utf8) + [36, 0, 0, 0] + Array("AVI ".utf8)).otherContainer,
                       "a RIFF file that is not WAV (AVI?)")
        XCTAssertNil(ContainerSniff([UInt8](repeating: 0, count: 12)).otherContainer)
        XCTAssertNil(ContainerSniff([]).otherContainer)
        XCTAssertNil(ContainerSniff([0, 0, 0, 24] + Array("ftyp".utf8)).otherContainer)
        XCTAssertNil(ContainerSniff.wave.otherContainer)
    }
}
