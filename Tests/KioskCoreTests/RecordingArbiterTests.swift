import KioskCore
import XCTest

/// One recording at a time: every request against every activity.
final class RecordingArbiterTests: XCTestCase {
    private func decide(_ request: RecordingRequest, _ kind: RecordingKind?, _ state: RecordingState) -> RecordingDecision {
        RecordingArbiter.decide(request, activity: RecordingActivity(kind: kind, state: state))
    }

    private func refusal(_ decision: RecordingDecision) -> RecordingRefusal? {
        if case .refuse(let refusal) = decision { return refusal }
        return nil
    }

    func testIdleStartsWhatIsAsked() {
        for kind in RecordingKind.allCases {
            XCTAssertEqual(decide(.start(kind), nil, .idle), .start(kind))
            XCTAssertEqual(decide(.toggle(kind), nil, .idle), .start(kind))
        }
        XCTAssertEqual(refusal(decide(.stop, nil, .idle))?.reason, .notRecording)
    }

    /// The defect: a sound-only recording and a video recording ran together. Any start
    /// while anything starts or records is refused, naming what runs.
    func testASecondRecordingOfAnyKindIsRefused() {
        for running in RecordingKind.allCases {
            for state in [RecordingState.starting, .recording] {
                for asked in RecordingKind.allCases {
                    let refused = refusal(decide(.start(asked), running, state))
                    XCTAssertEqual(refused?.reason, .alreadyRecording, "\(asked) while \(running) \(state)")
                    XCTAssertTrue(refused?.message.contains(running.phrase) == true, refused?.message ?? "")
                    XCTAssertTrue(refused?.message.contains("already recording") == true)
                }
            }
        }
    }

    func testStopEndsWhateverRecords() {
        for running in RecordingKind.allCases {
            XCTAssertEqual(decide(.stop, running, .recording), .stop(running))
            XCTAssertEqual(decide(.stop, running, .starting), .stop(running), "the user changed their mind")
            XCTAssertEqual(refusal(decide(.stop, running, .stopping))?.reason, .busy)
        }
    }

    /// A record button ends whatever records (the LED and the screen show one state);
    /// while a recording starts or finishes, a press is dropped, not queued.
    func testTogglesEndWhateverRecordsAndAreDroppedWhileBusy() {
        for running in RecordingKind.allCases {
            for pressed in RecordingKind.allCases {
                XCTAssertEqual(decide(.toggle(pressed), running, .recording), .stop(running))
                XCTAssertEqual(refusal(decide(.toggle(pressed), running, .starting))?.reason, .busy)
                XCTAssertEqual(refusal(decide(.toggle(pressed), running, .stopping))?.reason, .busy)
            }
        }
        XCTAssertEqual(refusal(decide(.start(.video), .audio, .stopping))?.reason, .busy)
    }

    func testAnIdleActivityHasNoKind() {
        XCTAssertNil(RecordingActivity(kind: .audio, state: .idle).kind)
        XCTAssertEqual(RecordingActivity(kind: .audio, state: .recording).description, "audio recording")
    }
}
