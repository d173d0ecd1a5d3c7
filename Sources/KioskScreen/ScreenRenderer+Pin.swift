import CCairo
import KioskCore

extension ScreenRenderer {
    /// The PIN screensaver: "Enter PIN", four dots (filled per digit typed), the 3×4 pad
    /// and the message line. The digits themselves are never drawn.
    func drawPin(_ model: ScreenModel) {
        let layout = self.layout
        canvas.fill(ScreenRect(x: 0, y: 0, width: size.width, height: size.height), Palette.background)
        canvas.text("Enter PIN", in: layout.pinTitle, size: Double(max(20, min(34, layout.pinTitle.height * 3 / 5))), bold: true,
                    colour: Palette.text)
        drawPinDots(filled: model.pinDigitsEntered)
        for (key, rect) in layout.pinKeys {
            drawKey(key, in: rect, pressed: model.pressedTarget == .pinKey(key))
        }
        if let message = model.pinMessage, !message.isEmpty {
            canvas.text(message, in: layout.pinMessage, size: Double(max(16, min(24, layout.pinMessage.height * 3 / 5))),
                        bold: true, colour: Palette.amber, padding: 12)
        }
        if let web = model.web, let panel = layout.pinWebPanel { drawWebPanel(web, in: panel) }
        drawPinStatusBar(model)
    }

    /// Where a phone finds the web app: a QR code of the URL, the URL, and the SHA-256
    /// fingerprint (four lines of 16 hex digits) to compare with what the browser shows for
    /// the self-signed certificate.
    private func drawWebPanel(_ web: ScreenWebInfo, in panel: ScreenRect) {
        let line = max(14, min(20, panel.height / 14))
        canvas.text("On a phone", in: ScreenRect(x: panel.x, y: panel.y, width: panel.width, height: line),
                    size: Double(line) * 0.8, bold: true, colour: Palette.mutedText)
        var y = panel.y + line + 4
        let fingerprintLines = web.fingerprint.map { Self.fingerprintLines($0) } ?? []
        let textHeight = line + fingerprintLines.count * (line - 2) + (fingerprintLines.isEmpty ? 0 : line)
        if webQRCode?.url != web.url { webQRCode = (web.url, QRCode(text: web.url)) }
        if let code = webQRCode?.code {
            let quiet = 2
            let room = min(panel.width, panel.height - (y - panel.y) - textHeight - 8)
            let module = room / (code.size + 2 * quiet)
            if module >= 2 {
                let side = module * (code.size + 2 * quiet)
                let left = panel.x + (panel.width - side) / 2
                canvas.fill(ScreenRect(x: left, y: y, width: side, height: side), Colour(0xFFFFFF))
                let black = Colour(0x000000)
                for row in 0..<code.size {
                    for column in 0..<code.size where code.isDark(x: column, y: row) {
                        canvas.fill(ScreenRect(x: left + (column + quiet) * module, y: y + (row + quiet) * module,
                                               width: module, height: module), black)
                    }
                }
                y += side + 6
            }
        }
        canvas.text(web.url, in: ScreenRect(x: panel.x, y: y, width: panel.width, height: line), size: Double(line) * 0.8,
                    bold: true, colour: Palette.text)
        y += line
        guard !fingerprintLines.isEmpty else { return }
        canvas.text("Certificate SHA-256", in: ScreenRect(x: panel.x, y: y, width: panel.width, height: line),
                    size: Double(line) * 0.7, colour: Palette.mutedText)
        y += line
        for text in fingerprintLines {
            canvas.text(text, in: ScreenRect(x: panel.x, y: y, width: panel.width, height: line - 2), size: Double(line) * 0.7,
                        colour: Palette.mutedText)
            y += line - 2
        }
    }

    /// "AB:CD:…" (32 bytes) as four lines of eight bytes, without colons: "ABCD EF01 …".
    static func fingerprintLines(_ fingerprint: String) -> [String] {
        let hex = Array(fingerprint.filter { $0.isHexDigit })
        guard !hex.isEmpty else { return [] }
        var lines: [String] = []
        var index = 0
        while index < hex.count {
            let chunk = hex[index..<min(hex.count, index + 16)]
            var groups: [String] = []
            var start = chunk.startIndex
            while start < chunk.endIndex {
                groups.append(String(chunk[start..<min(chunk.endIndex, start + 4)]))
                start += 4
            }
            lines.append(groups.joined(separator: " "))
            index += 16
        }
        return lines
    }

    private func drawPinDots(filled: Int) {
        let area = layout.pinDots
        let radius = Double(max(7, min(13, area.height / 5)))
        let spacing = radius * 3.6
        let firstX = Double(area.x) + Double(area.width) / 2 - spacing * 1.5
        let y = Double(area.y) + Double(area.height) / 2
        for index in 0..<4 {
            let x = firstX + Double(index) * spacing
            if index < filled {
                canvas.fillCircle(centreX: x, centreY: y, radius: radius, Palette.text)
            } else {
                canvas.strokeCircle(centreX: x, centreY: y, radius: radius - 1.25, width: 2.5, Palette.mutedText)
            }
        }
    }

    private func drawKey(_ key: PinKey, in rect: ScreenRect, pressed: Bool) {
        let radius = Double(min(rect.width, rect.height)) * 0.18
        canvas.fillRounded(rect, radius: radius, pressed ? Palette.accent : Palette.surface)
        if !pressed { canvas.strokeRounded(rect, radius: radius, width: 1.5, Palette.surfaceEdge) }
        switch key {
        case .digit(let digit):
            canvas.text(String(digit), in: rect, size: Double(min(rect.height * 11 / 20, rect.width * 2 / 5)), bold: false,
                        colour: Palette.text)
        case .delete:
            drawDeleteIcon(in: rect)
        }
    }

    /// The backspace sign: a tag pointing left with an ×, which every phone PIN pad uses for "del".
    private func drawDeleteIcon(in rect: ScreenRect) {
        let h = Double(min(rect.height * 2 / 5, rect.width / 3))
        let w = h * 1.45
        let x = Double(rect.x) + (Double(rect.width) - w) / 2, y = Double(rect.y) + (Double(rect.height) - h) / 2
        let context = canvas.context
        canvas.setColour(Palette.text)
        cairo_set_line_width(context, max(2, h / 12))
        cairo_set_line_join(context, CAIRO_LINE_JOIN_ROUND)
        cairo_set_line_cap(context, CAIRO_LINE_CAP_ROUND)
        cairo_move_to(context, x, y + h / 2)
        cairo_line_to(context, x + h * 0.42, y)
        cairo_line_to(context, x + w, y)
        cairo_line_to(context, x + w, y + h)
        cairo_line_to(context, x + h * 0.42, y + h)
        cairo_close_path(context)
        cairo_stroke(context)
        let cx = x + h * 0.42 + (w - h * 0.42) / 2, cy = y + h / 2, arm = h * 0.18
        cairo_move_to(context, cx - arm, cy - arm)
        cairo_line_to(context, cx + arm, cy + arm)
        cairo_move_to(context, cx + arm, cy - arm)
        cairo_line_to(context, cx - arm, cy + arm)
        cairo_stroke(context)
    }

    /// The device name, and the REC badge's text while a recording runs behind the lock.
    private func drawPinStatusBar(_ model: ScreenModel) {
        let bar = layout.statusBar
        canvas.fill(bar, Palette.surface)
        canvas.fill(ScreenRect(x: bar.x, y: bar.y, width: bar.width, height: 1), Palette.surfaceEdge)
        let fontSize = Double(max(12, min(18, bar.height * 11 / 20)))
        canvas.text(model.deviceName, in: bar, size: fontSize, colour: Palette.mutedText, alignment: .leading, padding: 10)
        if model.recordingState == .recording {
            canvas.text("● REC " + Self.clockText(model.recordingSeconds), in: bar, size: fontSize, bold: true,
                        colour: Palette.red, alignment: .trailing, padding: 10)
        }
    }
}
