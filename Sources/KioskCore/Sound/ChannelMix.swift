/// How a sound's channels become the one or two that kioskcam hands on: the waveform
/// wants mono; a WAV export, `kioskcam play` and a re-encoded clip keep a mono or stereo
/// source as it is and fold anything wider (5.1, 7.1) into stereo, so a sound card and
/// the AAC encoder always get a layout they take.
///
/// Each output is the plain average of the inputs that feed it: it cannot clip, and a
/// stereo source comes out sample for sample.
public struct ChannelMix: Sendable, Equatable {
    /// Where an input channel goes when folded to stereo.
    public enum Side: Sendable, Equatable {
        case left, right
        /// Centre and unnamed channels feed both sides.
        case both
        /// The LFE (subwoofer) channel is left out, as a stereo downmix does.
        case none
    }

    public let inputs: Int
    public let outputs: Int
    /// `weights[output][input]`.
    public let weights: [[Float]]

    /// The mix of `channelNames` (libavutil's short names, "FL", "FR", "FC", "LFE", …)
    /// into `outputs` channels.
    /// - Parameters:
    ///   - channelNames: One per input channel, in the frame's order.
    ///   - outputs: 1 (mono) or 2 (stereo); anything else is taken as the nearer of them.
    public init(channelNames: [String], outputs: Int) {
        let inputs = max(1, channelNames.count)
        let outputs = min(2, max(1, outputs))
        self.inputs = inputs
        self.outputs = outputs
        if outputs == 1 || inputs == 1 {
            // Mono from anything, or one channel to both sides.
            weights = Array(repeating: Array(repeating: 1 / Float(inputs), count: inputs), count: outputs)
        } else if inputs == 2 {
            weights = [[1, 0], [0, 1]]
        } else {
            var sides = channelNames.map(Self.side(ofChannelNamed:))
            // A layout of LFE alone still has to make a sound.
            if sides.allSatisfy({ $0 == .none }) { sides = sides.map { _ in .both } }
            weights = [Side.left, .right].map { side in
                let feeds = sides.map { $0 == side || $0 == .both }
                let count = Float(max(1, feeds.filter { $0 }.count))
                return feeds.map { $0 ? 1 / count : 0 }
            }
        }
    }

    /// The channels a stream keeps when handed on as sound to hear: its own 1 or 2, stereo
    /// for more.
    public static func keptChannels(of channels: Int) -> Int { min(2, max(1, channels)) }

    /// The side of a channel by libavutil's name: names ending in L (FL, BL, SL, TFL, WL)
    /// or LC (FLC) are left, R or RC right, LFE/LFE2 none; centre and others both.
    public static func side(ofChannelNamed name: String) -> Side {
        let upper = name.uppercased()
        if upper.hasPrefix("LFE") { return .none }
        if upper.hasSuffix("L") || upper.hasSuffix("LC") { return .left }
        if upper.hasSuffix("R") || upper.hasSuffix("RC") { return .right }
        return .both
    }
}
