import Glibc
import KioskCore
import KioskMedia
import Logging

/// What start-up salvage did with one file left in the temp area.
public enum SalvageOutcome: Sendable, Equatable {
    /// Repaired and moved into the library.
    case recovered(path: String, seconds: Double)
    /// Held nothing playable; removed.
    case discarded(reason: String)
    /// Still being written by another kioskcam process; left alone.
    case inUse
    /// Not ours (unknown name) or could not be handled; left in place for a person.
    case leftInPlace(reason: String)
}

/// Finishes what a crash or power cut left in `<root>/.incoming`: every fragment
/// that reached the disk is re-muxed into a properly closed file and moved into the
/// library under the name the recording would have had.
public struct IncomingSalvage: Sendable {
    let files: LibraryFiles
    let logger: Logger

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
            let outcome = salvageOne(tempPath: path, kind: kind, time: time)
            results.append((path, outcome))
        }
        return results
    }

    /// Salvages one temp file.
    /// - Returns: The library path, if anything was recovered.
    @discardableResult
    public func salvage(tempPath: String, kind: MediaKind, time: LocalTimestamp) -> String? {
        if case .recovered(let path, _) = salvageOne(tempPath: tempPath, kind: kind, time: time) { return path }
        return nil
    }

    func salvageOne(tempPath: String, kind: MediaKind, time: LocalTimestamp) -> SalvageOutcome {
        let fd = open(tempPath, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { return .leftInPlace(reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 { return .inUse }

        if kind == .photo {
            // Stills are written whole before the move; a leftover is an interrupted write.
            unlink(tempPath)
            return .discarded(reason: "interrupted still")
        }
        // 1. Cut the torn tail in place: needs no free space, so it works on a full disk.
        var info = stat()
        guard fstat(fd, &info) == 0 else { return .leftInPlace(reason: String(cString: strerror(errno))) }
        let scan = FragmentedMP4Scan.scan(fileSize: Int64(info.st_size)) { offset, count in
            var bytes = [UInt8](repeating: 0, count: count)
            let got = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(offset)) }
            return Array(bytes.prefix(max(0, got)))
        }
        guard scan.hasHeader, scan.fragments > 0 else {
            unlink(tempPath)
            let reason = scan.hasHeader ? "no complete fragment was written" : "the file has no MP4 header"
            logger.warning("discarded \(tempPath): \(reason)")
            return .discarded(reason: reason)
        }
        if scan.playableLength < Int64(info.st_size) {
            _ = ftruncate(fd, off_t(scan.playableLength))
            _ = fsync(fd)
        }
        // 2. Check by reading every packet back; fall back to re-muxing if that fails.
        do {
            let report: SalvageReport
            do {
                report = try MediaSalvage.inspect(tempPath)
            } catch {
                let repaired = tempPath + ".salvage"
                unlink(repaired)
                report = try MediaSalvage.remux(input: tempPath, output: repaired)
                _ = rename(repaired, tempPath)
            }
            let path = try files.moveIntoLibrary(tempPath, kind: kind, time: time, seconds: report.seconds)
            if kind == .audio {
                // Start-up salvage has no recorder: draw the waveform here (a failure only costs the picture).
                let picture = String(path.dropLast(".m4a".count)) + ".png"
                if !FileManagerNames.exists(picture) { _ = try? WaveformRenderer.render(audioFile: path, to: picture) }
            }
            logger.notice("salvaged \(path): \(String(format: "%.1f", report.seconds)) s recovered from an interrupted recording")
            return .recovered(path: path, seconds: report.seconds)
        } catch let error as MediaError where error.code == .invalidInput {
            unlink(tempPath)
            logger.warning("discarded \(tempPath): \(error.detail)")
            return .discarded(reason: error.detail)
        } catch {
            logger.error("could not salvage \(tempPath): \(error); it stays in the temp area")
            return .leftInPlace(reason: "\(error)")
        }
    }
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
