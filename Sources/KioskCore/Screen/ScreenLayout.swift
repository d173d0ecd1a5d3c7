/// Where everything sits on the logical screen, for drawing and for hit testing alike,
/// so a tap lands on exactly the key that was drawn there.
///
/// Landscape puts the controls in a column on the right of the preview; portrait puts
/// them in a row below it. The PIN pad is a 3×4 grid (1–9, then blank, 0, del) centred
/// under the title and the entry dots.
public struct ScreenLayout: Sendable, Equatable {
    public let size: ScreenSize

    /// Status line along the bottom edge: free space, camera state, device name.
    public let statusBar: ScreenRect
    /// The camera picture (letter-boxed inside this area by the renderer).
    public let preview: ScreenRect
    /// REC indicator with duration and size, drawn over the top-left of the preview.
    public let recordingBadge: ScreenRect
    /// The level meter: one bar per channel.
    public let levelMeter: ScreenRect
    public let recordButton: ScreenRect
    public let snapshotButton: ScreenRect
    /// "Library", a pill over the preview's bottom-right corner (so the controls beside
    /// the preview keep their size).
    public let libraryButton: ScreenRect
    /// "Sound", a pill left of the Library pill: starts and stops a sound-only recording.
    public let soundButton: ScreenRect
    /// Small square buttons over the preview's bottom-left corner, one above the other,
    /// shown only where they work: the broadcast (`[broadcast] to` set) and the torch (the camera has one).
    public let broadcastButton: ScreenRect
    public let torchButton: ScreenRect
    /// The sound recorder over the preview while a sound-only recording runs: the live
    /// level and the growing waveform (`soundWaveform` inside it).
    public let soundPanel: ScreenRect
    public let soundWaveform: ScreenRect

    /// PIN screen: the title ("Enter PIN"), the entry dots and the message line.
    public let pinTitle: ScreenRect
    public let pinDots: ScreenRect
    public let pinMessage: ScreenRect
    /// Each key of the pad and its rectangle.
    public let pinKeys: [(key: PinKey, rect: ScreenRect)]
    /// Beside the PIN pad, on the left: the web app's address, its QR code and the
    /// certificate's fingerprint. Nil where the pad leaves less than 140 px (portrait).
    public let pinWebPanel: ScreenRect?

    public init(size: ScreenSize) {
        self.size = size
        let w = size.width, h = size.height
        let statusHeight = max(20, h / 16)
        statusBar = ScreenRect(x: 0, y: h - statusHeight, width: w, height: statusHeight)
        let body = ScreenRect(x: 0, y: 0, width: w, height: h - statusHeight)
        let gap = max(4, min(w, h) / 60)

        if size.isPortrait {
            let controlsHeight = body.height / 4
            preview = ScreenRect(x: 0, y: 0, width: w, height: body.height - controlsHeight)
            let row = ScreenRect(x: 0, y: preview.maxY, width: w, height: controlsHeight)
            // Tall enough for two channel bars and a strip of dBFS labels.
            let meterHeight = max(12, controlsHeight / 5)
            levelMeter = ScreenRect(x: gap, y: row.y + gap, width: w - 2 * gap, height: meterHeight)
            let buttonsTop = levelMeter.maxY + gap
            let buttonHeight = row.maxY - buttonsTop - gap
            let buttonWidth = (w - 3 * gap) / 2
            recordButton = ScreenRect(x: gap, y: buttonsTop, width: buttonWidth, height: buttonHeight)
            snapshotButton = ScreenRect(x: 2 * gap + buttonWidth, y: buttonsTop, width: buttonWidth, height: buttonHeight)
        } else {
            let columnWidth = w / 4
            preview = ScreenRect(x: 0, y: 0, width: w - columnWidth, height: body.height)
            let column = ScreenRect(x: preview.maxX, y: 0, width: columnWidth, height: body.height)
            // Wide enough for two channel bars and a column of dBFS labels.
            let meterWidth = max(12, columnWidth / 4)
            levelMeter = ScreenRect(x: column.maxX - gap - meterWidth, y: gap, width: meterWidth, height: column.height - 2 * gap)
            let buttonWidth = levelMeter.x - column.x - 2 * gap
            let buttonHeight = (column.height - 3 * gap) / 2
            recordButton = ScreenRect(x: column.x + gap, y: gap, width: buttonWidth, height: buttonHeight)
            snapshotButton = ScreenRect(x: column.x + gap, y: 2 * gap + buttonHeight, width: buttonWidth, height: buttonHeight)
        }
        // The badge is drawn as wide as its text needs, up to the preview's width; its
        // height follows the smaller side so portrait does not get a giant badge.
        recordingBadge = ScreenRect(x: preview.x + gap, y: preview.y + gap, width: preview.width - 2 * gap,
                                    height: max(24, min(w, h) / 12))

        let libraryHeight = max(40, min(w, h) / 10)
        let libraryWidth = min(preview.width / 3, libraryHeight * 3)
        libraryButton = ScreenRect(x: preview.maxX - gap - libraryWidth, y: preview.maxY - gap - libraryHeight,
                                   width: libraryWidth, height: libraryHeight)
        soundButton = ScreenRect(x: libraryButton.x - gap - libraryWidth, y: libraryButton.y,
                                 width: libraryWidth, height: libraryHeight)
        // Stacked upwards, so a narrow preview still has room beside the pills.
        broadcastButton = ScreenRect(x: preview.x + gap, y: libraryButton.y, width: libraryHeight, height: libraryHeight)
        torchButton = ScreenRect(x: preview.x + gap, y: broadcastButton.y - gap - libraryHeight, width: libraryHeight, height: libraryHeight)
        let panelTop = recordingBadge.maxY + gap
        soundPanel = ScreenRect(x: preview.x + gap, y: panelTop, width: preview.width - 2 * gap,
                                height: max(0, torchButton.y - gap - panelTop))
        // A line for the level in dBFS above the waveform.
        let levelLine = max(20, soundPanel.height / 6)
        soundWaveform = ScreenRect(x: soundPanel.x + gap, y: soundPanel.y + levelLine + gap, width: soundPanel.width - 2 * gap,
                                   height: max(0, soundPanel.height - levelLine - 2 * gap))

        // PIN pad: square-ish keys sized to fit the smaller side, centred.
        let headerHeight = h / 5
        pinTitle = ScreenRect(x: 0, y: gap, width: w, height: headerHeight / 2)
        pinDots = ScreenRect(x: 0, y: pinTitle.maxY, width: w, height: headerHeight / 2)
        let padTop = pinDots.maxY + gap
        let messageHeight = max(24, h / 14)
        let padBottom = statusBar.y - messageHeight - gap
        let keyHeight = (padBottom - padTop - 3 * gap) / 4
        let keyWidth = min((w - 4 * gap) / 3, keyHeight * 2)
        let padWidth = 3 * keyWidth + 2 * gap
        let padLeft = (w - padWidth) / 2
        var keys: [(key: PinKey, rect: ScreenRect)] = []
        let grid: [[PinKey?]] = [
            [.digit(1), .digit(2), .digit(3)],
            [.digit(4), .digit(5), .digit(6)],
            [.digit(7), .digit(8), .digit(9)],
            [nil, .digit(0), .delete],
        ]
        for (row, keysInRow) in grid.enumerated() {
            for (column, key) in keysInRow.enumerated() {
                guard let key else { continue }
                keys.append((key, ScreenRect(x: padLeft + column * (keyWidth + gap), y: padTop + row * (keyHeight + gap),
                                             width: keyWidth, height: keyHeight)))
            }
        }
        pinKeys = keys
        pinMessage = ScreenRect(x: 0, y: padBottom + gap / 2, width: w, height: messageHeight)
        let panelWidth = padLeft - 2 * gap
        pinWebPanel = panelWidth >= 140 && padBottom - padTop >= 180
            ? ScreenRect(x: gap, y: padTop, width: panelWidth, height: padBottom - padTop) : nil
    }

    /// What a tap at `point` hits on `page`, if anything.
    /// - Parameter shown: The live screen's optional buttons that are drawn (see
    ///   `ScreenModel.liveTargets`); the others are not hit.
    public func target(at point: ScreenPoint, on page: ScreenPage,
                       shown: Set<ScreenTarget> = []) -> ScreenTarget? {
        switch page {
        case .live:
            if recordButton.contains(point) { return .recordButton }
            if snapshotButton.contains(point) { return .snapshotButton }
            if libraryButton.contains(point) { return .libraryButton }
            for optional in [ScreenTarget.soundButton, .broadcastButton, .torchButton] where shown.contains(optional) {
                if let rect = rect(of: optional), rect.contains(point) { return optional }
            }
            return nil
        case .pin:
            return pinKeys.first { $0.rect.contains(point) }.map { .pinKey($0.key) }
        case .blank, .media:
            return nil
        }
    }

    /// The rectangle a target is drawn in.
    public func rect(of target: ScreenTarget) -> ScreenRect? {
        switch target {
        case .recordButton: recordButton
        case .snapshotButton: snapshotButton
        case .libraryButton: libraryButton
        case .soundButton: soundButton
        case .broadcastButton: broadcastButton
        case .torchButton: torchButton
        case .pinKey(let key): pinKeys.first { $0.key == key }?.rect
        }
    }

    public static func == (lhs: ScreenLayout, rhs: ScreenLayout) -> Bool { lhs.size == rhs.size }
}
