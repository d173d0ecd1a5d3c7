import KioskCore
import XCTest

final class MediaViewLayoutTests: XCTestCase {
    let layout = MediaViewLayout(size: ScreenSize(width: 800, height: 480))

    func centre(_ rect: ScreenRect) -> ScreenPoint { ScreenPoint(x: rect.x + rect.width / 2, y: rect.y + rect.height / 2) }

    func testCellsFitTheScreenWithoutOverlapping() {
        for size in [ScreenSize(width: 800, height: 480), ScreenSize(width: 480, height: 800), ScreenSize(width: 320, height: 240)] {
            let layout = MediaViewLayout(size: size)
            XCTAssertGreaterThan(layout.cellsPerPage, 0, "\(size)")
            XCTAssertGreaterThan(layout.daysPerPage, 0, "\(size)")
            let screen = ScreenRect(x: 0, y: 0, width: size.width, height: size.height)
            for (i, cell) in layout.cells.enumerated() {
                XCTAssertEqual(cell.intersection(screen), cell, "cell \(i) leaves the screen \(size)")
                XCTAssertTrue(cell.intersection(layout.header).isEmpty, "cell \(i) under the header \(size)")
                for other in layout.cells[(i + 1)...] { XCTAssertTrue(cell.intersection(other).isEmpty, "\(size)") }
            }
            for button in [layout.closeButton, layout.skipBackButton, layout.playPauseButton, layout.skipForwardButton] {
                XCTAssertEqual(button.intersection(screen), button, "\(size)")
                XCTAssertTrue(button.intersection(layout.scrubberTrack).isEmpty)
                XCTAssertTrue(button.intersection(layout.picture).isEmpty)
            }
        }
        // 800x480 holds a useful grid: 4 columns of 192-wide thumbnails, 2 rows.
        XCTAssertEqual(layout.cellsPerPage, 8)
    }

    func testHitTestingFindsWhatWasDrawn() {
        XCTAssertEqual(layout.target(at: centre(layout.cells[3]), on: .day, count: 8), .item(3))
        // A cell without an entry on the page is nothing.
        XCTAssertNil(layout.target(at: centre(layout.cells[3]), on: .day, count: 3))
        XCTAssertEqual(layout.target(at: centre(layout.dayRows[1]), on: .days, count: 2), .day(1))
        XCTAssertEqual(layout.target(at: centre(layout.backButton), on: .days, count: 0), .back)
        XCTAssertEqual(layout.target(at: centre(layout.nextPageButton), on: .day, count: 0), .nextPage)
        XCTAssertEqual(layout.target(at: centre(layout.playPauseButton), on: .player, count: 0), .playPause)
        XCTAssertEqual(layout.target(at: centre(layout.scrubberTrack), on: .player, count: 0), .scrubber)
        XCTAssertEqual(layout.target(at: centre(layout.skipBackButton), on: .player, count: 0), .skipBack)
        XCTAssertNil(layout.target(at: centre(layout.picture), on: .player, count: 0))
        XCTAssertEqual(layout.target(at: centre(layout.backButton), on: .photo, count: 0), .close)
    }

    func testPictureIsLetterBoxedWithEvenSides() {
        let area = ScreenRect(x: 0, y: 0, width: 800, height: 390)
        let wide = MediaViewLayout.fitted(FrameSize(width: 1280, height: 720), in: area)
        XCTAssertEqual(wide.height, 390 & ~1)
        XCTAssertEqual(wide.width, 692)  // 390 * 16 / 9 = 693 → even
        XCTAssertEqual(wide.x, (800 - 692) / 2)
        let tall = MediaViewLayout.fitted(FrameSize(width: 480, height: 800), in: area)
        XCTAssertEqual(tall.height, 390 & ~1)
        XCTAssertLessThan(tall.width, 800)
        XCTAssertTrue(MediaViewLayout.fitted(FrameSize(width: 0, height: 720), in: area).isEmpty)
    }
}

final class PlaybackScrubberTests: XCTestCase {
    func testMapsBothWaysAndClamps() {
        let scrubber = PlaybackScrubber(track: ScreenRect(x: 100, y: 0, width: 601, height: 20), duration: 60)
        XCTAssertEqual(scrubber.seconds(atX: 100), 0)
        XCTAssertEqual(scrubber.seconds(atX: 400), 30, accuracy: 1e-9)
        XCTAssertEqual(scrubber.seconds(atX: 700), 60, accuracy: 1e-9)
        XCTAssertEqual(scrubber.seconds(atX: -50), 0)
        XCTAssertEqual(scrubber.seconds(atX: 5000), 60)
        XCTAssertEqual(scrubber.x(forSeconds: 30), 400)
        XCTAssertEqual(scrubber.x(forSeconds: 600), 700)
        XCTAssertEqual(scrubber.x(forSeconds: .nan), 100)
        XCTAssertEqual(scrubber.skip(from: 55, by: 10), 60)
        XCTAssertEqual(scrubber.skip(from: 5, by: -10), 0)
        XCTAssertEqual(scrubber.skip(from: 20, by: 10), 30)
    }

    func testUnknownLengthDoesNothing() {
        let scrubber = PlaybackScrubber(track: ScreenRect(x: 0, y: 0, width: 100, height: 20), duration: .nan)
        XCTAssertEqual(scrubber.duration, 0)
        XCTAssertEqual(scrubber.seconds(atX: 50), 0)
        XCTAssertEqual(scrubber.x(forSeconds: 3), 0)
    }
}

final class AVSyncTests: XCTestCase {
    let policy = AVSyncPolicy(frameSeconds: 1.0 / 30)

    func testOnTimeFramesShowLateOnesDropEarlyOnesWait() {
        XCTAssertEqual(policy.decide(frameTime: 1.0, clock: 1.0), .show)
        XCTAssertEqual(policy.decide(frameTime: 1.0, clock: 1.02), .show)
        XCTAssertEqual(policy.decide(frameTime: 1.0, clock: 1.04), .drop, "40 ms late is the limit")
        XCTAssertEqual(policy.decide(frameTime: 1.0, clock: 1.06), .drop)
        XCTAssertEqual(policy.decide(frameTime: 1.02, clock: 1.0), .hold(seconds: 0.020000000000000018))
        // A long way ahead (paused sound, a gap): held in short steps, never one long sleep.
        XCTAssertEqual(policy.decide(frameTime: 5, clock: 1), .hold(seconds: AVSyncPolicy.longestHold))
        XCTAssertEqual(policy.decide(frameTime: .nan, clock: 1), .drop)
    }

    func testFramesBeforeASeekTargetAreOnlyDecodedThrough() {
        XCTAssertEqual(policy.decide(frameTime: 8.0, clock: 10, seekTarget: 10), .drop)
        // The frame at the target shows (the clock starts at the target after a seek).
        XCTAssertEqual(policy.decide(frameTime: 10.0, clock: 10, seekTarget: 10), .show)
    }

    func testLateLimitFollowsTheFrameRate() {
        XCTAssertEqual(AVSyncPolicy(frameSeconds: 1.0 / 60).lateSeconds, 0.04)
        XCTAssertEqual(AVSyncPolicy(frameSeconds: 1.0 / 30).lateSeconds, 0.04)
        XCTAssertEqual(AVSyncPolicy(frameSeconds: 0.1).lateSeconds, 0.1, accuracy: 1e-9)
        XCTAssertEqual(AVSyncPolicy(frameSeconds: 0).lateSeconds, 0.04, accuracy: 1e-9)
    }

    func testClockFromSoundAndFromTime() {
        var clock = PlaybackClock()
        let t0 = MonotonicInstant(nanoseconds: 5_000_000_000)
        clock.restart(at: 12, now: t0)
        XCTAssertEqual(clock.audioTime(playedFrames: 24_000, sampleRate: 48_000), 12.5)
        XCTAssertEqual(clock.audioTime(playedFrames: 100, sampleRate: 0), 12)
        XCTAssertEqual(clock.wallTime(now: t0.advanced(byNanoseconds: 1_000_000_000)), 13, accuracy: 1e-9)
        clock.pause(now: t0.advanced(byNanoseconds: 2_000_000_000))
        XCTAssertEqual(clock.wallTime(now: t0.advanced(byNanoseconds: 9_000_000_000)), 14, accuracy: 1e-9)
        clock.resume(now: t0.advanced(byNanoseconds: 9_000_000_000))
        XCTAssertEqual(clock.wallTime(now: t0.advanced(byNanoseconds: 9_500_000_000)), 14.5, accuracy: 1e-9)
        clock.restart(at: 3, now: t0.advanced(byNanoseconds: 10_000_000_000))
        XCTAssertEqual(clock.wallTime(now: t0.advanced(byNanoseconds: 10_000_000_000)), 3, accuracy: 1e-9)
    }
}

final class BoundedCacheTests: XCTestCase {
    func testEvictsLeastRecentlyUsedByCostAndCount() {
        var cache = BoundedCache<String, Int>(maximumCost: 100, maximumCount: 3)
        cache.insert(1, for: "a", cost: 40)
        cache.insert(2, for: "b", cost: 40)
        XCTAssertEqual(cache.value(for: "a"), 1)  // a is now newer than b
        cache.insert(3, for: "c", cost: 40)       // 120 > 100: b goes
        XCTAssertFalse(cache.contains("b"))
        XCTAssertTrue(cache.contains("a"))
        XCTAssertEqual(cache.totalCost, 80)
        cache.insert(4, for: "d", cost: 1)
        cache.insert(5, for: "e", cost: 1)  // count 4 > 3: the oldest (a) goes
        XCTAssertEqual(cache.count, 3)
        XCTAssertFalse(cache.contains("a"))
        XCTAssertEqual(cache.evictions, 2)
        XCTAssertNil(cache.value(for: "b"))
        XCTAssertEqual(cache.misses, 1)
        XCTAssertEqual(cache.hits, 1)
    }

    func testTooBigIsNotKeptAndReplacingCountsOnce() {
        var cache = BoundedCache<Int, [UInt8]>(maximumCost: 10, maximumCount: 10)
        XCTAssertFalse(cache.insert([], for: 1, cost: 11))
        XCTAssertEqual(cache.count, 0)
        cache.insert([], for: 2, cost: 6)
        cache.insert([], for: 2, cost: 7)
        XCTAssertEqual(cache.totalCost, 7)
        XCTAssertEqual(cache.evictions, 0)
    }
}

final class MediaBrowserTests: XCTestCase {
    let layout = MediaViewLayout(size: ScreenSize(width: 800, height: 480))
    var time = MonotonicInstant(nanoseconds: 1_000_000_000)

    func centre(_ rect: ScreenRect) -> ScreenPoint { ScreenPoint(x: rect.x + rect.width / 2, y: rect.y + rect.height / 2) }

    func tap(_ browser: inout MediaBrowser, _ point: ScreenPoint) -> [MediaViewEffect] {
        time = time.advanced(byNanoseconds: 100_000_000)
        _ = browser.touch(TouchEvent(phase: .press, point: point, time: time))
        return browser.touch(TouchEvent(phase: .release, point: point, time: time.advanced(byNanoseconds: 50_000_000)))
    }

    func drag(_ browser: inout MediaBrowser, from: ScreenPoint, to: ScreenPoint) -> [MediaViewEffect] {
        _ = browser.touch(TouchEvent(phase: .press, point: from, time: time))
        _ = browser.touch(TouchEvent(phase: .move, point: to, time: time))
        return browser.touch(TouchEvent(phase: .release, point: to, time: time))
    }

    func item(_ kind: MediaKind, _ time: String, seconds: Double? = 30, event: String? = nil) -> MediaItem {
        MediaItem(kind: kind, path: "/m/\(kind.rawValue)/20261124/\(time).\(kind.fileExtension)", time: time,
                  seconds: kind == .photo ? nil : seconds, bytes: 1_048_576, eventLabel: event)
    }

    func testOpeningOneRecordingDirectlyShowsThePlayerAndClosesToItsDay() {
        var browser = MediaBrowser(layout: layout)
        let video = item(.video, "101500", seconds: 12)
        XCTAssertEqual(browser.open(video, day: "20261124"), [.play(video), .redraw])
        XCTAssertEqual(browser.page, .player)
        XCTAssertEqual(browser.currentItem, video)
        XCTAssertEqual(browser.duration, 12)
        // The player's buttons work as after a tap on the thumbnail; close goes to its day.
        XCTAssertEqual(tap(&browser, centre(layout.playPauseButton)), [.togglePause, .redraw])
        XCTAssertEqual(tap(&browser, centre(layout.closeButton)), [.stopPlayback, .redraw])
        XCTAssertEqual(browser.page, .day)
        XCTAssertEqual(browser.day, "20261124")
        let photo = item(.photo, "101600")
        XCTAssertEqual(browser.open(photo, day: "20261124"), [.showPhoto(photo), .redraw])
        XCTAssertEqual(browser.page, .photo)
    }

    func testDaysNewestFirstThenAGridThenThePlayer() {
        var browser = MediaBrowser(layout: layout)
        XCTAssertEqual(browser.open(), [.listDays, .redraw])
        _ = browser.showDays(["20261122", "20261124", "20261123"])
        XCTAssertEqual(browser.days, ["20261124", "20261123", "20261122"])
        XCTAssertEqual(tap(&browser, centre(layout.dayRows[1])), [.listDay("20261123"), .redraw])
        XCTAssertEqual(browser.page, .day)
        // A listing for another day (a late answer) changes nothing.
        XCTAssertEqual(browser.showDay("20261122", items: [item(.video, "10:00:00")]), [])
        XCTAssertTrue(browser.items.isEmpty)
        _ = browser.showDay("20261123", items: [item(.video, "12:00:00"), item(.audio, "09:00:00")])
        XCTAssertEqual(browser.items.map(\.time), ["09:00:00", "12:00:00"])
        let video = browser.items[1]
        XCTAssertEqual(tap(&browser, centre(layout.cells[1])), [.play(video), .redraw])
        XCTAssertEqual(browser.page, .player)
        XCTAssertEqual(browser.duration, 30)

        XCTAssertEqual(tap(&browser, centre(layout.playPauseButton)), [.togglePause, .redraw])
        XCTAssertTrue(browser.isPaused)
        _ = browser.playback(position: 12, duration: 31, paused: true)
        XCTAssertEqual(tap(&browser, centre(layout.skipForwardButton)), [.seek(22), .redraw])
        XCTAssertEqual(tap(&browser, centre(layout.skipForwardButton)), [.seek(31), .redraw])
        XCTAssertEqual(tap(&browser, centre(layout.closeButton)), [.stopPlayback, .redraw])
        XCTAssertEqual(browser.page, .day)
        XCTAssertEqual(tap(&browser, centre(layout.backButton)), [.listDays, .redraw])
        XCTAssertEqual(tap(&browser, centre(layout.backButton)), [.leave])
    }

    func testScrubberDragSeeksOnRelease() {
        var browser = MediaBrowser(layout: layout)
        _ = browser.open()
        _ = browser.showDays(["20261124"])
        _ = tap(&browser, centre(layout.dayRows[0]))
        _ = browser.showDay("20261124", items: [item(.video, "10:00:00", seconds: 100)])
        _ = tap(&browser, centre(layout.cells[0]))
        let track = layout.scrubberTrack
        let y = track.y + track.height / 2
        _ = browser.touch(TouchEvent(phase: .press, point: ScreenPoint(x: track.x, y: y), time: time))
        let moved = browser.touch(TouchEvent(phase: .move, point: ScreenPoint(x: track.x + track.width / 2, y: y), time: time))
        XCTAssertEqual(moved, [.redraw])
        XCTAssertEqual(browser.scrubbing ?? -1, 50, accuracy: 0.2)
        // Released beyond the end: the end.
        let released = browser.touch(TouchEvent(phase: .release, point: ScreenPoint(x: track.maxX + 40, y: y + 60), time: time))
        XCTAssertEqual(released, [.redraw, .seek(100)])
        XCTAssertNil(browser.scrubbing)
    }

    func testSwipeTurnsPhotosOnlyAndStopsAtTheEnds() {
        var browser = MediaBrowser(layout: layout)
        _ = browser.open()
        _ = browser.showDays(["20261124"])
        _ = tap(&browser, centre(layout.dayRows[0]))
        let photos = [item(.photo, "08:00:00"), item(.video, "09:00:00"), item(.photo, "10:00:00")]
        _ = browser.showDay("20261124", items: photos)
        XCTAssertEqual(tap(&browser, centre(layout.cells[0])), [.showPhoto(photos[0]), .redraw])
        let right = ScreenPoint(x: 700, y: 240), left = ScreenPoint(x: 300, y: 240)
        XCTAssertEqual(drag(&browser, from: right, to: left), [.showPhoto(photos[2]), .redraw])
        XCTAssertEqual(drag(&browser, from: right, to: left), [])  // the last photo
        XCTAssertEqual(browser.currentItem, photos[2])
        XCTAssertEqual(drag(&browser, from: left, to: right), [.showPhoto(photos[0]), .redraw])
        // A short move is no swipe.
        XCTAssertEqual(drag(&browser, from: left, to: ScreenPoint(x: 320, y: 240)), [])
    }

    func testPagingAndFailures() {
        var browser = MediaBrowser(layout: layout)
        _ = browser.open()
        _ = browser.showDays(["20261124"])
        _ = tap(&browser, centre(layout.dayRows[0]))
        let many = (0..<20).map { item(.audio, String(format: "10:%02d:00", $0)) }
        _ = browser.showDay("20261124", items: many)
        XCTAssertEqual(browser.visibleItems.count, 8)
        _ = tap(&browser, centre(layout.nextPageButton))
        _ = tap(&browser, centre(layout.nextPageButton))
        _ = tap(&browser, centre(layout.nextPageButton))
        XCTAssertEqual(browser.firstItem, 16)
        XCTAssertEqual(browser.visibleItems.count, 4)
        XCTAssertEqual(tap(&browser, centre(layout.cells[5])), [])  // an empty cell
        XCTAssertEqual(tap(&browser, centre(layout.cells[1])), [.play(many[17]), .redraw])
        XCTAssertEqual(browser.playbackFailed("cannot open the sound card"), [.redraw])
        XCTAssertEqual(browser.page, .day)
        XCTAssertEqual(browser.message, "cannot open the sound card")
        _ = tap(&browser, centre(layout.previousPageButton))
        XCTAssertEqual(browser.firstItem, 8)
        XCTAssertNil(browser.message)
    }

    func testCellDetailText() {
        XCTAssertEqual(item(.video, "10:00:00", seconds: 42.4).detail, "0:42 · 1.0 MiB")
        XCTAssertEqual(item(.video, "10:00:00", seconds: 3725).detail, "1:02:05 · 1.0 MiB")
        XCTAssertEqual(item(.photo, "10:00:00").detail, "1.0 MiB")
    }
}
