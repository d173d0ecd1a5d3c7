import KioskCore
import XCTest

final class EventPlannerTests: XCTestCase {
    private func at(_ seconds: Double) -> MonotonicInstant { MonotonicInstant(nanoseconds: Int64(seconds * 1e9)) }

    /// The planner driven by a script of (time, input), ticking every 100 ms in between as
    /// the owner would at its deadlines; returns every effect with the time it came.
    private func play(_ planner: inout EventPlanner, until end: Double,
                      _ script: [(Double, (inout EventPlanner, MonotonicInstant) -> [EventEffect])]) -> [(Double, EventEffect)] {
        var effects: [(Double, EventEffect)] = []
        var pending = script.sorted { $0.0 < $1.0 }
        var time = 0.0
        while time <= end + 1e-9 {
            while let next = pending.first, next.0 <= time + 1e-9 {
                pending.removeFirst()
                effects += next.1(&planner, at(next.0)).map { (next.0, $0) }
            }
            effects += planner.tick(at: at(time)).map { (time, $0) }
            time += 0.1
        }
        return effects
    }

    private func starts(_ effects: [(Double, EventEffect)]) -> [EventRecord] {
        effects.compactMap { if case .startClip(let event) = $0.1 { event } else { nil } }
    }

    private func ends(_ effects: [(Double, EventEffect)]) -> [EventRecord] {
        effects.compactMap { if case .endClip(let event) = $0.1 { event } else { nil } }
    }

    func testOneMotionMakesOneClipFromPreToPost() {
        var planner = EventPlanner(timing: EventTiming(preSeconds: 5, postSeconds: 10, gapSeconds: 0))
        let effects = play(&planner, until: 40, [
            (20, { $0.triggerOn(.motion, at: $1) }),
            (22, { $0.triggerOff(.motion, at: $1) }),
        ])
        XCTAssertEqual(starts(effects).map(\.clipStart), [at(15)], "pre_seconds before the trigger")
        XCTAssertEqual(ends(effects).map(\.end), [at(32)], "post_seconds after the motion ended")
        XCTAssertEqual(ends(effects).first?.triggers, [.motion])
        XCTAssertNil(planner.event)
        XCTAssertNil(planner.nextDeadline)
    }

    func testTwoCrossingsWithinTheGapAreOneClip() {
        var planner = EventPlanner(timing: EventTiming(preSeconds: 5, postSeconds: 2, gapSeconds: 5))
        let effects = play(&planner, until: 40, [
            (10, { $0.triggerOn(.motion, at: $1) }),
            (12, { $0.triggerOff(.motion, at: $1) }),
            (15, { $0.triggerOn(.motion, at: $1) }), // 3 s later: within the 5 s gap
            (17, { $0.triggerOff(.motion, at: $1) }),
        ])
        XCTAssertEqual(starts(effects).count, 1)
        XCTAssertEqual(ends(effects).map(\.end), [at(22)], "the tail is the longer of post and gap")
    }

    func testCrossingsFurtherApartThanTheTailAreTwoClips() {
        var planner = EventPlanner(timing: EventTiming(preSeconds: 1, postSeconds: 2, gapSeconds: 2))
        let effects = play(&planner, until: 30, [
            (5, { $0.triggerOn(.motion, at: $1) }), (6, { $0.triggerOff(.motion, at: $1) }),
            (12, { $0.triggerOn(.motion, at: $1) }), (13, { $0.triggerOff(.motion, at: $1) }),
        ])
        XCTAssertEqual(starts(effects).map(\.clipStart), [at(4), at(11)])
        XCTAssertEqual(ends(effects).map(\.end), [at(8), at(15)])
        XCTAssertEqual(starts(effects).map(\.id), [1, 2])
    }

    func testEveryTriggerThatFiredIsKeptInOrderAndToldOnce() {
        var planner = EventPlanner(timing: EventTiming(postSeconds: 3, gapSeconds: 0))
        let effects = play(&planner, until: 20, [
            (1, { $0.triggerOn(.sound, at: $1) }),
            (2, { $0.pulse(.button, at: $1) }),
            (2.5, { $0.triggerOn(.motion, at: $1) }),
            (3, { $0.triggerOn(.motion, at: $1) }), // again: nothing new
            (4, { $0.triggerOff(.motion, at: $1) }),
            (5, { $0.triggerOff(.sound, at: $1) }),
        ])
        let updates = effects.filter { if case .update = $0.1 { true } else { false } }
        XCTAssertEqual(updates.count, 2, "button, then motion")
        XCTAssertEqual(ends(effects).first?.triggers, [.sound, .button, .motion])
        XCTAssertEqual(ends(effects).first?.end, at(8), "3 s after the last lasting trigger went off")
    }

    func testAButtonPulseMakesAClipOfPreAndPost() {
        var planner = EventPlanner(timing: EventTiming(preSeconds: 5, postSeconds: 10, gapSeconds: 0))
        let effects = play(&planner, until: 30, [(8, { $0.pulse(.button, at: $1) })])
        XCTAssertEqual(starts(effects).first?.clipStart, at(3))
        XCTAssertEqual(ends(effects).first?.end, at(18))
    }

    func testALongEventGoesOnInANewClipAtTheLimit() {
        var planner = EventPlanner(timing: EventTiming(preSeconds: 5, postSeconds: 2, gapSeconds: 0, maxSeconds: 20))
        let effects = play(&planner, until: 60, [
            (10, { $0.triggerOn(.motion, at: $1) }),
            (40, { $0.triggerOff(.motion, at: $1) }),
        ])
        XCTAssertEqual(starts(effects).map(\.clipStart), [at(5), at(25)], "the first clip from 5 s; the second goes on at 25 s")
        XCTAssertEqual(ends(effects).map(\.end), [at(25), at(42)])
        XCTAssertEqual(starts(effects).last?.continues, 1)
    }

    func testAPeakIsToldWhenItRisesByAPointAndWantsItsFrame() {
        var planner = EventPlanner()
        _ = planner.triggerOn(.motion, at: at(1))
        XCTAssertEqual(planner.motionScore(3, region: nil, at: at(1.1)).count, 2)
        XCTAssertTrue(planner.motionScore(3.5, region: nil, at: at(1.2)).isEmpty, "half a point more is not told")
        let effects = planner.motionScore(6, region: MotionRegion(x: 0.1, y: 0.2, width: 0.3, height: 0.4), at: at(1.3))
        guard case .peakFrame(let event)? = effects.first else { return XCTFail("\(effects)") }
        XCTAssertEqual(event.peakScore, 6)
        XCTAssertEqual(event.peakTime, at(1.3))
        XCTAssertEqual(event.peakRegion?.center.x ?? 0, 0.25, accuracy: 1e-9)
        XCTAssertTrue(planner.motionScore(.nan, region: nil, at: at(1.4)).isEmpty)
    }

    func testScoresWithoutAnEventAreIgnored() {
        var planner = EventPlanner()
        XCTAssertTrue(planner.motionScore(50, region: nil, at: at(1)).isEmpty)
        XCTAssertNil(planner.event)
    }

    func testFinishEndsTheClipNow() {
        var planner = EventPlanner()
        _ = planner.triggerOn(.manual, at: at(2))
        XCTAssertEqual(planner.nextDeadline, at(2 - 5 + 300), "while a trigger is on, only the length limit")
        let effects = planner.finish(at: at(7))
        XCTAssertEqual(effects, [.endClip(EventRecord(id: 1, start: at(2), clipStart: at(-3), end: at(7), triggers: [.manual],
                                                       peakScore: 0, peakRegion: nil, peakTime: nil, continues: nil))])
        XCTAssertTrue(planner.finish(at: at(8)).isEmpty)
    }

    func testTheSoundTriggerNeedsTheLevelToLastBothWays() {
        var trigger = SoundTrigger(thresholdDBFS: -20, minimumMilliseconds: 300, releaseMilliseconds: 1000)
        var flips: [Int] = []
        // 20 ms chunks: quiet, a 200 ms click (too short), quiet, 600 ms of shouting, quiet.
        for chunk in 0..<200 {
            let ms = chunk * 20
            let loud = (1000..<1200).contains(ms) || (2000..<2600).contains(ms)
            if trigger.level(loud ? -10 : -50, at: MonotonicInstant(nanoseconds: Int64(ms) * 1_000_000)) { flips.append(ms) }
        }
        XCTAssertEqual(flips, [2300, 3600], "on 300 ms into the shouting, off after a quiet second")
        XCTAssertFalse(trigger.isOn)
        XCTAssertFalse(trigger.level(.nan, at: MonotonicInstant(nanoseconds: 0)))
    }
}
