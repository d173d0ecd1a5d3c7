import KioskCore
import XCTest

final class ChannelMixTests: XCTestCase {
    func testMonoAndStereoAreKeptAndWiderBecomesStereo() {
        XCTAssertEqual(ChannelMix.keptChannels(of: 1), 1)
        XCTAssertEqual(ChannelMix.keptChannels(of: 2), 2)
        XCTAssertEqual(ChannelMix.keptChannels(of: 6), 2)
        XCTAssertEqual(ChannelMix.keptChannels(of: 0), 1, "a stream that does not say is taken as mono")
    }

    func testStereoPassesThroughAndMonoAverages() {
        XCTAssertEqual(ChannelMix(channelNames: ["FL", "FR"], outputs: 2).weights, [[1, 0], [0, 1]])
        XCTAssertEqual(ChannelMix(channelNames: ["FL", "FR"], outputs: 1).weights, [[0.5, 0.5]])
        XCTAssertEqual(ChannelMix(channelNames: ["FC"], outputs: 2).weights, [[1], [1]], "mono feeds both sides")
    }

    func testFivePointOneFoldsSidesAndCentreAndDropsLFE() {
        // FFmpeg's 5.1 order: FL FR FC LFE BL BR.
        let mix = ChannelMix(channelNames: ["FL", "FR", "FC", "LFE", "BL", "BR"], outputs: 2)
        let third: Float = 1 / 3
        XCTAssertEqual(mix.weights[0], [third, 0, third, 0, third, 0])
        XCTAssertEqual(mix.weights[1], [0, third, third, 0, 0, third])
        for output in mix.weights {
            XCTAssertEqual(output.reduce(0, +), 1, accuracy: 1e-6, "full scale in cannot clip out")
        }
    }

    func testSidesByName() {
        XCTAssertEqual(ChannelMix.side(ofChannelNamed: "FLC"), .left)
        XCTAssertEqual(ChannelMix.side(ofChannelNamed: "TBR"), .right)
        XCTAssertEqual(ChannelMix.side(ofChannelNamed: "SL"), .left)
        XCTAssertEqual(ChannelMix.side(ofChannelNamed: "LFE2"), .none)
        XCTAssertEqual(ChannelMix.side(ofChannelNamed: "BC"), .both)
        XCTAssertEqual(ChannelMix.side(ofChannelNamed: "USR3"), .both)
        XCTAssertEqual(ChannelMix.side(ofChannelNamed: ""), .both)
    }

    func testUnnamedWideLayoutAveragesIntoBoth() {
        let mix = ChannelMix(channelNames: ["USR0", "USR1", "USR2"], outputs: 2)
        let third: Float = 1 / 3
        XCTAssertEqual(mix.weights, [[third, third, third], [third, third, third]])
        let lfeOnly = ChannelMix(channelNames: ["LFE", "LFE2", "LFE"], outputs: 2)
        XCTAssertEqual(lfeOnly.weights[0], [third, third, third], "LFE alone still sounds")
    }
}
