import CALSA

/// What a capture PCM can do, read from its unrestricted hardware parameters.
public struct ALSAPCMCapabilities: Sendable, Codable, Equatable {
    /// The rates `kioskcam probe` checks one by one.
    public static let standardRates = [8000, 16000, 22050, 32000, 44100, 48000, 96000]

    public var minRate: Int
    public var maxRate: Int
    /// Which of `standardRates` the device accepts.
    public var rates: [Int]
    public var minChannels: Int
    public var maxChannels: Int
    /// Whether the device offers signed 16-bit little-endian samples (what kioskcam records).
    public var supportsS16: Bool
    public var minPeriodMicroseconds: Int
    public var maxPeriodMicroseconds: Int

    public init(minRate: Int, maxRate: Int, rates: [Int], minChannels: Int, maxChannels: Int,
                supportsS16: Bool, minPeriodMicroseconds: Int = 0, maxPeriodMicroseconds: Int = 0) {
        self.minRate = minRate
        self.maxRate = maxRate
        self.rates = rates
        self.minChannels = minChannels
        self.maxChannels = maxChannels
        self.supportsS16 = supportsS16
        self.minPeriodMicroseconds = minPeriodMicroseconds
        self.maxPeriodMicroseconds = maxPeriodMicroseconds
    }

    /// Reads the ranges of `params` (fresh from `snd_pcm_hw_params_any`); `test_*` leave it unchanged.
    init(pcm: OpaquePointer, params: borrowing HardwareParameters) {
        var low: UInt32 = 0, high: UInt32 = 0, direction: Int32 = 0
        snd_pcm_hw_params_get_rate_min(params.raw, &low, &direction)
        snd_pcm_hw_params_get_rate_max(params.raw, &high, &direction)
        minRate = Int(low)
        maxRate = Int(high)
        rates = Self.standardRates.filter { snd_pcm_hw_params_test_rate(pcm, params.raw, UInt32($0), 0) == 0 }
        snd_pcm_hw_params_get_channels_min(params.raw, &low)
        snd_pcm_hw_params_get_channels_max(params.raw, &high)
        minChannels = Int(low)
        maxChannels = Int(high)
        supportsS16 = snd_pcm_hw_params_test_format(pcm, params.raw, SND_PCM_FORMAT_S16_LE) == 0
        snd_pcm_hw_params_get_period_time_min(params.raw, &low, &direction)
        snd_pcm_hw_params_get_period_time_max(params.raw, &high, &direction)
        minPeriodMicroseconds = Int(low)
        maxPeriodMicroseconds = Int(high)
    }

    /// "8000–48000 Hz (of the usual rates: 8000, 16000, 44100, 48000)".
    var rateText: String {
        let range = minRate == maxRate ? "\(minRate) Hz" : "\(minRate)–\(maxRate) Hz"
        let usual = rates.isEmpty ? "none of the usual rates" : "of the usual rates: " + rates.map(String.init).joined(separator: ", ")
        return "\(range) (\(usual))"
    }

    /// "1–2 channels".
    var channelText: String {
        minChannels == maxChannels
            ? "\(minChannels) channel\(minChannels == 1 ? "" : "s")"
            : "\(minChannels)–\(maxChannels) channels"
    }

    /// "5.3–170.7 ms".
    var periodText: String {
        func ms(_ microseconds: Int) -> String {
            let tenths = (microseconds + 50) / 100
            return tenths % 10 == 0 ? "\(tenths / 10)" : "\(tenths / 10).\(tenths % 10)"
        }
        return "\(ms(minPeriodMicroseconds))–\(ms(maxPeriodMicroseconds)) ms"
    }
}
