import Foundation
import FuzzSupport
import KioskCore

/// One line from a control-socket client through `ControlCall.parse`, the same bytes
/// through the client's parser of server lines (`ControlServerLine.parse`), and as an
/// MQTT command from the broker (`FleetCommand.parse`, the first byte picking the topic).
///
/// Properties beyond "no trap":
/// - a parsed call's arguments are all valid (a PIN of 4 digits, a real date, a duration
///   in range, known event kinds), and its description never shows the PIN;
/// - a parsed call written back with `line()` parses to the same call;
/// - a failure's message is short, and its response line reads back as that response;
/// - a server line that parses as a response writes back to a line that parses the same.
func fuzzControlRequest(_ bytes: UnsafeRawBufferPointer) {
    switch ControlCall.parse(bytes) {
    case .success(let call):
        checkArguments(call.request)
        let line = call.line()
        Fuzz.require(!line.utf8.contains(UInt8(ascii: "\n")), "a request line with a newline: \(line)")
        guard case .success(let again) = ControlCall.parse(line) else {
            return Fuzz.require(false, "the written-back request does not parse: \(line)")
        }
        Fuzz.require(again == call, "the written-back request parses differently: \(call) / \(again)")
    case .failure(let failure):
        Fuzz.require(!failure.error.message.isEmpty && failure.error.message.utf8.count < 400,
                     "a failure message of \(failure.error.message.utf8.count) bytes")
        Fuzz.require([.malformedJSON, .tooLarge, .unsupportedVersion, .unknownCommand, .badArgument].contains(failure.error.code),
                     "a parse failure with code \(failure.error.code)")
        let line = failure.response.line()
        Fuzz.require(!line.utf8.contains(UInt8(ascii: "\n")), "a response line with a newline")
        switch Result(catching: { () throws(ControlError) in try ControlServerLine.parse(Array(line.utf8)) }) {
        case .success(.response(let response)):
            Fuzz.require(response == failure.response, "the failure response reads back differently: \(line)")
        default:
            Fuzz.require(false, "the failure response does not read back: \(line)")
        }
    }

    fuzzFleetCommand(bytes)

    // The client side: whatever the daemon (or something pretending to be it) sends.
    if case .response(let response)? = try? ControlServerLine.parse(bytes) {
        let line = response.line()
        switch Result(catching: { () throws(ControlError) in try ControlServerLine.parse(Array(line.utf8)) }) {
        case .success(.response(let again)):
            Fuzz.require(again == response, "a response reads back differently: \(line)")
        default:
            Fuzz.require(false, "a written-back response does not parse: \(line)")
        }
    }
}

/// What the daemon relies on once a request parsed.
/// An MQTT command payload: only the exact words parse, and a rejection — which is
/// logged — is one short line of printable text whatever the payload held.
func fuzzFleetCommand(_ bytes: UnsafeRawBufferPointer) {
    let topics = FleetTopics(topicPrefix: "kioskcam", discoveryPrefix: "homeassistant", deviceID: "board")
    let names = ["record", "snapshot", "stream", "reboot", "record/x", ""]
    let choice = Int(bytes.first ?? 0) % (names.count + 1)
    // The last choice: a command name from the broker, whatever bytes it holds.
    let name = choice < names.count ? names[choice] : String(decoding: bytes.dropFirst().prefix(16), as: UTF8.self)
    let payload = Array(bytes.dropFirst())
    switch FleetCommand.parse(topic: topics.commandPrefix + name, payload: payload, topics: topics) {
    case .success(let command):
        let word = String(decoding: payload, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines).uppercased()
        Fuzz.require(["", "ON", "OFF", "1", "0", "TRUE", "FALSE", "PRESS"].contains(word), "\(command) from \(payload)")
    case .failure(let rejection):
        let text = rejection.description
        Fuzz.require(text.utf8.count < 200 && !text.unicodeScalars.contains { $0.value < 32 || $0.value == 127 },
                     "a rejection that is not one short printable line: \(text.debugDescription)")
    }
}

func checkArguments(_ request: ControlRequest) {
    switch request {
    case .recordStart(_, let duration):
        if let duration { Fuzz.require(duration.isFinite && (0.1...86_400).contains(duration), "duration \(duration)") }
    case .list(let date):
        if let date {
            Fuzz.require(CalendarDate(folderName: date)?.folderName == date, "list date \(date) is not a date folder name")
        }
    case .pinSet(let pin):
        Fuzz.require(pin.utf8.count == 4 && pin.utf8.allSatisfy { (48...57).contains($0) }, "a PIN that is not 4 digits")
        Fuzz.require(!request.description.contains(pin) && !String(reflecting: request).contains(pin),
                     "the PIN shows in the description")
    case .subscribe(let kinds):
        if let kinds { Fuzz.require(kinds.isSubset(of: ControlEventKind.subscribable), "subscribed to \(kinds)") }
    case .cameraSet(let adjustment):
        Fuzz.require(!adjustment.isEmpty, "camera.set with no setting")
        for (name, value) in adjustment.settings {
            switch value {
            case .automatic: Fuzz.require(name != .torch, "torch set to auto")
            case .value(let number):
                Fuzz.require(number.isFinite, "\(name) is \(number)")
                if name == .zoom { Fuzz.require((1...16).contains(number), "zoom \(number)") }
                if name == .torch { Fuzz.require(number == 0 || number == 1, "torch \(number)") }
            }
        }
    case .broadcastStart(let destinations, let duration, let size):
        Fuzz.require((1...8).contains(destinations.count), "\(destinations.count) destinations")
        for destination in destinations {
            Fuzz.require((try? BroadcastDestination(parsing: destination)) != nil, "a destination that does not parse: \(destination)")
        }
        if let duration { Fuzz.require(duration.isFinite && (1...604_800).contains(duration), "duration \(duration)") }
        if let size { Fuzz.require(FrameSize(broadcastSize: size.description) == size, "size \(size)") }
    case .clipExport(let export):
        // The daemon joins `file` to its media root: it must never leave the library.
        Fuzz.require(LibraryLayout(root: "/media").recordingPath(relative: export.file)?.hasPrefix("/media/") == true
                     && !export.file.contains(".."), "clip.export file \(export.file.debugDescription)")
        for time in [export.from, export.to].compactMap({ $0 }) {
            Fuzz.require(time.isFinite && ClipExportRequest.timeRange.contains(time), "clip.export time \(time)")
        }
        if let from = export.from, let to = export.to { Fuzz.require(from < to, "clip.export \(from) to \(to)") }
        if let size = export.size { Fuzz.require(export.reencode && ClipExportRequest.isValidSize(size), "clip.export size \(size)") }
        if let bitrate = export.bitrateKbps { Fuzz.require(export.reencode && (50...20_000).contains(bitrate), "clip.export bitrate \(bitrate)") }
    case .status, .recordStop, .snapshot, .purge, .screenshot, .cameraGet, .eventStart, .eventStop, .uploadStatus, .uploadNow,
         .broadcastStop:
        break
    }
}

@main
enum Main {
    static func main() { Fuzz.main("FuzzControlRequest", fuzzControlRequest) }
}
