import Foundation
import FuzzSupport
import KioskSources

/// One datagram of the camera helper's channel (`CameraHelperMessage.decode`): what the
/// daemon reads from its camera helper, and the helper from the daemon. Properties beyond
/// "no trap": a decoded frame, release or counters message has counts and slots in range;
/// an opened message's format, when it has one, has a frame size;
/// every decoded message encodes again to bytes that decode to the same message; the
/// fixed-field messages encode back to the very bytes they came from.
func fuzzCameraHelper(_ bytes: UnsafeRawBufferPointer) {
    Fuzz.trace("datagram \(Array(bytes.prefix(64)))")
    guard let message = CameraHelperMessage.decode(bytes) else { return }
    switch message {
    case .frame(let frame):
        Fuzz.require(frame.slot >= 0 && frame.byteCount >= 0 && frame.counters.delivered >= 0, "frame \(frame)")
    case .release(let slot):
        Fuzz.require(slot >= 0, "release \(slot)")
    case .opened(let opened):
        if let format = opened.format { Fuzz.require(format.frameByteCount >= 0, "opened \(opened)") }
    case .counters(let counters):
        Fuzz.require([counters.delivered, counters.leased, counters.copied, counters.paced, counters.dropped, counters.corrupt]
            .allSatisfy { $0 >= 0 }, "counters \(counters)")
    default:
        break
    }
    guard let again = message.encoded() else {
        Fuzz.require(false, "\(message) does not encode")
        return
    }
    let decoded = again.withUnsafeBytes { CameraHelperMessage.decode($0) }
    Fuzz.require(decoded == message, "\(message) encodes to \(again.count) bytes that decode to \(String(describing: decoded))")
    switch message {
    case .frame, .release, .counters: Fuzz.require(again.elementsEqual(bytes), "\(message) does not encode to its own bytes")
    default: break
    }
}

@main
enum Main {
    static func main() { Fuzz.main("FuzzCameraHelper", fuzzCameraHelper) }
}
