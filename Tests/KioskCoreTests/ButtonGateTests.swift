import XCTest
@testable import KioskCore

final class ButtonGateTests: XCTestCase {
    func testRecordToggleFollowsTheStateMachine() {
        XCTAssertEqual(ButtonGate.decide(.recordToggle, state: .idle), .run(.startRecording(audioOnly: false)))
        XCTAssertEqual(ButtonGate.decide(.recordToggle, state: .recording), .run(.stopRecording))
        XCTAssertEqual(ButtonGate.decide(.audioToggle, state: .idle), .run(.startRecording(audioOnly: true)))
        XCTAssertEqual(ButtonGate.decide(.audioToggle, state: .recording), .run(.stopRecording))
    }

    func testPressWhileStartingOrStoppingIsIgnoredNotQueued() {
        for action in [ButtonAction.recordToggle, .audioToggle] {
            for state in [RecordingState.starting, .stopping] {
                guard case .ignored(let reason) = ButtonGate.decide(action, state: state) else {
                    return XCTFail("\(action) during \(state) must be ignored")
                }
                XCTAssertFalse(reason.isEmpty)
            }
        }
        if case .ignored(let reason) = ButtonGate.decide(.recordToggle, state: .starting) {
            XCTAssertTrue(reason.contains("starting"), reason)
        }
        if case .ignored(let reason) = ButtonGate.decide(.recordToggle, state: .stopping) {
            XCTAssertTrue(reason.contains("finished"), reason)
        }
    }

    func testImpatientDoublePressGivesOneStartOnly() {
        // The user presses, the recorder starts, the user presses again before it runs:
        // that second press must not become a stop once the writer is ready.
        var machine = RecordingStateMachine()
        var started = 0, stopped = 0
        func press() throws {
            switch ButtonGate.decide(.recordToggle, state: machine.state) {
            case .run(.startRecording): started += 1; try machine.apply(.start)
            case .run(.stopRecording): stopped += 1; try machine.apply(.stop)
            case .run(.takeSnapshot), .ignored: break
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
            XCTAssertEqual(ButtonGate.decide(.snapshot, state: state), .run(.takeSnapshot))
            guard case .ignored = ButtonGate.decide(.none, state: state) else { return XCTFail("none must do nothing") }
        }
    }
}
