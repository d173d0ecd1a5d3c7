import KioskCore
import XCTest

final class LiveWaveformTests: XCTestCase {
    func levels(_ dBFS: Double, at nanoseconds: Int64) -> AudioLevels {
        AudioLevels(rmsDBFS: [dBFS - 6, dBFS], peakHoldDBFS: [0, 0], updatedAt: MonotonicInstant(nanoseconds: nanoseconds))
    }

    func testAmplitudeIsTheInverseOfTheMetersDecibels() {
        for amplitude in [1.0, 0.5, 0.1, 0.01, 0.001] {
            XCTAssertEqual(Double(LiveWaveform.amplitude(dBFS: AudioLevelMeter.dBFS(amplitude))), amplitude, accuracy: amplitude * 1e-5)
        }
        XCTAssertEqual(LiveWaveform.amplitude(dBFS: AudioLevelMeter.floorDBFS), 0, "the meter's floor is silence")
        XCTAssertEqual(LiveWaveform.amplitude(dBFS: .nan), 0)
        XCTAssertEqual(LiveWaveform.amplitude(dBFS: 6), 1, "above full scale is clipped")
    }

    func testOneColumnPerLevelUpdateFromTheLoudestChannelAndRepeatsIgnored() {
        var waveform = LiveWaveform()
        waveform.add(levels(-6.0206, at: 100))
        waveform.add(levels(-6.0206, at: 100))
        waveform.add(levels(-20, at: 200))
        XCTAssertEqual(waveform.amplitudes.count, 2, "a status repeating the same levels adds nothing")
        XCTAssertEqual(waveform.amplitudes[0], 0.5, accuracy: 1e-4)
        XCTAssertEqual(waveform.amplitudes[1], 0.1, accuracy: 1e-4)
        XCTAssertEqual(waveform.loudest, 0.5, accuracy: 1e-4)
        XCTAssertEqual(Array(waveform.columns).map(\.max), waveform.amplitudes)
        XCTAssertEqual(Array(waveform.columns).map(\.min), waveform.amplitudes.map { -$0 })
    }

    func testBarsGrowFromTheLeftScaledToTheLoudestWithInsets() {
        var waveform = LiveWaveform()
        for amplitude: Float in [0.2, 0.1, 0, 0.05] { waveform.add(amplitude: amplitude) }
        let rect = ScreenRect(x: 10, y: 20, width: 100, height: 50)
        let bars = waveform.bars(in: rect, inset: 5)
        XCTAssertEqual(bars.count, 4, "one pixel column per column while they fit")
        XCTAssertEqual(bars.map(\.x), [15, 16, 17, 18])
        // Inner area 90x40 at (15, 25): centre row 45, 19 rows either side; 0.2 is the loudest.
        XCTAssertEqual(bars[0], ScreenRect(x: 15, y: 26, width: 1, height: 39), "the loudest fills the height inside the insets")
        XCTAssertEqual(bars[1], ScreenRect(x: 16, y: 35, width: 1, height: 21))
        XCTAssertEqual(bars[2], ScreenRect(x: 17, y: 45, width: 1, height: 1), "silence is the centre row")
        XCTAssertEqual(bars[3], ScreenRect(x: 18, y: 40, width: 1, height: 11))
        for bar in bars { XCTAssertEqual(bar.intersection(rect.inset(by: 5)), bar, "bars stay inside the insets") }
    }

    func testBarsSqueezeToTheWidthKeepingTheLoudest() {
        var waveform = LiveWaveform()
        for index in 0..<300 { waveform.add(amplitude: index == 150 ? 1 : 0.25) }
        let bars = waveform.bars(in: ScreenRect(x: 0, y: 0, width: 100, height: 40), inset: 0)
        XCTAssertEqual(bars.count, 100)
        XCTAssertEqual(bars.filter { $0.height == 39 }.count, 1, "the one loud column survives the squeeze")
        XCTAssertEqual(bars[50].y, 1)
        XCTAssertEqual(waveform.bars(in: ScreenRect(x: 0, y: 0, width: 0, height: 40), inset: 0), [])
        XCTAssertEqual(LiveWaveform().bars(in: ScreenRect(x: 0, y: 0, width: 100, height: 40), inset: 2), [])
    }

    func testMemoryIsBoundedByMergingPairs() {
        var waveform = LiveWaveform()
        let updates = LiveWaveform.maximumColumns * 8 + 3
        for index in 0..<updates { waveform.add(amplitude: index == 5 ? 0.9 : Float(index % 7) / 100) }
        XCTAssertLessThanOrEqual(waveform.amplitudes.count, LiveWaveform.maximumColumns)
        XCTAssertGreaterThanOrEqual(waveform.amplitudes.count, LiveWaveform.maximumColumns / 2)
        // Halved at 2048, 4096, 8192 and 16384 updates: 16 a column now.
        XCTAssertEqual(waveform.updatesPerColumn, 16)
        XCTAssertEqual(waveform.amplitudes.first, 0.9, "merging keeps the louder neighbour")
        XCTAssertEqual(waveform.loudest, 0.9)
        XCTAssertEqual(waveform.amplitudes.count, LiveWaveform.maximumColumns / 2 + 1, "1024 merged, then 3 updates in a new one")
    }

    func testBadAmplitudesAreSilenceOrFullScale() {
        var waveform = LiveWaveform()
        waveform.add(amplitude: .nan)
        waveform.add(amplitude: -3)
        waveform.add(amplitude: 7)
        XCTAssertEqual(waveform.amplitudes, [0, 0, 1])
    }
}
