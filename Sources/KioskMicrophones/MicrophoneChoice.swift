import KioskALSA
import KioskCore
import KioskSources
import Logging

/// Opens the microphone `microphone.source` names (ALSA, the built-in tone or silence, a
/// WAV file, or none) and says which it chose. A module of its own, under the daemon,
/// `record` and the broadcast alike, so that kioskcam-broadcast links ALSA without the
/// daemon's other devices.
public enum MicrophoneChoice {
    /// - Returns: nil for `none`.
    /// - Throws: `MicrophoneError` naming the device and the cause.
    public static func open(_ configuration: Configuration, realtime: Bool, logger: Logger) throws(MicrophoneError) -> AudioSource? {
        let mic = configuration.microphone
        let format = AudioFormat(sampleRate: mic.sampleRate, channels: mic.channels)
        switch mic.source {
        case .alsa(let device):
            return try openALSA(device, format: format, logger: logger)
        case .automatic:
            if !ALSADevices.captureDevices().isEmpty {
                return try openALSA("default", format: format, logger: logger)
            }
            logger.notice("microphone: no sound card found; using the built-in tone, \(Int(mic.toneFrequency)) Hz, \(format)")
            return ToneMicrophone(format: format, frequency: mic.toneFrequency)
        case .none:
            logger.info("microphone: none (recording without sound)")
            return nil
        case .tone:
            logger.notice("microphone: built-in tone, \(Int(mic.toneFrequency)) Hz, \(format) (as configured)")
            return ToneMicrophone(format: format, frequency: mic.toneFrequency)
        case .silence:
            logger.notice("microphone: built-in silence, \(format) (as configured)")
            return ToneMicrophone(format: format, frequency: nil)
        case .wavFile(let path):
            do {
                let source = try WAVFileMicrophone(path: path, realtime: realtime)
                logger.info("microphone: \(path), \(source.format)")
                return source
            } catch {
                throw MicrophoneError(error.description)
            }
        }
    }

    private static func openALSA(_ device: String, format: AudioFormat, logger: Logger) throws(MicrophoneError) -> AudioSource {
        do {
            let microphone = try ALSAMicrophone(device: device, format: format)
            microphone.onDiagnostic = { [logger] message in logger.warning("microphone \(device): \(message)") }
            logger.info("microphone: ALSA \(device), \(microphone.format), \(microphone.periodFrames)-frame periods")
            return microphone
        } catch {
            throw MicrophoneError(error.description)
        }
    }

}

/// A microphone that cannot be opened, said so that a person knows what to do.
public struct MicrophoneError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
