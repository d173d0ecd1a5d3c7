import XCTest

@testable import KioskCore

/// The header's truth on hand-built headers: where each field is, both box versions,
/// values that do not fit, and damaged input that must never trap or write outside `moov`.
final class MP4HeaderTruthTests: XCTestCase {
    // MARK: Building boxes

    func box(_ type: String, _ body: [UInt8]) -> [UInt8] {
        MP4HeaderTruth.big32(UInt32(body.count + 8)) + Array(type.utf8) + body
    }

    /// mvhd/mdhd: version 0 (32-bit times) or 1 (64-bit).
    func timeHeader(_ type: String, version: UInt8, timescale: UInt32, tail: Int) -> [UInt8] {
        let times = [UInt8](repeating: 7, count: version == 1 ? 16 : 8)
        let duration = [UInt8](repeating: 0, count: version == 1 ? 8 : 4)
        return box(type, [version, 0, 0, 0] + times + MP4HeaderTruth.big32(timescale) + duration + [UInt8](repeating: 0, count: tail))
    }

    func tkhd(version: UInt8) -> [UInt8] {
        let times = [UInt8](repeating: 7, count: version == 1 ? 16 : 8)
        let duration = [UInt8](repeating: 0, count: version == 1 ? 8 : 4)
        return box("tkhd", [version, 0, 0, 3] + times + [0, 0, 0, 1, 0, 0, 0, 0] + duration + [UInt8](repeating: 0, count: 60))
    }

    func hdlr(_ handler: String) -> [UInt8] { box("hdlr", [0, 0, 0, 0, 0, 0, 0, 0] + Array(handler.utf8) + [UInt8](repeating: 0, count: 13)) }

    func btrt() -> [UInt8] { box("btrt", MP4HeaderTruth.big32(0) + MP4HeaderTruth.big32(9_308_000) + MP4HeaderTruth.big32(9_308_000)) }

    /// An esds as libavformat writes it: ES_Descriptor (3) holding a DecoderConfigDescriptor (4).
    func esds() -> [UInt8] {
        let decoderSpecific: [UInt8] = [0x05, 0x80, 0x80, 0x80, 0x02, 0x11, 0x90]
        let config: [UInt8] = [0x04, 0x80, 0x80, 0x80, UInt8(13 + decoderSpecific.count), 0x40, 0x15, 0, 0, 0]
            + MP4HeaderTruth.big32(128_000) + MP4HeaderTruth.big32(128_000) + decoderSpecific
        let sl: [UInt8] = [0x06, 0x80, 0x80, 0x80, 0x01, 0x02]
        let es: [UInt8] = [0x03, 0x80, 0x80, 0x80, UInt8(3 + config.count + sl.count), 0, 1, 0] + config + sl
        return box("esds", [0, 0, 0, 0] + es)
    }

    func trak(_ handler: String, version: UInt8, timescale: UInt32) -> [UInt8] {
        let entry = handler == "vide"
            ? box("avc1", [UInt8](repeating: 0, count: 78) + box("avcC", [1, 2, 3]) + btrt())
            : box("mp4a", [UInt8](repeating: 0, count: 28) + esds() + btrt())
        let stsd = box("stsd", [0, 0, 0, 0, 0, 0, 0, 1] + entry)
        let minf = box("minf", box("stbl", stsd + box("stts", [0, 0, 0, 0, 0, 0, 0, 0])))
        let mdia = box("mdia", timeHeader("mdhd", version: version, timescale: timescale, tail: 4) + hdlr(handler) + minf)
        return box("trak", tkhd(version: version) + mdia)
    }

    func initSegment(version: UInt8 = 0) -> [UInt8] {
        let ftyp = box("ftyp", Array("isom".utf8) + [0, 0, 2, 0] + Array("isomiso2avc1mp41".utf8))
        let mvex = box("mvex", box("trex", [UInt8](repeating: 0, count: 24)) + box("trex", [UInt8](repeating: 0, count: 24)))
        let moov = box("moov", timeHeader("mvhd", version: version, timescale: 1000, tail: 80)
                       + trak("vide", version: version, timescale: 90_000) + trak("soun", version: version, timescale: 48_000)
                       + mvex + box("udta", [1, 2, 3, 4]))
        return ftyp + moov
    }

    let tracks = [
        MP4HeaderTruth.Track(kind: .video, endNanoseconds: 5_000_000_000, bytes: 625_000, peakBitsPerSecond: 1_500_000, largestSample: 40_000),
        MP4HeaderTruth.Track(kind: .audio, startNanoseconds: 5_333_333, endNanoseconds: 5_010_666_666, bytes: 80_000, peakBitsPerSecond: 130_000, largestSample: 400),
    ]

    func apply(_ patches: MP4HeaderTruth.Patches, to file: [UInt8]) -> [UInt8] {
        var out = file
        for patch in patches.fields + patches.commit {
            out.replaceSubrange(Int(patch.offset)..<(Int(patch.offset) + patch.bytes.count), with: patch.bytes)
        }
        return out
    }

    /// The value of a field found by its box's path in the patched file.
    func field(_ file: [UInt8], _ path: [String], skip: Int, width: Int) throws -> UInt64 {
        let found = try XCTUnwrap(FragmentedMP4Scan.box(at: path, inside: file[...]), "\(path)")
        let at = found.startIndex + skip
        return (0..<width).reduce(UInt64(0)) { $0 << 8 | UInt64(found[at + $1]) }
    }

    // MARK: Tests

    func testTheReservedRoomGoesAtTheEndOfMvexAndTheSizesGrow() throws {
        let segment = initSegment()
        let reserved = try XCTUnwrap(MP4HeaderTruth.reservingMovieExtendsDuration(in: segment))
        XCTAssertEqual(reserved.count, segment.count + MP4HeaderTruth.reservedLength)
        let moov = try XCTUnwrap(FragmentedMP4Scan.box(at: ["moov"], inside: reserved[...]))
        XCTAssertEqual(moov.endIndex, reserved.count, "moov still ends the segment")
        let free = try XCTUnwrap(FragmentedMP4Scan.box(at: ["moov", "mvex", "free"], inside: reserved[...]))
        XCTAssertEqual(free.count, 20)
        XCTAssertNotNil(FragmentedMP4Scan.box(at: ["moov", "udta"], inside: reserved[...]), "what follows mvex is still found")
        // No mvex (not a fragmented header) or no moov: nothing to reserve.
        XCTAssertNil(MP4HeaderTruth.reservingMovieExtendsDuration(in: box("ftyp", [1, 2, 3, 4]) + box("moov", box("mvhd", [0]))))
        XCTAssertNil(MP4HeaderTruth.reservingMovieExtendsDuration(in: []))
    }

    func testEveryDurationBitrateAndTheMehdAreWrittenAtTheirPlace() throws {
        for version: UInt8 in [0, 1] {
            let file = try XCTUnwrap(MP4HeaderTruth.reservingMovieExtendsDuration(in: initSegment(version: version)))
            let patches = MP4HeaderTruth.patches(initSegment: file, tracks: tracks)
            XCTAssertEqual(patches.commit.count, 1, "the mehd's type is written last")
            let done = apply(patches, to: file)
            XCTAssertEqual(done.count, file.count, "nothing moves")
            let wide = version == 1 ? 8 : 4
            let times = version == 1 ? 16 : 8
            // mvhd and tkhd in the movie's timescale (1000): the longer track, 5005 ms.
            XCTAssertEqual(try field(done, ["moov", "mvhd"], skip: 8 + 4 + times + 4, width: wide), 5005)
            XCTAssertEqual(try field(done, ["moov", "trak", "tkhd"], skip: 8 + 4 + times + 8, width: wide), 5000)
            XCTAssertEqual(try field(done, ["moov", "trak", "mdia", "mdhd"], skip: 8 + 4 + times + 4, width: wide), 450_000)
            XCTAssertEqual(try field(done, ["moov", "mvex", "mehd"], skip: 12, width: 8), 5005)
            XCTAssertEqual(try field(done, ["moov", "mvex", "mehd"], skip: 8, width: 1), 1, "version 1")
            // btrt: buffer, maximum, average (625,000 bytes in 5 s = 1,000,000 bit/s).
            let avc1 = ["moov", "trak", "mdia", "minf", "stbl", "stsd", "avc1"]
            let btrt = try XCTUnwrap(FragmentedMP4Scan.box(at: ["btrt"], inside: FragmentedMP4Scan.box(at: avc1, inside: done[...])!.dropFirst(86)))
            let numbers = (0..<3).map { MP4HeaderTruth.read32(btrt, btrt.startIndex + 8 + 4 * $0) }
            XCTAssertEqual(numbers, [40_000, 1_500_000, 1_000_000])
        }
    }

    func testTheSoundTrackIsFoundByItsHandlerAndItsEsdsCorrected() throws {
        let file = try XCTUnwrap(MP4HeaderTruth.reservingMovieExtendsDuration(in: initSegment()))
        let done = apply(MP4HeaderTruth.patches(initSegment: file, tracks: tracks), to: file)
        let moov = try XCTUnwrap(FragmentedMP4Scan.box(at: ["moov"], inside: done[...]))
        let traks = MP4HeaderTruth.children("trak", in: moov.dropFirst(8))
        XCTAssertEqual(traks.count, 2)
        let sound = done[traks[1].start..<traks[1].end]
        let mdhd = try XCTUnwrap(FragmentedMP4Scan.box(at: ["trak", "mdia", "mdhd"], inside: sound))
        XCTAssertEqual(MP4HeaderTruth.read32(mdhd, mdhd.startIndex + 24), 240_256, "5.005333 s at 48 kHz: from its first sample (5.3 ms in) to its end")
        let mp4a = try XCTUnwrap(FragmentedMP4Scan.box(at: ["trak", "mdia", "minf", "stbl", "stsd", "mp4a"], inside: sound))
        let esds = try XCTUnwrap(FragmentedMP4Scan.box(at: ["esds"], inside: mp4a.dropFirst(36)))
        let box = MP4HeaderTruth.Box(start: esds.startIndex, end: esds.endIndex, headerLength: 8, type: "esds")
        let at = try XCTUnwrap(MP4HeaderTruth.decoderConfigBitrates(box, in: done[...]))
        XCTAssertEqual(Array(done[at..<(at + 3)]), [0, 1, 144], "bufferSizeDB: the largest sample, 400")
        XCTAssertEqual(MP4HeaderTruth.read32(done[...], at + 3), 130_000)
        XCTAssertEqual(MP4HeaderTruth.read32(done[...], at + 7), 127_864, "80,000 bytes in 5.005 s")
    }

    func testAnExistingMehdIsCorrectedAndAHeaderWithoutRoomGetsNone() throws {
        let reserved = try XCTUnwrap(MP4HeaderTruth.reservingMovieExtendsDuration(in: initSegment()))
        let once = apply(MP4HeaderTruth.patches(initSegment: reserved, tracks: tracks), to: reserved)
        var longer = tracks
        longer[1].endNanoseconds = 6_005_333_333
        let again = MP4HeaderTruth.patches(initSegment: once, tracks: longer)
        XCTAssertTrue(again.commit.isEmpty, "the mehd is there: its value is rewritten, its type left")
        XCTAssertEqual(try field(apply(again, to: once), ["moov", "mvex", "mehd"], skip: 12, width: 8), 6000)
        // Written before the room was reserved (an older file): durations, no mehd.
        let old = MP4HeaderTruth.patches(initSegment: initSegment(), tracks: tracks)
        XCTAssertTrue(old.commit.isEmpty)
        XCTAssertFalse(old.fields.isEmpty)
    }

    func testADurationThatDoesNotFitIsLeftUnknownNotWrapped() {
        // 14 hours at 90 kHz is more than 32 bits hold.
        XCTAssertNil(MP4HeaderTruth.encode(MP4HeaderTruth.units(14 * 3_600_000_000_000, 90_000)!, width: 4))
        XCTAssertEqual(MP4HeaderTruth.encode(5005, width: 4), [0, 0, 0x13, 0x8D])
        XCTAssertNil(MP4HeaderTruth.units(Int64.max, 90_000), "overflow is no value")
        XCTAssertNil(MP4HeaderTruth.units(-1, 1000))
        XCTAssertEqual(MP4HeaderTruth.units(1_499_999, 1000), 1, "rounded to the nearest")
        XCTAssertEqual(MP4HeaderTruth.units(1_500_000, 1000), 2)
        var huge = tracks
        huge[0].endNanoseconds = 14 * 3_600_000_000_000
        huge[1].endNanoseconds = 14 * 3_600_000_000_000
        let file = MP4HeaderTruth.reservingMovieExtendsDuration(in: initSegment())!
        let patches = MP4HeaderTruth.patches(initSegment: file, tracks: huge)
        // The 90 kHz mdhd would wrap; the rest (ms, 48 kHz, and the 64-bit mehd) fit.
        let written = apply(patches, to: file)
        XCTAssertEqual(try field(written, ["moov", "trak", "mdia", "mdhd"], skip: 24, width: 4), 0)
        XCTAssertEqual(try field(written, ["moov", "mvhd"], skip: 24, width: 4), 50_400_000)
    }

    func testTheMoovIsFoundAmongTheFirstBoxesOnly() throws {
        let file = initSegment() + box("moof", [0]) + box("mdat", [1])
        let read: (Int64, Int) -> [UInt8] = { offset, count in
            guard offset >= 0, offset < Int64(file.count) else { return [] }
            return Array(file[Int(offset)..<min(file.count, Int(offset) + count)])
        }
        let found = try XCTUnwrap(MP4HeaderTruth.moov(read: read))
        XCTAssertEqual(found.offset, 32, "after the ftyp")
        XCTAssertEqual(found.bytes.count, file.count - 32 - 9 - 9)
        XCTAssertNil(MP4HeaderTruth.moov { _, _ in [] })
        XCTAssertNil(MP4HeaderTruth.moov { _, count in [UInt8](repeating: 0xFF, count: count) }, "a lying size")
    }

    /// Every prefix, and every single byte set to each of a few values, of a real-shaped
    /// header: no trap, and every patch inside the moov it was computed from.
    func testDamagedHeadersNeverTrapAndNeverPatchOutsideTheMoov() {
        let file = MP4HeaderTruth.reservingMovieExtendsDuration(in: initSegment())!
        let moovStart = 32
        func check(_ bytes: [UInt8]) {
            let patches = MP4HeaderTruth.patches(initSegment: bytes, tracks: tracks)
            for patch in patches.fields + patches.commit {
                XCTAssertGreaterThanOrEqual(patch.offset, Int64(moovStart))
                XCTAssertLessThanOrEqual(patch.offset + Int64(patch.bytes.count), Int64(bytes.count))
            }
            _ = MP4HeaderTruth.reservingMovieExtendsDuration(in: bytes)
        }
        for length in 0...file.count { check(Array(file.prefix(length))) }
        for index in file.indices {
            for value: UInt8 in [0, 1, 0x7F, 0x80, 0xFF] {
                var damaged = file
                damaged[index] = value
                check(damaged)
            }
        }
    }

    func testPeakBitrateIsTheBusiestSecond() {
        var rate = PeakBitrate()
        // 30 frames a second of 1,000 bytes, with one second of 2,000-byte frames.
        for frame in 0..<150 {
            let busy = (60..<90).contains(frame)
            rate.add(time: Int64(frame) * 1_000_000_000 / 30, bytes: busy ? 2000 : 1000)
        }
        XCTAssertEqual(rate.bitsPerSecond, 30 * 2000 * 8)
        XCTAssertEqual(rate.largestSample, 2000)
        XCTAssertEqual(rate.totalBytes, 120 * 1000 + 30 * 2000)
        // Sizes no MP4 sample has are ignored; times that run backwards do not trap.
        rate.add(time: 0, bytes: -5)
        rate.add(time: Int64.min, bytes: Int64(UInt32.max) + 1)
        rate.add(time: Int64.max, bytes: 1)
        rate.add(time: Int64.min, bytes: 1)
        XCTAssertEqual(rate.largestSample, 2000)
    }
}
