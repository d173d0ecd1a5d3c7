import Foundation
import Glibc
import KioskCore
import KioskMedia
import Logging

/// What start-up salvage did with one file left in the temp area.
public enum SalvageOutcome: Sendable, Equatable {
    /// Repaired and moved into the library.
    case recovered(path: String, seconds: Double)
    /// Never held media (empty, or a header with no fragment); removed.
    case discarded(reason: String)
    /// Could not be repaired: moved whole into `<root>/.quarantine` for a person, never
    /// deleted and never tried again.
    case quarantined(path: String, reason: String)
    /// Still being written by another kioskcam process; left alone.
    case inUse
    /// Not ours (unknown name), or an error that may pass (tried again at the next start,
    /// up to `IncomingSalvage.maximumAttempts` times in all).
    case leftInPlace(reason: String)
}

/// Finishes what a crash or power cut left in `<root>/.incoming`: every fragment
/// that reached the disk is re-muxed into a properly closed file and moved into the
/// library under the name the recording would have had.
///
/// Salvage runs at every start, so a file that defeats it must not stop the start: every
/// number read from the file is checked, a file that cannot be repaired is quarantined,
/// and each attempt is counted on disk first, so that a file on which salvage itself
/// crashed (or hung until the watchdog killed it) is quarantined after
/// `maximumAttempts` starts instead of crashing every boot.
public struct IncomingSalvage: Sendable {
    let files: LibraryFiles
    let logger: Logger

    /// Starts at which one file may be tried before it goes to quarantine.
    public static let maximumAttempts = 3
    /// A crash tears at most the fragment being written (about a second). More unreadable
    /// bytes than this after the playable part mean damage in the middle, which cutting
    /// the file would destroy: such a file is quarantined whole instead.
    static let largestTornTail: Int64 = 64 << 20
    /// A file with no header and no more bytes than a header takes never held media.
    static let largestHeaderOnly: Int64 = 8 << 10

    public init(files: LibraryFiles, logger: Logger) {
        self.files = files
        self.logger = logger
    }

    /// Handles every `.part` file in the temp area.
    public func salvageAll() -> [(file: String, outcome: SalvageOutcome)] {
        let directory = files.layout.incomingDirectory
        guard let names = try? FileManagerNames.list(directory) else { return [] }
        var results: [(String, SalvageOutcome)] = []
        for name in names.sorted() where !name.hasPrefix(".") {
            let path = directory + "/" + name
            guard let (kind, time) = LibraryLayout.parseIncomingName(name) else {
                if !name.hasSuffix(".salvage") {
                    logger.warning("leaving \(path) alone: not a kioskcam temp file name")
                    results.append((path, .leftInPlace(reason: "unknown file name")))
                }
                continue
            }
            results.append((path, salvageCounted(tempPath: path, kind: kind, time: time)))
        }
        // Attempt counters whose file is gone (salvaged by hand, say) are stale, and so is
        // a new count a crash stopped before it replaced the old one.
        for name in names where name.hasPrefix(".") && name.hasSuffix(Self.attemptsSuffix) {
            let file = String(name.dropFirst().dropLast(Self.attemptsSuffix.count))
            if !FileManagerNames.exists(directory + "/" + file) { unlink(directory + "/" + name) }
        }
        for name in names where name.hasPrefix(".") && name.hasSuffix(Self.attemptsSuffix + Self.newSuffix) {
            unlink(directory + "/" + name)
        }
        return results
    }

    /// Salvages one temp file (a recorder whose writer failed calls this too).
    /// - Returns: The library path, if anything was recovered.
    @discardableResult
    public func salvage(tempPath: String, kind: MediaKind, time: LocalTimestamp) -> String? {
        if case .recovered(let path, _) = salvageCounted(tempPath: tempPath, kind: kind, time: time) { return path }
        return nil
    }

    /// One attempt, counted on disk before it starts and cleared once it has an answer.
    func salvageCounted(tempPath: String, kind: MediaKind, time: LocalTimestamp) -> SalvageOutcome {
        let fd = open(tempPath, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { return .leftInPlace(reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 { return .inUse }

        let counter = Self.attemptsPath(tempPath)
        let attempts = Self.readAttempts(counter)
        if attempts >= Self.maximumAttempts {
            let outcome = quarantine(tempPath, reason: "salvage did not finish in \(attempts) attempts "
                                     + "(kioskcam stopped, or an error, while repairing it)")
            unlink(counter)
            return outcome
        }
        Self.writeAttempts(counter, attempts + 1)
        let outcome = salvageOne(fd: fd, tempPath: tempPath, kind: kind, time: time)
        if case .leftInPlace = outcome { return outcome }   // counted: tried again, but not forever
        unlink(counter)
        return outcome
    }

    func salvageOne(fd: Int32, tempPath: String, kind: MediaKind, time: LocalTimestamp) -> SalvageOutcome {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return .leftInPlace(reason: String(cString: strerror(errno))) }
        let fileSize = Int64(info.st_size)
        // An event clip's label (`+motion`) is in its temp name: the salvaged clip keeps it.
        let label = LibraryLayout.parseIncomingLabel(String(tempPath.split(separator: "/").last ?? ""))
        if let path = files.libraryName(linkedTo: info, kind: kind, time: time, label: label) {
            // Stopped between the move's link and its unlink: the file is in the library
            // already. Salvaging it again would put the same recording there twice.
            let seconds = kind == .photo ? 0 : (try? MediaSalvage.inspect(path).seconds) ?? 0
            files.completeInterruptedMove(tempPath, to: path, kind: kind, time: time, seconds: seconds)
            logger.notice("\(tempPath) was already in the library as \(path) when kioskcam stopped; removed the temp name")
            return .recovered(path: path, seconds: seconds)
        }
        if kind == .photo {
            // Stills are written whole before the move; a leftover is an interrupted write.
            unlink(tempPath)
            return .discarded(reason: "interrupted still")
        }
        // 1. Cut the torn tail in place: needs no free space, so it works on a full disk.
        let scan = FragmentedMP4Scan.scan(fileSize: fileSize, read: FragmentedMP4Scan.reader(of: fd))
        guard scan.hasHeader else {
            // Another container under a recording's name is named for what it is: it is
            // never handed to a demuxer that would read it.
            let what = ContainerSniff.of(descriptor: fd)?.otherContainer.map { " (it is \($0))" } ?? ""
            guard fileSize > Self.largestHeaderOnly else { return discard(tempPath, "the file has no MP4 header" + what) }
            return quarantine(tempPath, reason: "no MP4 header in \(fileSize) bytes\(what.isEmpty ? " (damaged at the start)" : what)")
        }
        let unreadable = fileSize - scan.playableLength
        if unreadable > Self.largestTornTail {
            return quarantine(tempPath, reason: "\(unreadable) bytes after byte \(scan.playableLength) cannot be read "
                              + "(damaged in the middle, not torn at the end)")
        }
        guard scan.fragments > 0 else {
            // A damaged first fragment held media: kept for a person, like any damage.
            if scan.endsAtDamagedFragment {
                return quarantine(tempPath, reason: "its first fragment claims more samples than it holds bytes (damaged, not torn)")
            }
            return discard(tempPath, "no complete fragment was written")
        }
        if unreadable > 0 {
            _ = ftruncate(fd, off_t(scan.playableLength))
            _ = fsync(fd)
        }
        // 2. Check by reading every packet back; fall back to re-muxing if that fails.
        do {
            let report: SalvageReport
            do {
                report = try MediaSalvage.inspect(tempPath)
                // The fragments were whole all along: the header learns how long they play.
                do {
                    try HeaderTruthWriter.apply(fd: fd, tracks: report.tracks, path: tempPath)
                } catch {
                    logger.warning("\(tempPath): could not write its length into its header (\(error.message)); it plays all the same")
                }
            } catch {
                // The re-muxed copy must pass the same check before it replaces the original.
                let repaired = tempPath + ".salvage"
                unlink(repaired)
                do {
                    _ = try MediaSalvage.remux(input: tempPath, output: repaired)
                    report = try MediaSalvage.inspect(repaired)
                } catch {
                    unlink(repaired)
                    throw error
                }
                _ = rename(repaired, tempPath)
            }
            let path = try files.moveIntoLibrary(tempPath, kind: kind, time: time, seconds: report.seconds, label: label)
            if kind == .audio {
                // Start-up salvage has no recorder: draw the waveform here (a failure only costs the picture).
                let picture = String(path.dropLast(".m4a".count)) + ".png"
                if !FileManagerNames.exists(picture) { _ = try? WaveformRenderer.render(audioFile: path, to: picture) }
            }
            logger.notice("salvaged \(path): \(String(format: "%.1f", report.seconds)) s recovered from an interrupted recording")
            return .recovered(path: path, seconds: report.seconds)
        } catch let error as MediaError where error.code == .invalidInput || error.code == .muxer || error.code == .encoderRejectedSettings {
            // The file's own content is what fails (a muxer refusing its stream set-up is as
            // permanent as unreadable data): trying again at every start cannot help.
            return quarantine(tempPath, reason: "its fragments cannot be read back (\(error.message))")
        } catch {
            logger.error("could not salvage \(tempPath): \(error); it stays in the temp area and is tried again at the next start")
            return .leftInPlace(reason: "\(error)")
        }
    }

    private func discard(_ tempPath: String, _ reason: String) -> SalvageOutcome {
        unlink(tempPath)
        logger.warning("discarded \(tempPath): \(reason)")
        return .discarded(reason: reason)
    }

    private func quarantine(_ tempPath: String, reason: String) -> SalvageOutcome {
        do {
            let path = try files.moveToQuarantine(tempPath, reason: reason)
            logger.error("could not salvage \(tempPath): \(reason); moved it to \(path), where it is kept for a person (ffmpeg or untrunc may still get something out of it)")
            return .quarantined(path: path, reason: reason)
        } catch {
            logger.error("could not salvage \(tempPath): \(reason); and could not move it to quarantine: \(error)")
            return .leftInPlace(reason: "\(reason); \(error)")
        }
    }

    // MARK: Attempt counter: `.<name>.attempts` beside the file, a decimal number.

    static let attemptsSuffix = ".attempts"

    static func attemptsPath(_ tempPath: String) -> String {
        guard let slash = tempPath.lastIndex(of: "/") else { return "." + tempPath + attemptsSuffix }
        return tempPath[...slash] + "." + tempPath[tempPath.index(after: slash)...] + attemptsSuffix
    }

    /// The count so far: a missing counter is 0; a torn or damaged one counts as one attempt.
    static func readAttempts(_ path: String) -> Int {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 16)
        let got = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, 16) }
        guard got > 0 else { return 0 }
        let text = String(decoding: bytes.prefix(got), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.count <= 6, let value = Int(text), value >= 0 else { return 1 }
        return value
    }

    /// Written and synced before the attempt, so a crash during it still counts. The new
    /// count goes to a file of its own that is renamed over the old one: a crash in the
    /// middle leaves the old count or the new, never an empty counter (rewritten in place,
    /// a kill between the truncation and the write left one, which reads as 0: the
    /// power-cut battery saw two interrupted attempts forgotten that way).
    static func writeAttempts(_ path: String, _ count: Int) {
        try? AtomicFile.replace(path, with: Array("\(count)\n".utf8), mode: 0o644, temporarySuffix: newSuffix)
    }

    /// A counter being written; one left by a crash is removed at the next start.
    static let newSuffix = ".new"
}

/// Directory listing without Foundation's FileManager quirks on special files.
enum FileManagerNames {
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    static func list(_ directory: String) throws -> [String] {
        guard let dir = opendir(directory) else { throw RecorderError(.library, "cannot read \(directory)") }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}
