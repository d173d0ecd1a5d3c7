import XCTest
@testable import KioskCore

final class ButtonGateTests: XCTestCase {
    private let idle = RecordingActivity.idle
    private func activity(_ kind: RecordingKind, _ state: RecordingState) -> RecordingActivity {
        RecordingActivity(kind: kind, state: state)
    }

    func testRecordButtonsAreToggles() {
        XCTAssertEqual(ButtonGate.decide(.recordToggle, activity: idle), .run(.record(.toggle(.video))))
        XCTAssertEqual(ButtonGate.decide(.audioToggle, activity: idle), .run(.record(.toggle(.audio))))
        for kind in RecordingKind.allCases {
            XCTAssertEqual(ButtonGate.decide(.recordToggle, activity: activity(kind, .recording)), .run(.record(.toggle(.video))))
            XCTAssertEqual(ButtonGate.decide(.audioToggle, activity: activity(kind, .recording)), .run(.record(.toggle(.audio))))
        }
    }

    func testTheBroadcastButtonIsIndependentOfRecording() {
        XCTAssertEqual(ButtonGate.decide(.broadcast, activity: idle), .run(.toggleBroadcast))
        for kind in RecordingKind.allCases {
            for state in [RecordingState.starting, .recording, .stopping] {
                XCTAssertEqual(ButtonGate.decide(.broadcast, activity: activity(kind, state)), .run(.toggleBroadcast))
            }
        }
        XCTAssertEqual(ButtonAction(rawValue: "broadcast"), .broadcast)
    }

    func testPressWhileStartingOrStoppingIsIgnoredNotQueued() {
        for action in [ButtonAction.recordToggle, .audioToggle] {
            for kind in RecordingKind.allCases {
                for state in [RecordingState.starting, .stopping] {
                    guard case .ignored(let reason) = ButtonGate.decide(action, activity: activity(kind, state)) else {
                        return XCTFail("\(action) during \(kind) \(state) must be ignored")
                    }
                    XCTAssertTrue(reason.contains(state == .starting ? "starting" : "finished"), reason)
                }
            }
        }
    }

    func testImpatientDoublePressGivesOneStartOnly() {
        // The user presses, the recorder starts, the user presses again before it runs:
        // that second press must not become a stop once the writer is ready.
        var machine = RecordingStateMachine()
        var started = 0, stopped = 0
        func press() throws {
            let now = RecordingActivity(kind: .video, state: machine.state)
            guard case .run(.record(let request)) = ButtonGate.decide(.recordToggle, activity: now) else { return }
            switch RecordingArbiter.decide(request, activity: now) {
            case .start: started += 1; try machine.apply(.start)
            case .stop: stopped += 1; try machine.apply(.stop)
            case .refuse: break
            }
        }
        XCTAssertNoThrow(try press())
        XCTAssertNoThrow(try press())
        XCTAssertNoThrow(try press())
        XCTAssertNoThrow(try machine.apply(.writerReady))
        XCTAssertEqual(machine.state, .recording)
        XCTAssertEqual(started, 1)
        XCTAssertEqual(stopped, 0)
        XCTAssertNoThrow(try press())
        XCTAssertNoThrow(try press())  // while stopping: ignored
        XCTAssertEqual(stopped, 1)
        XCTAssertEqual(machine.state, .stopping)
    }

    func testSnapshotWorksInEveryStateAndNoneNever() {
        for state in RecordingState.allCases {
            let now = RecordingActivity(kind: .video, state: state)
            XCTAssertEqual(ButtonGate.decide(.snapshot, activity: now), .run(.takeSnapshot))
            guard case .ignored = ButtonGate.decide(.none, activity: now) else { return XCTFail("none must do nothing") }
        }
    }
}
