import CAVUtil
import FuzzSupport
import Foundation
import KioskCore
import KioskMedia
import KioskRecording
import Logging

/// A file as a crash, a power cut or a bad card may leave it in `<root>/.incoming`:
/// the bytes go through `FragmentedMP4Scan` directly, then are written as the temp file
/// of a recording (`.m4a.part` when the file says it is an M4A, else `.mp4.part`) and
/// start-up salvage (`IncomingSalvage.salvageAll`, which reads them back with
/// libavformat and libavcodec and may re-mux them) runs on a real media root.
///
/// Properties beyond "no trap":
/// - the scan keeps a whole number of boxes within the file, and scanning what it keeps
///   gives the same answer (cutting twice cuts nothing more);
/// - salvage decides on the file (recovered, quarantined or discarded: on a healthy disk no
///   content is an error that may pass), and the temp area holds nothing of it after;
/// - a recovered file is in the library, with its duration in the day's index; a
///   quarantined one is in `.quarantine` with a note, and holds the start of the input;
/// - no file descriptor is left open.
func fuzzSalvage(_ bytes: UnsafeRawBufferPointer) {
    checkScan(bytes)

    let isAudio = bytes.prefix(32).firstRange(of: Array("M4A ".utf8)) != nil
    let kind: MediaKind = isAudio ? .audio : .video
    let salvage = IncomingSalvage(files: Media.files, logger: Media.logger)  // prepares the root the first time
    let temp = Media.layout.incomingPath(kind, Media.time)
    guard FileManager.default.createFile(atPath: temp, contents: Data(bytes)) else {
        return Fuzz.require(false, "cannot write \(temp)")
    }
    let results = salvage.salvageAll()
    Fuzz.trace("\(bytes.count) bytes: \(results.map(\.outcome))")
    Fuzz.require(results.count == 1 && results[0].file == temp, "salvage results \(results)")
    let incoming = Set((try? FileManager.default.contentsOfDirectory(atPath: Media.layout.incomingDirectory)) ?? [])
    switch results.first?.outcome {
    case .recovered(let path, let seconds)?:
        Fuzz.require(path == Media.layout.finalPath(kind, Media.time), "recovered to \(path)")
        Fuzz.require(seconds.isFinite && seconds >= 0, "recovered \(seconds) s")
        Fuzz.require(FileManager.default.fileExists(atPath: path), "\(path) recovered but not there")
        let index = (try? String(contentsOfFile: Media.layout.dateDirectory(kind, Media.time) + "/" + LibraryIndex.fileName, encoding: .utf8)) ?? ""
        Fuzz.require(LibraryIndex.parse(index)[(path as NSString).lastPathComponent] != nil, "\(path) missing from the index")
        Fuzz.require(incoming.isEmpty, "left in the temp area: \(incoming)")
    case .quarantined(let path, _)?:
        let kept = FileManager.default.contents(atPath: path) ?? Data()
        Fuzz.require(FileManager.default.fileExists(atPath: path + ".txt"), "no note beside \(path)")
        Fuzz.require(kept.count <= bytes.count && kept.elementsEqual(bytes.prefix(kept.count)),
                     "the quarantined file is not the start of the input (\(kept.count) of \(bytes.count) bytes)")
        Fuzz.require(incoming.isEmpty, "left in the temp area: \(incoming)")
    case .discarded?:
        Fuzz.require(incoming.isEmpty, "left in the temp area: \(incoming)")
    case .leftInPlace?, .inUse?, nil:
        // On a healthy disk nothing in the bytes is an error that may pass.
        Fuzz.require(false, "salvage results \(results)")
    }
    for folder in [Media.layout.incomingDirectory, Media.layout.quarantineDirectory,
                   Media.layout.kindDirectory(.video), Media.layout.kindDirectory(.audio)] {
        FuzzScratch.empty(folder)
    }
    // Only files under the scratch folder count (libFuzzer and the sanitizer keep pipes of their own).
    let leftOpen = openDescriptors().filter { $0.contains(FuzzScratch.path) }
    Fuzz.require(leftOpen.isEmpty, "file descriptors left open: \(leftOpen)")
}

/// The scan on the bytes in memory, and again on what it keeps.
@discardableResult
func checkScan(_ bytes: UnsafeRawBufferPointer) -> FragmentedMP4Scan.Result {
    func scan(_ length: Int) -> FragmentedMP4Scan.Result {
        FragmentedMP4Scan.scan(fileSize: Int64(length)) { offset, count in
            Fuzz.require(offset >= 0 && count >= 0, "read of \(count) bytes at \(offset)")
            guard offset < length else { return [] }
            let start = Int(offset)
            return Array(bytes[start..<min(length, start + count)])
        }
    }
    let result = scan(bytes.count)
    Fuzz.require((0...Int64(bytes.count)).contains(result.playableLength), "keeps \(result.playableLength) of \(bytes.count) bytes")
    Fuzz.require(result.hasHeader || result.playableLength == 0, "keeps bytes without a header")
    Fuzz.require(result.fragments >= 0 && result.fragments <= bytes.count / 16, "\(result.fragments) fragments in \(bytes.count) bytes")
    Fuzz.trace("scan: \(result)")
    checkContinuation(bytes, result)
    checkHeaderTruth(bytes)
    guard result.hasHeader else { return result }
    let again = scan(Int(result.playableLength))
    Fuzz.trace("scan of the kept part: \(again)")
    Fuzz.require(again.playableLength == result.playableLength && again.hasHeader,
                 "scanning the kept \(result.playableLength) bytes keeps \(again.playableLength)")
    return result
}

/// What the timelapse reads to continue a movie: the same scan's facts, the samples of
/// whole fragments only, the header inside the file, the end of the fragments inside the
/// kept part; and the box lookup (the header's `stsd` and `tkhd`) on the header and on
/// the whole input, never past what it was given.
func checkContinuation(_ bytes: UnsafeRawBufferPointer, _ result: FragmentedMP4Scan.Result) {
    let all = [UInt8](bytes)
    let found = FragmentedMP4Scan.continuation(fileSize: Int64(all.count)) { offset, count in
        guard offset >= 0, offset < Int64(all.count), count >= 0 else { return [] }
        return Array(all[Int(offset)..<min(all.count, Int(offset) + count)])
    }
    Fuzz.require((found != nil) == result.hasHeader, "a continuation without a header, or none with one")
    for path in [["moov", "trak", "mdia", "minf", "stbl", "stsd"], ["moov", "trak", "tkhd"], ["moov", "trak", "mdia", "minf", "stbl", "stsd", "avc1"]] {
        if let box = FragmentedMP4Scan.box(at: path, inside: all[...]) {
            Fuzz.require(box.startIndex >= 0 && box.endIndex <= all.count && box.count >= 8, "box \(path) at \(box.startIndex)..<\(box.endIndex)")
        }
    }
    guard let found else { return }
    Fuzz.require(found.result == result, "the continuation's scan differs: \(found.result) vs \(result)")
    Fuzz.require(found.headerOffset >= 0 && found.headerLength >= 8 && found.headerOffset + found.headerLength <= Int64(all.count),
                 "header at \(found.headerOffset)+\(found.headerLength) in \(all.count) bytes")
    Fuzz.require(found.fragmentsEnd >= found.headerOffset + found.headerLength && found.fragmentsEnd <= result.playableLength,
                 "fragments end at \(found.fragmentsEnd), kept \(result.playableLength)")
    Fuzz.require(found.samples <= UInt64(all.count), "\(found.samples) samples in \(all.count) bytes")
    let header = all[Int(found.headerOffset)..<Int(found.headerOffset + found.headerLength)]
    _ = FragmentedMP4Scan.box(at: ["moov", "trak", "mdia", "minf", "stbl", "stsd"], inside: header)
}

/// The header's truth on any bytes: the room for `mehd` adds exactly its 20 bytes, and
/// every patch lands inside the `moov` it was computed from (salvage writes them into
/// the file itself, so one outside would damage media).
func checkHeaderTruth(_ bytes: UnsafeRawBufferPointer) {
    let all = [UInt8](bytes)
    if let reserved = MP4HeaderTruth.reservingMovieExtendsDuration(in: all) {
        Fuzz.require(reserved.count == all.count + MP4HeaderTruth.reservedLength, "reserving made \(reserved.count) of \(all.count) bytes")
    }
    let tracks = [MP4HeaderTruth.Track(kind: .video, endNanoseconds: 5_000_000_000, bytes: 600_000, peakBitsPerSecond: 2_000_000, largestSample: 30_000),
                  MP4HeaderTruth.Track(kind: .audio, endNanoseconds: 5_010_000_000, bytes: 80_000, peakBitsPerSecond: 140_000, largestSample: 400)]
    guard let (moov, offset) = MP4HeaderTruth.moov(read: { start, count in
        guard start >= 0, start < Int64(all.count), count >= 0 else { return [] }
        return Array(all[Int(start)..<min(all.count, Int(start) + count)])
    }) else { return }
    Fuzz.require(offset >= 0 && offset + Int64(moov.count) <= Int64(all.count), "moov at \(offset)+\(moov.count) in \(all.count) bytes")
    let patches = MP4HeaderTruth.patches(moov: moov, at: offset, tracks: tracks)
    for patch in patches.fields + patches.commit {
        Fuzz.require(patch.offset >= offset && patch.offset + Int64(patch.bytes.count) <= offset + Int64(moov.count),
                     "a patch of \(patch.bytes.count) bytes at \(patch.offset), outside the moov at \(offset)+\(moov.count)")
    }
}

/// Each open descriptor and what it is.
func openDescriptors() -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).sorted().map { fd in
        fd + " " + ((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + fd)) ?? "?")
    }
}

/// One media root for the whole run, emptied after each input.
enum Media {
    static let time = LocalTimestamp(year: 2026, month: 3, day: 4, hour: 5, minute: 6, second: 7)
    static let layout = LibraryLayout(root: FuzzScratch.path + "/media")
    static let files: LibraryFiles = {
        // FFmpeg's complaints about damaged input are the point here, not news. (KioskMedia
        // sets its own level once, the first time it is asked: ask it first.)
        MediaLibraryLog.setVerbose(false)
        av_log_set_level(AV_LOG_QUIET)
        let files = LibraryFiles(layout: layout)
        do { try files.prepare() } catch { Fuzz.require(false, "cannot prepare \(layout.root): \(error)") }
        return files
    }()
    static let logger: Logger = {
        var logger = Logger(label: "fuzz", factory: { _ in SwiftLogNoOpLogHandler() })
        logger.logLevel = .critical
        return logger
    }()
}

@main
enum Main {
    static func main() { Fuzz.main("FuzzSalvage", fuzzSalvage) }
}
