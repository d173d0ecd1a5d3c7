import XCTest
@testable import KioskCore

final class WaveformTests: XCTestCase {
    private let rate = 48_000

    /// 1 s of a 440 Hz sine at `amplitude`, 1 s of silence, 1 s of the sine: 3 s mono.
    private func toneSilenceTone(amplitude: Float = 0.5) -> [Float] {
        (0..<(3 * rate)).map { frame in
            guard frame < rate || frame >= 2 * rate else { return 0 }
            return amplitude * Float(sin(2 * Double.pi * 440 * Double(frame) / Double(rate)))
        }
    }

    /// Feeds `samples` to `reducer` in chunks of `chunk` (like decoded AAC frames).
    private func feed(_ reducer: inout WaveformReducer, _ samples: [Float], chunk: Int = 1024) {
        samples.withUnsafeBufferPointer { all in
            var start = 0
            while start < all.count {
                let end = min(all.count, start + chunk)
                reducer.add(UnsafeBufferPointer(rebasing: all[start..<end]))
                start = end
            }
        }
    }

    private func assertToneSilenceTone(_ columns: WaveformColumns, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(columns.count, 300, file: file, line: line)
        guard columns.count == 300 else { return }
        for index in Array(0..<100) + Array(200..<300) {
            XCTAssertEqual(columns[index].max, 0.5, accuracy: 0.02, "column \(index)", file: file, line: line)
            XCTAssertEqual(columns[index].min, -0.5, accuracy: 0.02, "column \(index)", file: file, line: line)
        }
        for index in 100..<200 {
            XCTAssertEqual(columns[index].max, 0, accuracy: 0.001, "column \(index)", file: file, line: line)
            XCTAssertEqual(columns[index].min, 0, accuracy: 0.001, "column \(index)", file: file, line: line)
        }
    }

    // MARK: Reducer

    func testToneSilenceToneWithKnownLength() {
        let samples = toneSilenceTone()
        var reducer = WaveformReducer(totalFrames: samples.count, columns: 300)
        feed(&reducer, samples)
        XCTAssertEqual(reducer.framesAdded, samples.count)
        assertToneSilenceTone(reducer.columns)
    }

    func testToneSilenceToneWithUnknownLengthRebins() {
        let samples = toneSilenceTone()
        var reducer = WaveformReducer(totalFrames: 0, columns: 300)
        XCTAssertNil(reducer.totalFrames)
        feed(&reducer, samples, chunk: 333)
        assertToneSilenceTone(reducer.columns)
    }

    func testInt16SamplesScaleToFullScale() {
        let samples = toneSilenceTone().map { Int16(($0 * 32768).rounded()) }
        var reducer = WaveformReducer(totalFrames: samples.count, columns: 300)
        samples.withUnsafeBufferPointer { reducer.add($0) }
        assertToneSilenceTone(reducer.columns)
        var extremes = WaveformReducer(totalFrames: 2, columns: 1)
        [Int16.min, Int16.max].withUnsafeBufferPointer { extremes.add($0) }
        XCTAssertEqual(extremes.columns[0].min, -1)
        XCTAssertEqual(extremes.columns[0].max, 32767 / 32768)
    }

    func testFramesAreAssignedByIndex() {
        // 10 frames into 4 columns: column = frame * 4 / 10 → 0,0,0,1,1,2,2,2,3,3.
        let samples: [Float] = (0..<10).map { Float($0) / 10 }
        for chunk in [1, 3, 10] {
            var reducer = WaveformReducer(totalFrames: 10, columns: 4)
            feed(&reducer, samples, chunk: chunk)
            let columns = Array(reducer.columns)
            XCTAssertEqual(columns.map(\.min), [0, 0.3, 0.5, 0.8], "chunks of \(chunk)")
            XCTAssertEqual(columns.map(\.max), [0.2, 0.4, 0.7, 0.9], "chunks of \(chunk)")
        }
    }

    func testRebinningIsExactUpToEightFramesPerColumn() {
        var state: UInt32 = 12345
        let samples: [Float] = (0..<2_000).map { _ in
            state = state &* 1_103_515_245 &+ 12345
            return Float(Int(state >> 16) % 2001 - 1000) / 1000
        }
        var known = WaveformReducer(totalFrames: samples.count, columns: 300)
        var unknown = WaveformReducer(totalFrames: -1, columns: 300)
        feed(&known, samples, chunk: 64)
        feed(&unknown, samples, chunk: 100)
        XCTAssertEqual(known.columns, unknown.columns)
    }

    func testRebinningLongRecordingKeepsEdgesWithinAQuarterColumn() {
        // 100 columns of 1000 frames; loud over frames 30 500 ..< 70 500, i.e. from the
        // middle of column 30 to the middle of column 70. Buckets end up 128 frames long,
        // so an edge may move by up to an eighth of a column.
        var reducer = WaveformReducer(totalFrames: 0, columns: 100)
        var samples = [Float](repeating: 0, count: 100_000)
        for index in 30_500..<70_500 { samples[index] = index % 2 == 0 ? 0.8 : -0.8 }
        feed(&reducer, samples, chunk: 4096)
        let loud = reducer.columns.indices.filter { reducer.columns[$0].max > 0.5 }
        XCTAssertEqual(loud.first ?? -1, 30, accuracy: 1)
        XCTAssertEqual(loud.last ?? -1, 70, accuracy: 1)
        XCTAssertEqual(loud.count, loud.last.map { $0 - loud[0] + 1 }, "no gaps")
        XCTAssertTrue(reducer.columns.filter { $0.max <= 0.5 }.allSatisfy { $0.max == 0 && $0.min == 0 })
    }

    func testFewerFramesThanColumnsSpreadEachFrame() {
        // 3 frames across 6 columns: each frame covers two.
        for totalFrames in [3, 0] {
            var reducer = WaveformReducer(totalFrames: totalFrames, columns: 6)
            feed(&reducer, [0.1, -0.2, 0.3], chunk: 1)
            XCTAssertEqual(reducer.columns.map(\.max), [0.1, 0.1, -0.2, -0.2, 0.3, 0.3], "totalFrames \(totalFrames)")
        }
    }

    func testShortFileLeavesTheRestSilentAndLongFileEndsInTheLastColumn() {
        var short = WaveformReducer(totalFrames: 100, columns: 4)
        feed(&short, [Float](repeating: 0.5, count: 50))
        XCTAssertEqual(short.columns.map(\.max), [0.5, 0.5, 0, 0])

        var long = WaveformReducer(totalFrames: 100, columns: 4)
        feed(&long, [Float](repeating: 0.1, count: 100) + [0.9, -0.9], chunk: 7)
        XCTAssertEqual(long.framesAdded, 102)
        XCTAssertEqual(Array(long.columns).map(\.max), [0.1, 0.1, 0.1, 0.9])
        XCTAssertEqual(Array(long.columns).map(\.min), [0.1, 0.1, 0.1, -0.9])
    }

    func testNothingAddedIsSilenceAndNaNIsIgnored() {
        XCTAssertEqual(WaveformReducer(totalFrames: 1000, columns: 5).columns, WaveformColumns(silentCount: 5))
        XCTAssertEqual(WaveformReducer(totalFrames: 0, columns: 5).columns, WaveformColumns(silentCount: 5))
        var reducer = WaveformReducer(totalFrames: 3, columns: 1)
        feed(&reducer, [0.25, .nan, -0.25])
        XCTAssertEqual(reducer.columns[0].min, -0.25)
        XCTAssertEqual(reducer.columns[0].max, 0.25)
    }

    // MARK: Raster

    private let colours = WaveformColours.standard

    /// The rows of column `x` that are not background.
    private func paintedRows(_ pixels: [UInt8], width: Int, height: Int, x: Int, bytesPerPixel: Int = 3) -> [Int] {
        (0..<height).filter { y in
            let offset = (y * width + x) * bytesPerPixel
            return RGBColour(red: pixels[offset], green: pixels[offset + 1], blue: pixels[offset + 2]) != colours.background
        }
    }

    private func colour(_ pixels: [UInt8], width: Int, x: Int, y: Int, bytesPerPixel: Int = 3) -> RGBColour {
        let offset = (y * width + x) * bytesPerPixel
        return RGBColour(red: pixels[offset], green: pixels[offset + 1], blue: pixels[offset + 2])
    }

    func testHalfScaleColumnCoversRows25To75AndSilenceOnlyTheCentreLine() {
        let columns = WaveformColumns([(min: -0.5, max: 0.5), (min: 0, max: 0)])
        var pixels: [UInt8] = []
        WaveformRaster.render(columns: columns, width: 2, height: 100, into: &pixels)
        XCTAssertEqual(pixels.count, 2 * 100 * 3)
        XCTAssertEqual(paintedRows(pixels, width: 2, height: 100, x: 0), Array(25...75))
        XCTAssertEqual(colour(pixels, width: 2, x: 0, y: 50), colours.waveform)
        XCTAssertEqual(paintedRows(pixels, width: 2, height: 100, x: 1), [50])
        XCTAssertEqual(colour(pixels, width: 2, x: 1, y: 50), colours.centreLine)
        XCTAssertEqual(colour(pixels, width: 2, x: 1, y: 0), colours.background)
    }

    func testSymmetricSignalIsMirroredAroundTheCentreLine() {
        let amplitudes: [Float] = (0..<64).map { Float($0) / 63 }
        let columns = WaveformColumns(amplitudes.map { (min: -$0, max: $0) })
        let height = 101
        var pixels: [UInt8] = []
        WaveformRaster.render(columns: columns, width: 64, height: height, into: &pixels)
        for x in 0..<64 {
            let rows = paintedRows(pixels, width: 64, height: height, x: x)
            let centre = height / 2
            XCTAssertEqual(rows.map { 2 * centre - $0 }.sorted(), rows, "column \(x) is not mirrored")
            XCTAssertTrue(rows.contains(centre), "column \(x)")
            XCTAssertEqual(rows.count, rows.last.map { $0 - rows[0] + 1 }, "column \(x) has a gap")
        }
        XCTAssertEqual(paintedRows(pixels, width: 64, height: height, x: 63), Array(0...100))
    }

    func testAsymmetricColumnAndClipping() {
        let columns = WaveformColumns([(min: 0.2, max: 0.6), (min: -3, max: 3), (min: .nan, max: .nan)])
        var pixels: [UInt8] = []
        WaveformRaster.render(columns: columns, width: 3, height: 100, into: &pixels)
        // Entirely above the centre: rows 20…40, and the centre line still shows.
        XCTAssertEqual(paintedRows(pixels, width: 3, height: 100, x: 0), Array(20...40) + [50])
        XCTAssertEqual(paintedRows(pixels, width: 3, height: 100, x: 1), Array(0...99))
        XCTAssertEqual(paintedRows(pixels, width: 3, height: 100, x: 2), [50])
    }

    func testRGBAIsOpaqueAndColumnsAreFittedToTheWidth() {
        // 4 columns drawn 2 pixels wide: each pixel shows the extent of two columns.
        let columns = WaveformColumns([(min: -0.1, max: 0.1), (min: -0.5, max: 0.2), (min: 0, max: 0), (min: 0, max: 0)])
        var pixels = [UInt8](repeating: 7, count: 5)
        WaveformRaster.render(columns: columns, width: 2, height: 20, layout: .rgba, into: &pixels)
        XCTAssertEqual(pixels.count, 2 * 20 * 4)
        XCTAssertTrue(stride(from: 3, to: pixels.count, by: 4).allSatisfy { pixels[$0] == 255 })
        XCTAssertEqual(paintedRows(pixels, width: 2, height: 20, x: 0, bytesPerPixel: 4), Array(8...15))
        XCTAssertEqual(paintedRows(pixels, width: 2, height: 20, x: 1, bytesPerPixel: 4), [10])

        // 2 columns drawn 4 pixels wide: each shown twice.
        WaveformRaster.render(columns: WaveformColumns([(min: -1, max: 1), (min: 0, max: 0)]), width: 4, height: 20,
                              into: &pixels)
        XCTAssertEqual(pixels.count, 4 * 20 * 3)
        XCTAssertEqual((0..<4).map { paintedRows(pixels, width: 4, height: 20, x: $0).count }, [20, 20, 1, 1])
    }

    func testNoColumnsIsAFlatLineAndBoundsAreChecked() {
        var pixels: [UInt8] = []
        WaveformRaster.render(columns: WaveformColumns([]), width: 5, height: 9, into: &pixels)
        XCTAssertTrue((0..<5).allSatisfy { paintedRows(pixels, width: 5, height: 9, x: $0) == [4] })
        WaveformRaster.render(columns: WaveformColumns([]), width: 0, height: 9, into: &pixels)
        XCTAssertEqual(pixels, [])
        XCTAssertTrue(WaveformRaster.allows(FrameSize(width: 800, height: 200)))
        XCTAssertTrue(WaveformRaster.allows(FrameSize(width: 16, height: 16)))
        XCTAssertTrue(WaveformRaster.allows(FrameSize(width: 8192, height: 2048)))
        XCTAssertFalse(WaveformRaster.allows(FrameSize(width: 15, height: 200)))
        XCTAssertFalse(WaveformRaster.allows(FrameSize(width: 800, height: 2049)))
        XCTAssertEqual(WaveformColours.standard.background.description, "#12161C")
    }
}
