import CCairo
import KioskCore

/// The colours of every screen: light text on a near-black slate, red for recording,
/// amber for warnings, blue for a key under a finger.
enum Palette {
    static let black = Colour(0x000000)
    static let background = Colour(0x0E1116)
    static let surface = Colour(0x232A33)
    static let surfaceEdge = Colour(0x3A4350)
    static let text = Colour(0xF3F5F7)
    static let mutedText = Colour(0x9AA4B1)
    static let red = Colour(0xE5484D)
    static let amber = Colour(0xF5A524)
    static let green = Colour(0x30C46B)
    static let yellow = Colour(0xE8D44D)
    static let accent = Colour(0x3B82F6)
    static let scrim = Colour(0x000000, alpha: 0.62)
}

extension ScreenRenderer {
    /// The live screen: preview, REC badge, notice, buttons, level meter, status line.
    func drawLive(_ model: ScreenModel) {
        let layout = self.layout
        canvas.fill(ScreenRect(x: 0, y: 0, width: size.width, height: size.height), Palette.background)
        drawPreview(model)
        if let mark = model.focusMark { drawFocusMark(at: mark) }
        drawRecordingBadge(model)
        drawMotionBadge(model)
        if model.soundRecorderShown { drawSoundRecorder(model) }
        if let notice = model.notice, !notice.isEmpty { drawNotice(notice) }
        drawRecordButton(model, pressed: model.pressedTarget == .recordButton)
        drawSnapshotButton(enabled: true, pressed: model.pressedTarget == .snapshotButton)
        drawLibraryButton(pressed: model.pressedTarget == .libraryButton)
        if model.soundButtonShown { drawSoundButton(model, pressed: model.pressedTarget == .soundButton) }
        if model.broadcastAvailable { drawBroadcastButton(live: model.broadcast != nil, pressed: model.pressedTarget == .broadcastButton) }
        if let torch = model.torch { drawTorchButton(on: torch, pressed: model.pressedTarget == .torchButton) }
        drawLevelMeter(model.audioLevels, in: layout.levelMeter)
        drawStatusBar(model)
    }

    /// The square a tap on the preview focuses in (for about a second), kept on the preview.
    private func drawFocusMark(at point: ScreenPoint) {
        let area = layout.preview
        let side = max(24, min(area.width, area.height) / 6)
        let x = min(max(point.x - side / 2, area.x), area.maxX - side)
        let y = min(max(point.y - side / 2, area.y), area.maxY - side)
        canvas.strokeRounded(ScreenRect(x: x, y: y, width: side, height: side), radius: 3, width: 2, Palette.yellow)
    }

    private func drawPreview(_ model: ScreenModel) {
        let area = layout.preview
        canvas.fill(area, Palette.black)
        if hasPreview, let picture = scaler?.destination {
            canvas.paint(picture, x: area.x + (area.width - picture.size.width) / 2,
                         y: area.y + (area.height - picture.size.height) / 2)
            return
        }
        let line = Double(max(18, min(area.width, area.height) / 14))
        let middle = area.y + area.height / 2
        canvas.text("No camera picture", in: ScreenRect(x: area.x, y: middle - Int(line * 1.6), width: area.width, height: Int(line * 1.5)),
                    size: line, bold: true, colour: Palette.mutedText, padding: 12)
        if !model.cameraState.isEmpty {
            canvas.text(model.cameraState, in: ScreenRect(x: area.x, y: middle, width: area.width, height: Int(line * 1.3)),
                        size: line * 0.75, colour: Palette.mutedText, padding: 12)
        }
    }

    /// "● REC 00:01:23 · 12.4 MiB" over the preview's top-left corner (or in `area`: the
    /// media view's) while recording.
    func drawRecordingBadge(_ model: ScreenModel, in area: ScreenRect? = nil) {
        let badge = area ?? layout.recordingBadge
        let label: String
        let dot: Colour
        switch model.recordingState {
        case .idle: return
        case .starting: label = "Starting…"; dot = Palette.amber
        case .recording:
            label = "REC  " + Self.clockText(model.recordingSeconds) + "  ·  " + ByteCountText.text(model.recordingBytes)
            dot = Palette.red
        case .stopping: label = "Saving…"; dot = Palette.amber
        }
        let height = Double(badge.height)
        let fontSize = (height * 0.5).rounded()
        canvas.setFont(size: fontSize, bold: true)
        let textWidth = canvas.textWidth(label)
        let dotRadius = height * 0.2
        let padding = height * 0.35
        let width = min(Double(badge.width), padding + 2 * dotRadius + padding * 0.8 + textWidth + padding)
        canvas.fillRounded(ScreenRect(x: badge.x, y: badge.y, width: Int(width.rounded(.up)), height: badge.height),
                           radius: height / 2, Palette.scrim)
        canvas.fillCircle(centreX: Double(badge.x) + padding + dotRadius, centreY: Double(badge.y) + height / 2,
                          radius: dotRadius, dot)
        let textX = badge.x + Int(padding + 2 * dotRadius + padding * 0.8)
        canvas.text(label, in: ScreenRect(x: textX, y: badge.y, width: badge.x + Int(width) - textX, height: badge.height),
                    size: fontSize, bold: true, colour: Palette.text, alignment: .leading)
    }

    /// "MOTION" (amber) over the preview's top-right corner while motion is seen, "EVENT"
    /// (red) while an event clip is being written.
    private func drawMotionBadge(_ model: ScreenModel) {
        guard model.motion || model.eventClip else { return }
        let area = layout.preview
        let height = Double(layout.recordingBadge.height)
        let label = model.eventClip ? (model.motion ? "EVENT · MOTION" : "EVENT") : "MOTION"
        let fontSize = (height * 0.5).rounded()
        canvas.setFont(size: fontSize, bold: true)
        let dotRadius = height * 0.2, padding = height * 0.35
        let width = padding + 2 * dotRadius + padding * 0.8 + canvas.textWidth(label) + padding
        let x = area.maxX - Int(width.rounded(.up)) - (layout.recordingBadge.x - area.x)
        let badge = ScreenRect(x: x, y: layout.recordingBadge.y, width: Int(width.rounded(.up)), height: layout.recordingBadge.height)
        canvas.fillRounded(badge, radius: height / 2, Palette.scrim)
        canvas.fillCircle(centreX: Double(badge.x) + padding + dotRadius, centreY: Double(badge.y) + height / 2,
                          radius: dotRadius, model.eventClip ? Palette.red : Palette.amber)
        let textX = badge.x + Int(padding + 2 * dotRadius + padding * 0.8)
        canvas.text(label, in: ScreenRect(x: textX, y: badge.y, width: badge.maxX - textX, height: badge.height),
                    size: fontSize, bold: true, colour: Palette.text, alignment: .leading)
    }

    /// A short message in a pill near the bottom of the preview, above its row of pills
    /// (or near the bottom of `area`).
    func drawNotice(_ notice: String, in area: ScreenRect? = nil) {
        let height = max(28, layout.recordingBadge.height)
        let bottom = area.map { $0.maxY - max(8, height / 3) } ?? layout.libraryButton.y - max(8, height / 3)
        let area = area ?? layout.preview
        let fontSize = (Double(height) * 0.45).rounded()
        canvas.setFont(size: fontSize)
        let width = min(area.width - 24, Int(canvas.textWidth(notice)) + height)
        let pill = ScreenRect(x: area.x + (area.width - width) / 2, y: bottom - height, width: width, height: height)
        canvas.fillRounded(pill, radius: Double(height) / 2, Palette.surface.withAlpha(0.92))
        canvas.strokeRounded(pill, radius: Double(height) / 2, width: 1.5, Palette.surfaceEdge)
        canvas.text(notice, in: pill, size: fontSize, bold: true, colour: Palette.text, padding: Double(height) / 2)
    }

    /// Red circle and "Record" when idle, red square and "Stop" while recording,
    /// dimmed while the recorder starts or stops.
    private func drawRecordButton(_ model: ScreenModel, pressed: Bool) {
        let rect = layout.recordButton
        let enabled = model.recordButtonEnabled
        let recording = model.recordingState == .recording || model.recordingState == .stopping
        drawButtonFace(rect, pressed: pressed && enabled, highlighted: recording)
        let (icon, labelRect) = buttonParts(rect)
        let alpha = enabled ? 1.0 : 0.35
        let radius = Double(icon.height) / 2
        let cx = Double(icon.x) + Double(icon.width) / 2, cy = Double(icon.y) + radius
        canvas.strokeCircle(centreX: cx, centreY: cy, radius: radius - 2, width: 3, Palette.text.withAlpha(alpha))
        if recording {
            let side = radius * 0.9
            canvas.fillRounded(ScreenRect(x: Int(cx - side / 2), y: Int(cy - side / 2), width: Int(side), height: Int(side)),
                               radius: side * 0.15, Palette.red.withAlpha(alpha))
        } else {
            canvas.fillCircle(centreX: cx, centreY: cy, radius: radius * 0.68, Palette.red.withAlpha(alpha))
        }
        let label: String
        switch model.recordingState {
        case .idle: label = "Record"
        case .starting: label = "Starting…"
        case .recording: label = "Stop"
        case .stopping: label = "Saving…"
        }
        canvas.text(label, in: labelRect, size: buttonFontSize(rect), bold: true, colour: Palette.text.withAlpha(alpha), padding: 6)
    }

    /// A camera outline and "Photo".
    private func drawSnapshotButton(enabled: Bool, pressed: Bool) {
        let rect = layout.snapshotButton
        drawButtonFace(rect, pressed: pressed && enabled, highlighted: false)
        let (icon, labelRect) = buttonParts(rect)
        let alpha = enabled ? 1.0 : 0.35
        let h = Double(icon.height)
        let bodyWidth = h * 1.35, bodyHeight = h * 0.8
        let x = Double(icon.x) + (Double(icon.width) - bodyWidth) / 2, y = Double(icon.y) + h - bodyHeight
        let context = canvas.context
        canvas.setColour(Palette.text.withAlpha(alpha))
        cairo_set_line_width(context, 3)
        canvas.roundedRectPath(x, y, bodyWidth, bodyHeight, radius: h * 0.12)
        cairo_stroke(context)
        // The viewfinder hump on top.
        let hump = ScreenRect(x: Int(x + bodyWidth * 0.3), y: Int(y - h * 0.16), width: Int(bodyWidth * 0.4), height: Int(h * 0.2))
        canvas.fillRounded(hump, radius: h * 0.05, Palette.text.withAlpha(alpha))
        canvas.strokeCircle(centreX: x + bodyWidth / 2, centreY: y + bodyHeight / 2, radius: bodyHeight * 0.3, width: 3,
                            Palette.text.withAlpha(alpha))
        canvas.text("Photo", in: labelRect, size: buttonFontSize(rect), bold: true, colour: Palette.text.withAlpha(alpha), padding: 6)
    }

    /// "Library" in a pill over the preview's bottom-right corner: opens the media view.
    private func drawLibraryButton(pressed: Bool) {
        let rect = layout.libraryButton
        canvas.fillRounded(rect, radius: Double(rect.height) / 2, pressed ? Palette.accent : Palette.scrim)
        canvas.strokeRounded(rect, radius: Double(rect.height) / 2, width: 1.5, Palette.surfaceEdge)
        canvas.text("Library", in: rect, size: (Double(rect.height) * 0.45).rounded(), bold: true, colour: Palette.text,
                    padding: Double(rect.height) / 3)
    }

    /// "● Sound" in a pill left of Library; "■ Stop" in red while the sound recorder
    /// records; dimmed while something else records or the recorder starts or stops.
    private func drawSoundButton(_ model: ScreenModel, pressed: Bool) {
        let rect = layout.soundButton
        let enabled = model.soundButtonEnabled
        let recording = model.soundRecorderShown
        let radius = Double(rect.height) / 2
        canvas.fillRounded(rect, radius: radius, pressed && enabled ? Palette.accent : (recording ? Palette.red : Palette.scrim))
        canvas.strokeRounded(rect, radius: radius, width: 1.5, Palette.surfaceEdge)
        let alpha = enabled ? 1.0 : 0.35
        let label = recording ? (model.recordingState == .recording ? "■ Stop" : "…") : "● Sound"
        canvas.text(label, in: rect, size: (Double(rect.height) * 0.45).rounded(), bold: true, colour: Palette.text.withAlpha(alpha),
                    padding: Double(rect.height) / 3)
    }

    /// The sound recorder over the preview: the loudest channel's level in dBFS and the
    /// waveform so far, scaled to its loudest moment, on a dark panel.
    private func drawSoundRecorder(_ model: ScreenModel) {
        let panel = layout.soundPanel, area = layout.soundWaveform
        guard !panel.isEmpty else { return }
        canvas.fillRounded(panel, radius: Double(min(panel.width, panel.height)) * 0.06, Palette.surface.withAlpha(0.94))
        canvas.strokeRounded(panel, radius: Double(min(panel.width, panel.height)) * 0.06, width: 1.5, Palette.surfaceEdge)
        let lineHeight = area.y - panel.y
        let level = model.audioLevels?.rmsDBFS.max().map { $0 <= AudioLevelMeter.floorDBFS ? "silence" : "\(Int($0.rounded())) dBFS" } ?? "no microphone"
        canvas.text("Sound recording  ·  " + level, in: ScreenRect(x: area.x, y: panel.y, width: area.width, height: lineHeight),
                    size: Double(max(12, min(22, lineHeight / 2))), bold: true, colour: Palette.text, alignment: .leading, padding: 4)
        canvas.fill(area, Palette.background)
        let inset = max(2, area.height / 20)
        let centre = area.inset(by: inset)
        canvas.fill(ScreenRect(x: centre.x, y: centre.y + centre.height / 2, width: centre.width, height: 1), Palette.accent.withAlpha(0.5))
        for bar in model.soundWaveform.bars(in: area, inset: inset) { canvas.fill(bar, Palette.accent) }
    }

    /// A square "LIVE" button over the preview's bottom-left: red while the broadcast runs.
    private func drawBroadcastButton(live: Bool, pressed: Bool) {
        drawSmallButton(layout.broadcastButton, label: "LIVE", on: live, onColour: Palette.red, pressed: pressed)
    }

    /// A square torch button beside it: amber while the torch is on.
    private func drawTorchButton(on: Bool, pressed: Bool) {
        drawSmallButton(layout.torchButton, label: "Torch", on: on, onColour: Palette.amber, pressed: pressed)
    }

    private func drawSmallButton(_ rect: ScreenRect, label: String, on: Bool, onColour: Colour, pressed: Bool) {
        let radius = Double(rect.height) * 0.25
        canvas.fillRounded(rect, radius: radius, pressed ? Palette.accent : (on ? onColour : Palette.scrim))
        canvas.strokeRounded(rect, radius: radius, width: 1.5, Palette.surfaceEdge)
        canvas.text(label, in: rect, size: (Double(rect.height) * 0.28).rounded(), bold: true,
                    colour: on && !pressed ? Palette.black : Palette.text, padding: 2)
    }

    func drawButtonFace(_ rect: ScreenRect, pressed: Bool, highlighted: Bool) {
        let radius = Double(min(rect.width, rect.height)) * 0.12
        canvas.fillRounded(rect, radius: radius, pressed ? Palette.accent : Palette.surface)
        canvas.strokeRounded(rect, radius: radius, width: 2, highlighted ? Palette.red : Palette.surfaceEdge)
    }

    /// The icon's square above the label's line, together centred in the button.
    private func buttonParts(_ rect: ScreenRect) -> (icon: ScreenRect, label: ScreenRect) {
        let fontSize = buttonFontSize(rect)
        let labelHeight = Int(fontSize * 1.5)
        let iconSide = max(16, min(rect.width / 2, rect.height - labelHeight - rect.height / 5, Int(fontSize * 2.6)))
        let spacing = max(4, Int(fontSize * 0.35))
        let top = rect.y + (rect.height - iconSide - spacing - labelHeight) / 2
        let icon = ScreenRect(x: rect.x + (rect.width - iconSide) / 2, y: top, width: iconSide, height: iconSide)
        return (icon, ScreenRect(x: rect.x, y: icon.maxY + spacing, width: rect.width, height: labelHeight))
    }

    private func buttonFontSize(_ rect: ScreenRect) -> Double {
        Double(max(14, min(26, min(rect.width / 6, rect.height / 5)))).rounded()
    }

    // MARK: Level meter

    /// The quietest level the meter shows; the scale runs from here to 0 dBFS.
    static let meterFloorDBFS = -60.0
    static let meterTicks: [Double] = [-6, -12, -20, -30, -40, -50]
    static let meterLabels: [Double] = [-6, -20, -40]

    /// One bar per channel: the RMS level in green/yellow/red zones, a white tick at
    /// the held peak, and faint lines at the dBFS marks. Vertical when the meter is taller
    /// than wide (landscape), horizontal otherwise.
    func drawLevelMeter(_ levels: AudioLevels?, in rect: ScreenRect) {
        let radius = Double(min(rect.width, rect.height)) * 0.2
        canvas.fillRounded(rect, radius: radius, Palette.surface)
        let vertical = rect.height > rect.width
        let padded = rect.inset(by: 3)
        // A strip of dBFS labels: a column on the left of a vertical meter, a row under a
        // horizontal one; the bars take the rest.
        let labelFont = Double(max(8, min(11, (vertical ? rect.width : rect.height) / 4)))
        let labelSpan = vertical ? Int(labelFont * 1.9) : Int(labelFont * 1.2)
        let inner = vertical
            ? ScreenRect(x: padded.x + labelSpan, y: padded.y + Int(labelFont / 2), width: padded.width - labelSpan,
                         height: padded.height - Int(labelFont))
            : ScreenRect(x: padded.x + Int(labelFont), y: padded.y, width: padded.width - 2 * Int(labelFont),
                         height: padded.height - labelSpan)
        guard let levels, !levels.rmsDBFS.isEmpty else {
            canvas.text("MIC OFF", in: vertical ? ScreenRect(x: rect.x, y: rect.maxY - 40, width: rect.width, height: 30) : padded,
                        size: Double(min(14, max(9, (vertical ? rect.width : rect.height) / 3))), bold: true,
                        colour: Palette.mutedText, padding: 2)
            return
        }
        let channels = levels.rmsDBFS.count
        let across = vertical ? inner.width : inner.height
        let separation = 2
        let barAcross = max(1, (across - separation * (channels - 1)) / channels)
        let length = Double(vertical ? inner.height : inner.width)
        /// The meter's pixel position of a level, measured from its quiet end.
        func extent(_ dBFS: Double) -> Double {
            let clamped = min(0, max(Self.meterFloorDBFS, dBFS))
            return ((clamped - Self.meterFloorDBFS) / -Self.meterFloorDBFS * length).rounded()
        }
        /// The rectangle from level `from` to level `to` of bar `index`.
        func segment(_ index: Int, from: Double, to: Double) -> ScreenRect {
            let offset = index * (barAcross + separation)
            let a = Int(extent(from)), b = Int(extent(to))
            return vertical
                ? ScreenRect(x: inner.x + offset, y: inner.maxY - b, width: barAcross, height: b - a)
                : ScreenRect(x: inner.x + a, y: inner.y + offset, width: b - a, height: barAcross)
        }
        let zones: [(from: Double, to: Double, colour: Colour)] = [
            (Self.meterFloorDBFS, -18, Palette.green), (-18, -6, Palette.yellow), (-6, 0, Palette.red),
        ]
        for channel in 0..<channels {
            let rms = levels.rmsDBFS[channel]
            for zone in zones {
                // The unlit part of each zone, faint, so the scale reads even in silence.
                canvas.fill(segment(channel, from: zone.from, to: zone.to), zone.colour.withAlpha(0.16))
                let top = min(zone.to, rms)
                if top > zone.from { canvas.fill(segment(channel, from: zone.from, to: top), zone.colour) }
            }
            if channel < levels.peakHoldDBFS.count, levels.peakHoldDBFS[channel] > Self.meterFloorDBFS {
                let peak = min(0, levels.peakHoldDBFS[channel])
                let tick = segment(channel, from: peak, to: min(0, peak + 3 * -Self.meterFloorDBFS / length))
                canvas.fill(vertical ? ScreenRect(x: tick.x, y: tick.y, width: tick.width, height: 3)
                                     : ScreenRect(x: tick.maxX - 3, y: tick.y, width: 3, height: tick.height), Palette.text)
            }
        }
        // Scale marks across all bars.
        for mark in Self.meterTicks {
            let p = Int(extent(mark))
            let line = vertical
                ? ScreenRect(x: inner.x, y: inner.maxY - p, width: inner.width, height: 1)
                : ScreenRect(x: inner.x + p, y: inner.y, width: 1, height: inner.height)
            canvas.fill(line, Palette.background.withAlpha(0.7))
        }
        for mark in [0.0] + Self.meterLabels {
            let p = Int(extent(mark))
            let label = ScreenRect(x: vertical ? padded.x : inner.x + p - 15,
                                   y: vertical ? inner.maxY - p - Int(labelFont) : inner.maxY,
                                   width: vertical ? labelSpan - 2 : 30, height: vertical ? 2 * Int(labelFont) : labelSpan)
            canvas.text(mark == 0 ? "0" : String(Int(mark)), in: label, size: labelFont, colour: Palette.mutedText,
                        alignment: vertical ? .trailing : .centre)
        }
    }

    // MARK: Status line

    /// "58.2 GiB free · Camera: streaming · kiosk-01", and the default-PIN warning in amber.
    func drawStatusBar(_ model: ScreenModel) {
        let bar = layout.statusBar
        canvas.fill(bar, Palette.surface)
        canvas.fill(ScreenRect(x: bar.x, y: bar.y, width: bar.width, height: 1), Palette.surfaceEdge)
        let fontSize = Double(max(12, min(17, bar.height * 11 / 20)))
        var parts: [String] = []
        if let free = model.freeBytes { parts.append(ByteCountText.text(free) + " free") }
        // A portrait screen has about half the width: shorter words, same facts.
        let narrow = bar.width < 600
        if !model.cameraState.isEmpty { parts.append((narrow ? "" : "Camera: ") + model.cameraState) }
        if let problem = model.fleetProblem { parts.append(problem) }
        if let broadcast = model.broadcast { parts.append(broadcast) }
        if !model.deviceName.isEmpty { parts.append(model.deviceName) }
        var textArea = bar
        if model.defaultPinWarning {
            let warning = narrow ? "⚠ Default PIN" : "⚠ Default PIN — change it"
            canvas.setFont(size: fontSize, bold: true)
            let width = Int(canvas.textWidth(warning)) + 24
            let badge = ScreenRect(x: bar.maxX - width - 4, y: bar.y + 3, width: width, height: bar.height - 6)
            canvas.fillRounded(badge, radius: Double(badge.height) / 2, Palette.amber)
            canvas.text(warning, in: badge, size: fontSize, bold: true, colour: Palette.black, padding: 6)
            textArea.width = badge.x - bar.x - 4
        }
        canvas.text(parts.joined(separator: narrow ? " · " : "  ·  "), in: textArea, size: fontSize, colour: Palette.mutedText,
                    alignment: .leading, padding: 10)
    }

    /// "01:02:03" (hours grow past 99 rather than wrap).
    static func clockText(_ seconds: Double) -> String {
        let total = Int(max(0, seconds))
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(two(total / 3600)):\(two(total / 60 % 60)):\(two(total % 60))"
    }
}
