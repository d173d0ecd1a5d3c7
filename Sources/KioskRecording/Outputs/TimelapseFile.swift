import Foundation
import KioskCore
import KioskMedia

/// One day's timelapse movie, open for appending: the muxer that continues it and the
/// file its fragments go into, written as they come (`write(2)`, no buffering) so a
/// crash keeps every whole frame and a power cut at most the last few seconds (synced
/// every `syncIntervalNanoseconds`). Closed (the day ends, the daemon stops), its header
/// says how long it is; while it is appended to, it says what it said at the last close.
///
/// Opening a day's movie that exists continues it when it describes the same stream:
/// the torn end of an interrupted write is cut off (the scan that salvage uses), the
/// frame and fragment numbers go on from the file's, and the new muxer's header is
/// only compared (`stsd` and the track's size and turn), never written. A movie that
/// cannot be continued is left as it is and the day goes on in `YYYYMMDD-2.mp4`.
final class TimelapseFile {
    let path: String
    let day: CalendarDate
    let parameters: StreamParameters
    private let muxer: TimelapseMuxer
    private var fd: Int32
    private var lastSync: MonotonicInstant

    static let syncIntervalNanoseconds: Int64 = 5_000_000_000
    /// A timelapse's `moov` is a few hundred bytes; a bigger one is not ours to continue.
    static let largestHeader: Int64 = 1 << 20
    /// Parts of one day tried before giving up (each a movie that could not be continued).
    static let maximumParts = 20

    private init(path: String, day: CalendarDate, parameters: StreamParameters, muxer: TimelapseMuxer, fd: Int32, now: MonotonicInstant) {
        self.path = path
        self.day = day
        self.parameters = parameters
        self.muxer = muxer
        self.fd = fd
        lastSync = now
    }

    deinit { close() }

    /// The frames in the movie: those it had when opened and those written since.
    var frames: UInt64 { muxer.nextFrame }

    /// Opens `day`'s movie in `directory` (made if missing), continuing it or the next
    /// part that can be continued, or starting a new part.
    /// - Returns: The file and a note for the log ("continuing … at frame 120", "… could not be continued").
    /// - Throws: `RecorderError` (`diskFull`, `writerFailed`) naming the file and the fix.
    static func open(directory: String, day: CalendarDate, parameters: StreamParameters, framesPerSecond: Int,
                     now: MonotonicInstant) throws(RecorderError) -> (file: TimelapseFile, notes: [String]) {
        if mkdir(directory, 0o755) != 0 && errno != EEXIST {
            throw failure("create the folder", directory)
        }
        var notes: [String] = []
        for part in 1...maximumParts {
            let path = directory + "/" + TimelapseFileName.name(for: day, part: part)
            let fd = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
            guard fd >= 0 else { throw failure("open", path) }
            var info = stat()
            guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
                Glibc.close(fd)
                notes.append("\(path) is not a regular file; left alone")
                continue
            }
            do throws(RecorderError) {
                if let muxer = try continuing(fd: fd, size: Int64(info.st_size), path: path, parameters: parameters,
                                              framesPerSecond: framesPerSecond, notes: &notes) {
                    return (TimelapseFile(path: path, day: day, parameters: parameters, muxer: muxer, fd: fd, now: now), notes)
                }
            } catch {
                Glibc.close(fd)
                throw error
            }
            Glibc.close(fd)
        }
        throw RecorderError(.writerFailed, "\(directory): \(maximumParts) timelapse movies of \(day) could not be continued; move them away")
    }

    /// The muxer for the file open on `fd`: a new movie when it is empty, the old one
    /// continued when it describes the same stream; nil when it is someone else's or
    /// another stream's (the caller tries the next part).
    private static func continuing(fd: Int32, size: Int64, path: String, parameters: StreamParameters, framesPerSecond: Int,
                                   notes: inout [String]) throws(RecorderError) -> TimelapseMuxer? {
        let read = FragmentedMP4Scan.reader(of: fd)
        let found = size == 0 ? nil : FragmentedMP4Scan.continuation(fileSize: size, read: read)
        // Empty, or only the start of our own header, torn as it was written (a full disk): begin again.
        if size == 0 || (found == nil && size < 4096 && read(4, 4) == Array("ftyp".utf8)) {
            if size > 0 {
                guard ftruncate(fd, 0) == 0, lseek(fd, 0, SEEK_SET) == 0 else { throw failure("restart", path) }
                notes.append("\(path): its header was cut short; started again")
            }
            let muxer = try makeMuxer(parameters, framesPerSecond: framesPerSecond)
            // With room for the `mehd` that `close()` fills in (MP4HeaderTruth).
            try writeAll(fd, MP4HeaderTruth.reservingMovieExtendsDuration(in: muxer.initSegment) ?? muxer.initSegment, path: path)
            return muxer
        }
        guard let found, found.headerLength <= largestHeader else {
            notes.append("\(path) is not a timelapse movie kioskcam can continue; left alone")
            return nil
        }
        let header = read(found.headerOffset, Int(found.headerLength))
        let muxer = try makeMuxer(parameters, framesPerSecond: framesPerSecond, firstFrame: found.samples,
                                  firstFragment: found.result.fragments + 1)
        guard sameStream(header[...], muxer.initSegment[...]) else {
            notes.append("\(path) holds another picture size, turn or encoder; the day goes on in the next part")
            return nil
        }
        if found.fragmentsEnd < size {
            guard ftruncate(fd, off_t(found.fragmentsEnd)) == 0 else { throw failure("cut the torn end of", path) }
            notes.append("\(path): cut \(size - found.fragmentsEnd) bytes of an interrupted frame")
        }
        guard lseek(fd, 0, SEEK_END) >= 0 else { throw failure("seek in", path) }
        notes.append("\(path): continuing at frame \(found.samples)")
        return muxer
    }

    private static func makeMuxer(_ parameters: StreamParameters, framesPerSecond: Int, firstFrame: UInt64 = 0,
                                  firstFragment: Int = 1) throws(RecorderError) -> TimelapseMuxer {
        do {
            return try TimelapseMuxer(video: parameters, framesPerSecond: framesPerSecond, firstFrame: firstFrame, firstFragment: firstFragment)
        } catch {
            throw RecorderError(error)
        }
    }

    /// Whether two headers describe the same stream: the same sample description (codec,
    /// size, SPS/PPS) and the same track size and display matrix.
    static func sameStream(_ old: ArraySlice<UInt8>, _ new: ArraySlice<UInt8>) -> Bool {
        let description = ["moov", "trak", "mdia", "minf", "stbl", "stsd"]
        guard let a = FragmentedMP4Scan.box(at: description, inside: old),
              let b = FragmentedMP4Scan.box(at: description, inside: new),
              withoutBitrate(a).elementsEqual(withoutBitrate(b)) else { return false }
        // tkhd ends with the display matrix (36 bytes), then width and height.
        guard let x = FragmentedMP4Scan.box(at: ["moov", "trak", "tkhd"], inside: old),
              let y = FragmentedMP4Scan.box(at: ["moov", "trak", "tkhd"], inside: new),
              x.count >= 52, y.count >= 52 else { return false }
        return x.suffix(44).elementsEqual(y.suffix(44))
    }

    /// A sample description with its `btrt` box's numbers blanked: a closed movie's
    /// header holds the bitrate it really had (MP4HeaderTruth), a new muxer's the
    /// configured one, and they describe the same stream all the same.
    static func withoutBitrate(_ description: ArraySlice<UInt8>) -> [UInt8] {
        var bytes = Array(description)
        let marker: [UInt8] = [0, 0, 0, 20] + Array("btrt".utf8)
        var at = 0
        while at + 20 <= bytes.count {
            if bytes[at..<(at + 8)].elementsEqual(marker) {
                bytes.replaceSubrange((at + 8)..<(at + 20), with: repeatElement(0, count: 12))
                at += 20
            } else {
                at += 1
            }
        }
        return bytes
    }

    /// Appends one frame; syncs to the disk every few seconds.
    /// - Throws: `RecorderError` (`diskFull` when the disk is full): the file keeps every
    ///   whole frame before this one (a torn one is cut when it is opened again).
    func append(_ packet: EncodedPacket, now: MonotonicInstant) throws(RecorderError) {
        let fragment: [UInt8]
        do { fragment = try muxer.write(packet) } catch { throw RecorderError(error) }
        try Self.writeAll(fd, fragment, path: path)
        if now.nanoseconds(since: lastSync) >= Self.syncIntervalNanoseconds {
            lastSync = now
            _ = fdatasync(fd)
        }
    }

    /// Closes the movie with its header telling its length and bitrate, read back from
    /// the whole file (frames of earlier runs of the day included). The header is written
    /// in place, so a power cut during it leaves a playable file (`HeaderTruthWriter`);
    /// a movie continued later says its length again when it is closed again.
    func close() {
        guard fd >= 0 else { return }
        _ = fdatasync(fd)
        if let report = try? MediaSalvage.inspect(path) {
            _ = try? HeaderTruthWriter.apply(fd: fd, tracks: report.tracks, path: path)
        }
        Glibc.close(fd)
        fd = -1
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) throws(RecorderError) {
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, bytes.count - written) }
            if result < 0 {
                if errno == EINTR { continue }
                throw failure("write", path)
            }
            written += result
        }
    }

    private static func failure(_ operation: String, _ path: String) -> RecorderError {
        let code = errno
        let reason = String(cString: strerror(code))
        if code == ENOSPC || code == EDQUOT {
            return RecorderError(.diskFull, "could not \(operation) \(path): \(reason); free space (kioskcam purge) and the timelapse goes on")
        }
        return RecorderError(.writerFailed, "could not \(operation) \(path): \(reason)")
    }
}
