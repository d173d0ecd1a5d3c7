import CALSA
import Glibc

/// One capture PCM of a sound card, as `kioskcam probe` reports it.
public struct ALSACaptureDevice: Sendable, Codable, Equatable {
    /// The name to configure: "hw:1,0" (use "plughw:1,0" for conversion and resampling).
    public var name: String
    public var card: Int
    /// The card's id, usable in names: "Loopback" → "hw:Loopback,0".
    public var cardID: String
    /// The card's human name: "Loopback".
    public var cardName: String
    public var device: Int
    /// The PCM's name: "Loopback PCM", "USB Audio".
    public var deviceName: String
    /// Substreams, i.e. how many programs may capture from it at once.
    public var subdevices: Int
    /// What it can do; nil when it could not be opened (see `error`).
    public var capabilities: ALSAPCMCapabilities?
    /// Why it could not be opened or read (busy, permission), with the fix.
    public var error: String?

    public init(name: String, card: Int, cardID: String, cardName: String, device: Int, deviceName: String,
                subdevices: Int, capabilities: ALSAPCMCapabilities?, error: String?) {
        self.name = name
        self.card = card
        self.cardID = cardID
        self.cardName = cardName
        self.device = device
        self.deviceName = deviceName
        self.subdevices = subdevices
        self.capabilities = capabilities
        self.error = error
    }
}

/// Lists the sound cards' capture devices (what `arecord -l` shows, plus their ranges).
public enum ALSADevices {
    /// Every capture PCM of every card, each opened briefly to read its ranges.
    ///
    /// Never throws: a card or device that cannot be read is listed with `error` set, and
    /// a machine without sound cards gives an empty list.
    public static func captureDevices() -> [ALSACaptureDevice] {
        var devices: [ALSACaptureDevice] = []
        var card: Int32 = -1
        while snd_card_next(&card) >= 0, card >= 0 {
            devices += captureDevices(ofCard: card)
        }
        return devices
    }

    private static func captureDevices(ofCard card: Int32) -> [ALSACaptureDevice] {
        let controlName = "hw:\(card)"
        var control: OpaquePointer?
        let opened = snd_ctl_open(&control, controlName, 0)
        guard opened >= 0, let control else {
            let error = ALSAError(device: controlName, operation: .openControl, result: opened < 0 ? opened : -ENODEV)
            return [ALSACaptureDevice(name: controlName, card: Int(card), cardID: "", cardName: "", device: -1,
                                      deviceName: "", subdevices: 0, capabilities: nil, error: error.description)]
        }
        defer { snd_ctl_close(control) }

        var cardID = "", cardName = ""
        var cardInfo: OpaquePointer?
        if snd_ctl_card_info_malloc(&cardInfo) >= 0, let cardInfo {
            if snd_ctl_card_info(control, cardInfo) >= 0 {
                cardID = String(cString: snd_ctl_card_info_get_id(cardInfo))
                cardName = String(cString: snd_ctl_card_info_get_name(cardInfo))
            }
            snd_ctl_card_info_free(cardInfo)
        }

        var pcmInfo: OpaquePointer?
        guard snd_pcm_info_malloc(&pcmInfo) >= 0, let pcmInfo else { return [] }
        defer { snd_pcm_info_free(pcmInfo) }

        var devices: [ALSACaptureDevice] = []
        var device: Int32 = -1
        while snd_ctl_pcm_next_device(control, &device) >= 0, device >= 0 {
            snd_pcm_info_set_device(pcmInfo, UInt32(device))
            snd_pcm_info_set_subdevice(pcmInfo, 0)
            snd_pcm_info_set_stream(pcmInfo, SND_PCM_STREAM_CAPTURE)
            let result = snd_ctl_pcm_info(control, pcmInfo)
            // ENOENT: this PCM plays only.
            if result == -ENOENT { continue }
            let name = "hw:\(card),\(device)"
            var entry = ALSACaptureDevice(name: name, card: Int(card), cardID: cardID, cardName: cardName,
                                          device: Int(device), deviceName: "", subdevices: 0,
                                          capabilities: nil, error: nil)
            if result < 0 {
                entry.error = ALSAError(device: name, operation: .readCapabilities, result: result).description
            } else {
                entry.deviceName = String(cString: snd_pcm_info_get_name(pcmInfo))
                entry.subdevices = Int(snd_pcm_info_get_subdevices_count(pcmInfo))
                do {
                    let pcm = try PCMHandle(openingCaptureOf: name)
                    entry.capabilities = try pcm.capabilities()
                } catch {
                    entry.error = error.description
                }
            }
            devices.append(entry)
        }
        return devices
    }
}
