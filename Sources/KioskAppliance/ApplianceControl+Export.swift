import Foundation
import KioskCore
import KioskMedia

extension ApplianceControlHandler {
    /// One export at a time: it is CPU work (a smart cut or re-encode runs libx264) on
    /// the asking client's thread, beside the recording; a second asker is told to wait.
    static let exportRunning = Locked(false)

    /// Clips older than this in `exports/tmp` are removed when the next one is made:
    /// they were made for a pull that has long finished (or failed).
    static let staleExportSeconds: TimeInterval = 3600

    /// `clip.export`: cuts a library recording into the library's `exports/tmp`.
    func exportClip(_ request: ClipExportRequest) -> ControlOutcome {
        let layout = LibraryLayout(root: appliance.configuration.storage.mediaRoot)
        guard let input = layout.recordingPath(relative: request.file) else {
            return .failure(.badArgument("file", "must be a recording as list names it, such as \"video/20261124/101455.mp4\""))
        }
        guard FileManager.default.isReadableFile(atPath: input) else {
            return .failure(ControlError(.failed, "there is no recording \(request.file) in the library: `kioskcam list` shows them"))
        }
        let target: ClipTarget = request.wav ? .wav : (request.file.hasPrefix("video/") ? .mp4 : .m4a)
        let folder = layout.exportsDirectory
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            return .failure(ControlError(.failed, "cannot create \(folder): \(error.localizedDescription); check the media root's permissions"))
        }
        let claimed = Self.exportRunning.withLock { running -> Bool in
            if running { return false }
            running = true
            return true
        }
        guard claimed else { return .failure(ControlError(.busy, "another clip is being exported: try again when it is done")) }
        defer { Self.exportRunning.withLock { $0 = false } }
        removeStaleExports(in: folder)
        let output = folder + "/" + LibraryLayout.exportName(relative: request.file, from: request.from ?? 0, to: request.to,
                                                              fileExtension: target.rawValue)
        let options = ClipExportOptions(from: request.from, to: request.to,
                                        reencode: request.reencode ? (request.size, request.bitrateKbps.map { $0 * 1000 }) : nil)
        do throws(ClipExportError) {
            let result = try ClipExporter.export(input: input, output: output, target: target, options: options)
            let bytes = (try? FileManager.default.attributesOfItem(atPath: output)[.size] as? Int) ?? 0
            appliance.logger.info("exported \(request.file) \(formatClipTime(result.range.start))…\(formatClipTime(result.range.end)) to \(output)")
            return .success(["path": .string(output), "bytes": .integer(Int64(bytes)),
                             "from": .number(result.range.start), "to": .number(result.range.end),
                             "notes": .array(result.notes.map(JSONValue.string))])
        } catch {
            return .failure(ControlError(error.isUsage ? .badArgument : .failed, error.message))
        }
    }

    /// Removes clips (and half-written `.partial` files) older than `staleExportSeconds`.
    private func removeStaleExports(in folder: String) {
        let now = Date()
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        for name in names {
            let path = folder + "/" + name
            guard let modified = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date,
                  now.timeIntervalSince(modified) > Self.staleExportSeconds else { continue }
            try? FileManager.default.removeItem(atPath: path)
        }
    }
}
