import XCTest
@testable import KioskCore

final class RecordingStateMachineTests: XCTestCase {

    /// The legal transitions, written out independently of the implementation.
    /// Every pair not listed here must be rejected.
    private static let legal: [RecordingState: [RecordingEvent: RecordingState]] = [
        .idle: [.start: .starting],
        .starting: [.writerReady: .recording, .writerFailed: .idle, .stop: .stopping],
        .recording: [.writerFailed: .idle, .stop: .stopping],
        .stopping: [.writerFailed: .idle, .finished: .idle],
    ]

    /// A machine driven into `state` through legal events only.
    private func machine(in state: RecordingState, file: StaticString = #filePath, line: UInt = #line) -> RecordingStateMachine {
        let path: [RecordingEvent]
        switch state {
        case .idle: path = []
        case .starting: path = [.start]
        case .recording: path = [.start, .writerReady]
        case .stopping: path = [.start, .writerReady, .stop]
        }
        var machine = RecordingStateMachine()
        for event in path {
            do { try machine.apply(event) } catch {
                XCTFail("could not reach \(state): \(error)", file: file, line: line)
            }
        }
        XCTAssertEqual(machine.state, state, file: file, line: line)
        return machine
    }

    private func error(applying event: RecordingEvent, in state: RecordingState) -> RecordingTransitionError? {
        var machine = machine(in: state)
        do {
            try machine.apply(event)
            return nil
        } catch {
            return error
        }
    }

    func testStartsIdle() {
        XCTAssertEqual(RecordingStateMachine().state, .idle)
    }

    func testFullLegalPathReturnsEachNewState() throws {
        var machine = RecordingStateMachine()
        XCTAssertEqual(try machine.apply(.start), .starting)
        XCTAssertEqual(machine.state, .starting)
        XCTAssertEqual(try machine.apply(.writerReady), .recording)
        XCTAssertEqual(machine.state, .recording)
        XCTAssertEqual(try machine.apply(.stop), .stopping)
        XCTAssertEqual(machine.state, .stopping)
        XCTAssertEqual(try machine.apply(.finished), .idle)
        XCTAssertEqual(machine.state, .idle)
        // And the cycle can run again.
        XCTAssertEqual(try machine.apply(.start), .starting)
    }

    func testStopBeforeWriterReadyIsAllowed() throws {
        var machine = RecordingStateMachine()
        try machine.apply(.start)
        XCTAssertEqual(try machine.apply(.stop), .stopping)
        XCTAssertEqual(try machine.apply(.finished), .idle)
    }

    func testEveryPairMatchesTheExpectedTable() {
        var legalCount = 0
        for state in RecordingState.allCases {
            for event in RecordingEvent.allCases {
                let expected = Self.legal[state]?[event]
                XCTAssertEqual(RecordingStateMachine.next(from: state, on: event), expected, "next(\(state), \(event))")

                var machine = machine(in: state)
                do {
                    let result = try machine.apply(event)
                    XCTAssertNotNil(expected, "\(event) in \(state) should be illegal but gave \(result)")
                    XCTAssertEqual(result, expected, "\(event) in \(state)")
                    XCTAssertEqual(machine.state, expected, "\(event) in \(state)")
                    legalCount += 1
                } catch {
                    XCTAssertNil(expected, "\(event) in \(state) should lead to \(String(describing: expected))")
                    XCTAssertEqual(error, RecordingTransitionError(state: state, event: event))
                    XCTAssertEqual(machine.state, state, "an illegal \(event) changed the state from \(state)")
                }
            }
        }
        XCTAssertEqual(legalCount, 8)
        XCTAssertEqual(RecordingState.allCases.count * RecordingEvent.allCases.count, 20)
    }

    func testWriterFailedReturnsToIdleFromEveryBusyState() throws {
        for state in [RecordingState.starting, .recording, .stopping] {
            var machine = machine(in: state)
            XCTAssertEqual(try machine.apply(.writerFailed), .idle, "from \(state)")
            XCTAssertEqual(machine.state, .idle)
        }
        XCTAssertNotNil(error(applying: .writerFailed, in: .idle))
    }

    func testStartWhileBusySaysAlreadyRecording() throws {
        for state in [RecordingState.starting, .recording] {
            let error = try XCTUnwrap(error(applying: .start, in: state))
            XCTAssertEqual(error.state, state)
            XCTAssertEqual(error.event, .start)
            XCTAssertTrue(error.description.contains("already recording"), error.description)
        }
        let stopping = try XCTUnwrap(error(applying: .start, in: .stopping))
        XCTAssertFalse(stopping.description.contains("already recording"), stopping.description)
        XCTAssertTrue(stopping.description.contains("still being finished"), stopping.description)
    }

    func testStopWhileIdleSaysNotRecording() throws {
        let error = try XCTUnwrap(error(applying: .stop, in: .idle))
        XCTAssertTrue(error.description.contains("not recording"), error.description)
        let again = try XCTUnwrap(self.error(applying: .stop, in: .stopping))
        XCTAssertEqual(again.description, "already stopping")
    }

    func testOtherIllegalEventsNameEventAndState() throws {
        let error = try XCTUnwrap(error(applying: .writerReady, in: .recording))
        XCTAssertEqual(error.description, "cannot writerReady while recording")
        let finished = try XCTUnwrap(self.error(applying: .finished, in: .idle))
        XCTAssertEqual(finished.description, "cannot finished while idle")
    }

    func testAcceptsRecordControl() {
        let expected: [RecordingState: Bool] = [.idle: true, .starting: false, .recording: true, .stopping: false]
        for state in RecordingState.allCases {
            XCTAssertEqual(state.acceptsRecordControl, expected[state], "\(state)")
        }
    }
}
