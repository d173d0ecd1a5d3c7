import CALSA
import Glibc
import KioskCore

/// A failed alsa-lib call on one device: what was attempted, ALSA's own error, and what to do.
///
/// Every negative alsa-lib return code is turned into this type in
/// `init(device:operation:result:offered:)` and nowhere else, so each message names the
/// device, the step and the fix the same way (the rendering is `DeviceError`'s):
///
///     open for capture failed for hw:7,0: No such file or directory (ENOENT). The device is missing:
///     list capture devices with `arecord -l` or `kioskcam probe`; set microphone.source to "alsa:NAME".
public typealias ALSAError = DeviceError<ALSAErrorCode>

/// What kind of trouble, for callers that react differently (e.g. retry later when busy).
public enum ALSAErrorCode: DeviceErrorCode {
    /// The steps of opening and reading a capture device, a closed set.
    public typealias Call = ALSAOperation

    /// ENOENT/ENODEV/ENXIO: no such device, or it was unplugged.
    case deviceMissing
    /// EBUSY: another program holds the device.
    case busy
    /// EACCES/EPERM: the user may not open the device node.
    case permissionDenied
    /// The device cannot capture in the requested format, rate, channels or period.
    case unsupported
    /// `start` on a microphone that is already capturing (EBUSY) or already stopped (EBADFD).
    case invalidState
    case other
}

/// The step that failed; the `set…` cases are what the device may refuse.
public enum ALSAOperation: Hashable, Sendable, CustomStringConvertible {
    case loadConfiguration
    case open
    case readCapabilities
    case setAccess
    case setSampleFormat
    case setChannels(Int)
    case setSampleRate(Int)
    case setPeriod(milliseconds: Int)
    case setBufferSize
    case applyHardwareParameters
    case applySoftwareParameters
    case start
    case read
    case recover
    case openControl
    case createThread
    /// The player's steps.
    case openPlayback
    case write
    case pause
    case drain
    /// Dropping what is queued and preparing the device again, for a seek.
    case restartPlayback

    public var description: String {
        switch self {
        case .loadConfiguration: "load the ALSA configuration"
        case .open: "open for capture"
        case .readCapabilities: "read the device's capabilities"
        case .setAccess: "set interleaved read/write access"
        case .setSampleFormat: "set sample format S16_LE"
        case .setChannels(let channels): "set \(channels) channel\(channels == 1 ? "" : "s")"
        case .setSampleRate(let rate): "set sample rate \(rate) Hz"
        case .setPeriod(let milliseconds): "set a period of about \(milliseconds) ms"
        case .setBufferSize: "set the buffer size"
        case .applyHardwareParameters: "apply the hardware parameters"
        case .applySoftwareParameters: "apply the software parameters (timestamps)"
        case .start: "start capture"
        case .read: "read audio"
        case .recover: "recover after an overrun or suspend"
        case .openControl: "open the card's control device"
        case .createThread: "create the capture thread"
        case .openPlayback: "open for playback"
        case .write: "play audio"
        case .pause: "pause or resume playback"
        case .drain: "finish playback (drain)"
        case .restartPlayback: "prepare playback again after a seek"
        }
    }

    /// Whether this is one of the player's steps (the hints then speak of `aplay -l` and `--device`).
    var isPlayback: Bool {
        switch self {
        case .openPlayback, .write, .pause, .drain, .restartPlayback: true
        default: false
        }
    }

    /// Whether the device itself may refuse this value (so the hint lists what it offers).
    var isNegotiation: Bool {
        switch self {
        case .setAccess, .setSampleFormat, .setChannels, .setSampleRate, .setPeriod, .setBufferSize: true
        default: false
        }
    }
}

extension DeviceError where Code == ALSAErrorCode {
    /// alsa-lib's own error codes (`SND_ERROR_BEGIN`), which are no errno.
    static var alsaCodesBegin: Int32 { 500_000 }

    /// Maps an alsa-lib failure; the single place where return codes become error codes and hints.
    /// - Parameters:
    ///   - device: The ALSA device name as configured ("hw:1,0", "plughw:1,0", "default").
    ///   - operation: The step that failed.
    ///   - result: alsa-lib's negative return code, a negated errno (a positive errno is accepted too).
    ///   - offered: What the device supports, for negotiation failures.
    public init(device: String, operation: ALSAOperation, result: Int32, offered: ALSAPCMCapabilities? = nil) {
        let result = result > 0 ? -result : result
        let words = String(cString: snd_strerror(result))
        let errno = -result
        let code: Code
        let hint: String?
        switch errno {
        case EBUSY where operation == .start, EBADFD where operation == .start:
            code = .invalidState
            hint = errno == EBUSY
                ? "This microphone is already capturing; stop() it first."
                : "This microphone was stopped and its device closed; open a new ALSAMicrophone."
        // EINVAL from open: the name resolves to no card ("hw:99,0").
        case let missing where operation.isPlayback
            && (missing == ENOENT || missing == ENODEV || missing == ENXIO || (missing == EINVAL && operation == .openPlayback)):
            code = .deviceMissing
            hint = "The playback device is missing: list playback devices with `aplay -l`; "
                + "play through one with --device alsa:NAME (e.g. alsa:default or alsa:plughw:0,0)."
        case EBUSY where operation.isPlayback:
            code = .busy
            hint = "The playback device is busy: another program is playing on it; stop that program, "
                + "or play through a mixing device (--device alsa:default or alsa:dmix)."
        case ENOENT, ENODEV, ENXIO:
            code = .deviceMissing
            hint = operation == .read || operation == .recover
                ? "The device disappeared (unplugged?): reconnect it; list capture devices with `arecord -l` or `kioskcam probe`; set microphone.source to \"alsa:NAME\" (e.g. alsa:plughw:1,0)."
                : "The device is missing: list capture devices with `arecord -l` or `kioskcam probe`; set microphone.source to \"alsa:NAME\" (e.g. alsa:plughw:1,0)."
        case EBUSY:
            code = .busy
            hint = "The device is busy: another program is using it; stop it or use a dsnoop/`plughw:` device."
        case EACCES, EPERM:
            code = .permissionDenied
            hint = "Permission denied: add the user to the `audio` group (`usermod -aG audio USER`, then log in again)."
        default:
            if operation.isNegotiation {
                code = .unsupported
                hint = Self.unsupportedHint(device: device, operation: operation, offered: offered)
            } else if operation == .loadConfiguration {
                code = .other
                hint = "Check the ALSA configuration text (asoundrc syntax)."
            } else {
                code = .other
                hint = nil
            }
        }
        // alsa-lib's own codes have words but no errno name.
        self.init(code, subject: device, call: operation, errno: errno < Self.alsaCodesBegin ? errno : nil,
                  systemMessage: words, hint: hint)
    }

    /// Names what the device offers and the `plughw:` alternative that converts for us.
    static func unsupportedHint(device: String, operation: ALSAOperation, offered: ALSAPCMCapabilities?) -> String {
        let plug = plugDeviceName(for: device)
        let convert = "or use `\(plug)` to let ALSA convert"
        guard let offered else {
            return "The device refuses this setting; \(convert)."
        }
        switch operation {
        case .setSampleRate:
            return "The device offers \(offered.rateText); set microphone.sample_rate to one of those, "
                + "or use `\(plug)` to let ALSA resample."
        case .setChannels:
            return "The device offers \(offered.channelText); set microphone.channels to one of those, \(convert)."
        case .setSampleFormat, .setAccess:
            return "The device does not offer interleaved S16_LE samples; \(convert)."
        case .setPeriod:
            return "The device offers periods of \(offered.periodText); use a dsnoop or `\(plug)` device "
                + "with periods of 20–50 ms."
        default:
            return "The device offers \(offered.rateText) and \(offered.channelText); \(convert)."
        }
    }

    /// "hw:1,0" → "plughw:1,0"; other names get the generic form.
    static func plugDeviceName(for device: String) -> String {
        if device.hasPrefix("hw:") { return "plug" + device }
        if device.hasPrefix("plughw:") { return device }
        return "plughw:CARD,DEVICE"
    }
}
