import KioskCore
import XCTest

/// The `avcC` a smart cut writes: both parts' parameter sets side by side, under ids
/// read correctly from the bits, and no trap on any bytes.
final class AVCConfigurationTests: XCTestCase {
    // High profile (100), level 3.1; `0xAC` starts ue(0) = "1", `0x40` is ue(1) = "010".
    private let sps0: [UInt8] = [0x67, 0x64, 0x00, 0x1F, 0xAC, 0xD9, 0x40]
    private let sps1: [UInt8] = [0x67, 0x64, 0x00, 0x28, 0x40, 0xD9, 0x40]
    // PPS "1 1" = (0, 0); "010 010" = (1, 1).
    private let pps0: [UInt8] = [0x68, 0xEB, 0xE3, 0xCB]
    private let pps1: [UInt8] = [0x68, 0x48, 0xE3, 0xCB]

    private var recording: [UInt8] {
        [1, 0x64, 0x00, 0x1F, 0xFF, 0xE1, 0, 7] + sps0 + [1, 0, 4] + pps0 + [0xFD, 0xF8, 0xF8, 0x00]
    }

    func testParsesWhatLibavformatKeepsAndWritesItBackTheSame() throws {
        let parsed = try XCTUnwrap(AVCConfiguration(parsing: recording))
        XCTAssertEqual(parsed.profile, 100)
        XCTAssertEqual(parsed.level, 0x1F)
        XCTAssertEqual(parsed.lengthSize, 4)
        XCTAssertEqual(parsed.sequenceParameterSets, [sps0])
        XCTAssertEqual(parsed.pictureParameterSets, [pps0])
        XCTAssertEqual(parsed.trailer, [0xFD, 0xF8, 0xF8, 0x00])
        XCTAssertEqual(parsed.bytes, recording)
    }

    func testReadsParameterSetIDsFromTheBits() {
        XCTAssertEqual(H264ParameterSetIDs.sequenceParameterSet(sps0), 0)
        XCTAssertEqual(H264ParameterSetIDs.sequenceParameterSet(sps1), 1)
        XCTAssertEqual(H264ParameterSetIDs.pictureParameterSet(pps0)?.pps, 0)
        XCTAssertEqual(H264ParameterSetIDs.pictureParameterSet(pps1)?.pps, 1)
        XCTAssertEqual(H264ParameterSetIDs.pictureParameterSet(pps1)?.sps, 1)
        // ue(31) = 00000 1 00000: id 31, the largest an SPS may have.
        XCTAssertEqual(H264ParameterSetIDs.sequenceParameterSet([0x67, 0x64, 0, 0x1F, 0x04, 0x00]), 31)
        // 16 zero bits (read past the emulation-prevention byte) make an id far beyond 31: refused.
        XCTAssertNil(H264ParameterSetIDs.sequenceParameterSet([0x67, 0x64, 0, 0x1F, 0x00, 0x00, 0x03, 0x80, 0x00, 0x00]))
        XCTAssertNil(H264ParameterSetIDs.sequenceParameterSet(pps0), "a PPS is not an SPS")
        XCTAssertNil(H264ParameterSetIDs.pictureParameterSet([0x68]))
    }

    func testAddingTheReencodedPartsSetsKeepsBothAndTheHigherLevel() throws {
        let parsed = try XCTUnwrap(AVCConfiguration(parsing: recording))
        let merged = try parsed.adding(sequenceParameterSet: sps1, pictureParameterSet: pps1)
        XCTAssertEqual(merged.sequenceParameterSets, [sps0, sps1])
        XCTAssertEqual(merged.pictureParameterSets, [pps0, pps1])
        XCTAssertEqual(merged.level, 0x28)
        XCTAssertEqual(AVCConfiguration(parsing: merged.bytes), merged)
    }

    func testRefusesSetsThatCannotLiveTogether() throws {
        let parsed = try XCTUnwrap(AVCConfiguration(parsing: recording))
        XCTAssertThrowsError(try parsed.adding(sequenceParameterSet: sps0, pictureParameterSet: pps1)) {
            XCTAssertEqual($0 as? AVCConfiguration.MergeProblem, .sameID(0))
        }
        XCTAssertThrowsError(try parsed.adding(sequenceParameterSet: sps1, pictureParameterSet: pps0)) {
            XCTAssertEqual($0 as? AVCConfiguration.MergeProblem, .sameID(0))
        }
        var main = sps1
        main[1] = 77
        XCTAssertThrowsError(try parsed.adding(sequenceParameterSet: main, pictureParameterSet: pps1)) {
            XCTAssertEqual($0 as? AVCConfiguration.MergeProblem, .otherProfile(ours: 100, theirs: 77))
        }
    }

    func testAnnexBBecomesLengthPrefixedWithoutParameterSets() {
        let annexB: [UInt8] = [0, 0, 0, 1] + sps1 + [0, 0, 0, 1] + pps1 + [0, 0, 1, 0x65, 0x88, 0x84]
        let sample = annexB.withUnsafeBytes {
            H264AnnexB.lengthPrefixed($0, lengthSize: 4, dropping: [7, 8])
        }
        XCTAssertEqual(sample, [0, 0, 0, 3, 0x65, 0x88, 0x84])
        let two = annexB.withUnsafeBytes { H264AnnexB.lengthPrefixed($0, lengthSize: 2) }
        XCTAssertEqual(two?.prefix(2 + sps1.count), [0, 7] + sps1)
        XCTAssertNil(annexB.withUnsafeBytes { H264AnnexB.lengthPrefixed($0, lengthSize: 3) })
    }

    /// Truncations and random bytes: no trap, and anything parsed writes back to bytes it reads again.
    func testNoTrapOnDamagedConfigurations() {
        var generator = SystemRandomNumberGenerator()
        // Cut anywhere before the end of the PPS list: not a configuration.
        for cut in 0..<(recording.count - 4) {
            XCTAssertNil(AVCConfiguration(parsing: Array(recording.prefix(cut))), "cut at \(cut)")
        }
        for _ in 0..<5000 {
            var bytes = (0..<Int.random(in: 0...40, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if !bytes.isEmpty { bytes[0] = 1 }
            if let parsed = AVCConfiguration(parsing: bytes) {
                XCTAssertEqual(AVCConfiguration(parsing: parsed.bytes)?.sequenceParameterSets, parsed.sequenceParameterSets)
                _ = try? parsed.adding(sequenceParameterSet: bytes, pictureParameterSet: bytes)
            }
            _ = H264ParameterSetIDs.sequenceParameterSet(bytes)
            _ = H264ParameterSetIDs.pictureParameterSet(bytes)
        }
    }
}
