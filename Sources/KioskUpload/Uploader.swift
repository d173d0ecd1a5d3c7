import Foundation
import Glibc
import KioskCore
import KioskRecording
import Logging

/// Owns the upload queue and the thread that works through it: every finished library
/// file is queued (`enqueue`, which never blocks), copied to S3 oldest first, checked,
/// marked in its day's `.index`, and taken off the queue; a failure waits as
/// `UploadBackoff` says and pauses the queue meanwhile (the network is likely down for
/// every file). The queue is saved after every change, so a restart goes on where the
/// last run stopped.
public final class Uploader: Sendable {
    public struct Settings: Sendable {
        public var upload: Configuration.Upload
        public var layout: LibraryLayout
        public var stateDirectory: String
        /// Keeps the boards of a fleet apart in one bucket (`<prefix>/<device-id>/…`).
        public var deviceID: String?
        public var backoff = UploadBackoff()
        /// Seconds between looks at the queue when nothing wakes the thread.
        public var pollSeconds = 5.0

        public init(upload: Configuration.Upload, layout: LibraryLayout, stateDirectory: String, deviceID: String?) {
            self.upload = upload
            self.layout = layout
            self.stateDirectory = stateDirectory
            self.deviceID = deviceID
        }
    }

    private struct State {
        var queue = UploadQueue()
        var figures = UploadFigures()
        /// Changed since last saved.
        var dirty = false
        /// No attempt before this (seconds since 1970): the last failure's wait.
        var pausedUntil: Int64 = 0
        var stopping = false
        /// The start-up look at today's and yesterday's folders is done.
        var caughtUp = false
    }

    public let settings: Settings
    private let client: S3Client
    private let store: UploadQueueStore
    private let location: S3Location
    private let logger: Logger
    private let state = Locked(State())
    private let thread: Locked<RepeatingThread?> = Locked(nil)

    /// Reads the secret key and the saved queue; starts nothing.
    /// - Throws: `UploadError.configuration` for settings that do not work together,
    ///   `.credentials` for the secret key file.
    public init(_ settings: Settings, logger: Logger) throws(UploadError) {
        let upload = settings.upload
        if let problem = upload.problem { throw UploadError(.configuration, problem.description) }
        guard let location = upload.location else {
            throw UploadError(.configuration, "[upload] url = \"\(upload.url)\" is not an s3://BUCKET/PREFIX address")
        }
        let secret = try UploadCredentials.secret(fromFile: upload.secretAccessKeyFile)
        self.settings = settings
        self.location = location
        self.logger = logger
        client = S3Client(.init(endpoint: upload.effectiveEndpoint, location: location, region: upload.region,
                                accessKeyID: upload.accessKeyID, secretAccessKey: secret))
        store = UploadQueueStore(stateDirectory: settings.stateDirectory)
        var loaded = UploadQueue()
        do {
            let (queue, damaged) = try store.load()
            loaded = queue
            if damaged > 0 { logger.warning("upload queue \(store.path): \(damaged) damaged lines skipped") }
        } catch {
            logger.error("\(error); starting with an empty upload queue")
        }
        let now = Self.now()
        loaded.clampWaits(now: now, backoff: settings.backoff)
        let kinds = upload.kinds
        let (queue, dropped) = (UploadQueue(entries: loaded.entries.filter { kinds.contains($0.file.uploadKind) }),
                                loaded.entries.filter { !kinds.contains($0.file.uploadKind) }.count)
        if dropped > 0 { logger.notice("upload queue: \(dropped) files of kinds no longer in [upload] kinds are not uploaded") }
        state.withLock {
            $0.queue = queue
            $0.dirty = dropped > 0
        }
        if !queue.isEmpty {
            logger.info("upload queue: \(queue.count) files (\(ByteCountText.text(queue.bytes))) still to copy to s3://\(location.bucket)/\(location.prefix)")
        }
    }

    /// Starts the worker thread. Idempotent.
    public func start() {
        let worker = thread.withLock { current -> RepeatingThread in
            if let current { return current }
            let created = RepeatingThread(name: "kioskcam.upload", interval: settings.pollSeconds) { [weak self] _ in self?.round() }
            current = created
            return created
        }
        state.withLock { $0.stopping = false }
        worker.start()
    }

    /// Stops the worker: an upload in progress is cut off (it is done again at the next
    /// start) and the queue is saved. Blocking; from async code, through `onBackgroundThread`.
    public func stop() {
        state.withLock { $0.stopping = true }
        thread.withLock { $0 }?.stop()
        saveIfChanged()
    }

    /// Queues a finished file (a library path, as `fileFinished` and `snapshotSaved`
    /// announce it); anything else — a temp file, a kind not in `[upload] kinds` — is
    /// ignored. Never blocks on disk or network: the worker saves and uploads.
    public func enqueue(path: String, bytes: Int64? = nil) {
        guard let file = LibraryFilePath(absolute: path, root: settings.layout.root),
              settings.upload.kinds.contains(file.uploadKind) else { return }
        let added = state.withLock { state -> Bool in
            guard !state.queue.contains(file) else { return true }
            let ok = state.queue.add(UploadQueue.Entry(file: file, bytes: max(0, bytes ?? 0)))
            if ok { state.dirty = true }
            return ok
        }
        if !added { logger.error("upload queue is full (\(UploadQueue.maximumEntries) files): \(file) is not uploaded") }
        wake()
    }

    /// Queues the finished files of `days` that are neither queued nor marked uploaded
    /// in their day's index: what no `fileFinished` announced — a recording salvage
    /// repaired after a power cut (the footage a thief wanted gone), a `kioskcam record`
    /// run. Reads folders: on the worker thread only.
    /// - Returns: How many files were queued.
    @discardableResult
    public func catchUp(days: [CalendarDate]) -> Int {
        var added = 0
        for kind in MediaKind.allCases {
            for day in Set(days) {
                let folder = settings.layout.kindDirectory(kind) + "/" + day.folderName
                guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { continue }
                let index = (try? String(contentsOfFile: folder + "/" + LibraryIndex.fileName, encoding: .utf8)) ?? ""
                let uploaded = LibraryIndex.uploadedNames(index)
                for name in names.sorted() where !uploaded.contains(name) {
                    guard let file = LibraryFilePath(relative: kind.rawValue + "/" + day.folderName + "/" + name),
                          settings.upload.kinds.contains(file.uploadKind) else { continue }
                    let size = (try? FileManager.default.attributesOfItem(atPath: folder + "/" + name)[.size] as? NSNumber)?.int64Value ?? 0
                    let queued = state.withLock { state -> Bool in
                        guard !state.queue.contains(file), state.queue.add(UploadQueue.Entry(file: file, bytes: max(0, size))) else { return false }
                        state.dirty = true
                        return true
                    }
                    if queued { added += 1 }
                }
            }
        }
        return added
    }

    /// Every queued file is due now (`kioskcam upload now`).
    public func uploadNow() {
        state.withLock {
            $0.queue.makeAllDue()
            $0.pausedUntil = 0
            $0.dirty = true
        }
        wake()
    }

    /// Queue and figures, for status and metrics.
    public var figures: UploadFigures {
        state.withLock { state in
            var figures = state.figures
            figures.queuedFiles = state.queue.count
            figures.queuedBytes = state.queue.bytes
            return figures
        }
    }

    /// The queue as it stands (oldest first).
    public var queue: UploadQueue { state.withLock { $0.queue } }

    /// Where `file` goes.
    public func key(for file: LibraryFilePath) -> String { location.key(for: file, deviceID: settings.deviceID) }

    private func wake() { thread.withLock { $0 }?.wake() }

    // MARK: The worker

    /// One round: save, then upload every due file until none is due or a failure pauses the queue.
    private func round() {
        if !state.withLock({ $0.caughtUp }) {
            let now = Date()
            let added = catchUp(days: [CalendarDate(LocalTimestamp(now.addingTimeInterval(-86_400))), CalendarDate(LocalTimestamp(now))])
            state.withLock { $0.caughtUp = true }
            if added > 0 { logger.notice("upload queue: \(added) finished files from today and yesterday were not queued (salvaged after a power cut, or recorded without the daemon); queued now") }
        }
        saveIfChanged()
        while let entry = nextDue() {
            upload(entry)
            saveIfChanged()
        }
    }

    private func nextDue() -> UploadQueue.Entry? {
        let now = Self.now()
        return state.withLock { state in
            guard !state.stopping, state.pausedUntil <= now else { return nil }
            return state.queue.next(now: now)
        }
    }

    private func upload(_ entry: UploadQueue.Entry) {
        let file = entry.file
        let path = file.path(in: settings.layout)
        let key = key(for: file)
        state.withLock {
            $0.figures.current = file.relativePath
            $0.figures.currentBytesSent = 0
        }
        defer { state.withLock { $0.figures.current = nil; $0.figures.currentBytesSent = 0 } }
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            logger.warning("upload: \(path) is gone (deleted by the disk guard or by hand) before its upload; taken off the queue")
            state.withLock {
                $0.queue.remove(file)
                $0.figures.vanishedFiles += 1
                $0.dirty = true
            }
            return
        }
        do {
            let result = try client.putFile(path, key: key, contentType: Self.contentType(file.kind),
                                            maxBytesPerSecond: settings.upload.maxBytesPerSecond,
                                            shouldCancel: { [state] in state.withLock { $0.stopping } },
                                            progress: { [weak self] sent in self?.progress(sent) })
            markUploaded(file, etag: result.etag)
            let stamp = LocalTimestamp(Date()).readable
            state.withLock {
                $0.queue.remove(file)
                $0.figures.uploadedFiles += 1
                $0.figures.uploadedBytes += result.bytes
                $0.figures.lastSuccess = "\(file.relativePath) at \(stamp)"
                $0.figures.lastError = nil
                $0.dirty = true
            }
            logger.info("uploaded \(path) (\(ByteCountText.text(result.bytes))) to s3://\(location.bucket)/\(key), MD5 \(result.md5Hex) checked")
            if settings.upload.deleteAfterUpload {
                if unlink(path) == 0 {
                    logger.info("deleted \(path): its offsite copy is checked (delete_after_upload)")
                    // A sound recording's waveform picture goes with it.
                    if file.kind == .audio { unlink(String(path.dropLast(file.kind.fileExtension.count)) + "png") }
                } else {
                    logger.warning("could not delete \(path) after its upload: \(String(cString: strerror(errno)))")
                }
            }
        } catch {
            failed(file, error)
        }
    }

    private func failed(_ file: LibraryFilePath, _ error: UploadError) {
        switch error.code {
        case .cancelled:
            return
        case .file:
            logger.error("upload of \(file) given up: \(error)")
            state.withLock {
                $0.queue.remove(file)
                $0.figures.lastError = error.message
                $0.figures.failures += 1
                $0.dirty = true
            }
        default:
            let now = Self.now()
            let wait = state.withLock { state -> Int64 in
                state.queue.failed(file, now: now, backoff: settings.backoff, jitter: Double.random(in: 0...1))
                let until = state.queue.entries.first { $0.file == file }?.notBefore ?? now
                // Integrity failures are the file's own; anything else is likely every file's.
                if error.code != .integrity { state.pausedUntil = until }
                state.figures.failures += 1
                state.figures.lastError = error.message
                state.dirty = true
                return until - now
            }
            logger.warning("\(error) (next try in \(wait) s)")
        }
    }

    /// Appends the file's uploaded mark to its day's `.index`; a failure only costs the mark.
    private func markUploaded(_ file: LibraryFilePath, etag: String) {
        let index = settings.layout.kindDirectory(file.kind) + "/" + file.date.folderName + "/" + LibraryIndex.fileName
        let fd = open(index, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            logger.warning("could not mark \(file) as uploaded in \(index): \(String(cString: strerror(errno)))")
            return
        }
        defer { close(fd) }
        let line = Array(LibraryIndex.uploadedLine(name: file.name, etag: etag).utf8)
        _ = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }

    /// Called by libcurl while sending: counts, and saves a queue that changed meanwhile
    /// (a long upload must not keep newly finished files only in memory).
    private func progress(_ sent: Int64) {
        let dirty = state.withLock { state -> Bool in
            state.figures.currentBytesSent = sent
            return state.dirty
        }
        if dirty { saveIfChanged() }
    }

    private func saveIfChanged() {
        guard let queue = state.withLock({ state -> UploadQueue? in
            guard state.dirty else { return nil }
            state.dirty = false
            return state.queue
        }) else { return }
        do {
            try store.save(queue)
        } catch {
            state.withLock { $0.dirty = true }
            logger.error("\(error)")
        }
    }

    static func contentType(_ kind: MediaKind) -> String {
        switch kind {
        case .video, .screen: "video/mp4"
        case .photo: "image/jpeg"
        case .audio: "audio/mp4"
        }
    }

    static func now() -> Int64 { Int64(Date().timeIntervalSince1970) }
}
