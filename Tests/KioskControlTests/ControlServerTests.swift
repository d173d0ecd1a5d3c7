import Foundation
import Glibc
import KioskControl
import KioskCore
import KioskTestSupport
import Logging
import XCTest

final class ControlServerTests: XCTestCase {
    func testEveryCommandRoundTripsThroughTheSocket() throws {
        let (folder, path) = socketFolder()
        let handler = RecordingHandler()
        handler.status.deviceID = "0b6c1c52-0d0e-4a8e-8a4c-2f0e3b1d9f00"
        let server = try ControlServer(path: path, group: nil, handler: handler, logger: quietLogger)
        defer { server.stop() }
        let client = ControlClient(socketPath: path)
        let requests: [ControlRequest] = [
            .status, .recordStart(audioOnly: true, duration: 5), .recordStop, .snapshot, .list(date: "20261122"),
            .purge(dryRun: true), .pinSet(pin: "1357"), .screenshot,
        ]
        for request in requests {
            let response = try client.send(request)
            XCTAssertEqual(response.id, 1)
            switch request {
            case .status: XCTAssertEqual(try response.decode(StatusReport.self).deviceID, handler.status.deviceID)
            case .recordStart: XCTAssertEqual(response.result?["kind"], "audio")
            case .recordStop: XCTAssertEqual(response.error, ControlError(.failed, "not recording"))
            case .pinSet: XCTAssertEqual(response.result, [:])
            default: XCTAssertEqual(response.result?["command"], .string(request.command))
            }
        }
        XCTAssertEqual(handler.requests, requests, "the handler saw exactly what was sent")
        _ = folder
    }

    func testBadRequestsGetErrorsAndTheConnectionKeepsServing() throws {
        let (folder, path) = socketFolder()
        let logs = LogStore()
        let handler = RecordingHandler()
        let server = try ControlServer(path: path, group: nil, handler: handler, logger: logs.logger)
        defer { server.stop() }
        let raw = try RawClient(path)
        let oversized = #"{"v":1,"id":99,"cmd":"status","args":{"x":""# + String(repeating: "a", count: 70_000) + "\"}}\n"
        let cases: [(String, ControlErrorCode)] = [
            ("this is not json\n", .malformedJSON),
            (oversized, .tooLarge),
            (#"{"v":1,"id":2,"cmd":"reboot"}"# + "\n", .unknownCommand),
            (#"{"v":9,"id":3,"cmd":"status"}"# + "\n", .unsupportedVersion),
            (#"{"v":1,"id":4,"cmd":"pin.set","args":{"pin":"24680"}}"# + "\r\n", .badArgument),
            ([UInt8](repeating: 0xFF, count: 100).map { String(UnicodeScalar($0)) }.joined() + "\n", .malformedJSON),
        ]
        for (line, code) in cases {
            raw.send(line)
            let response = raw.readResponse()
            XCTAssertEqual(response?.error?.code, code, String(line.prefix(60)))
            // Still serving on the same connection.
            raw.send(#"{"v":1,"id":42,"cmd":"status"}"# + "\n")
            XCTAssertEqual(raw.readResponse()?.id, 42)
        }
        // Blank lines get no answer; a line split over many writes is one request.
        raw.send("\n  \n")
        for byte in Array((#"{"v":1,"id":43,"cmd":"snapshot"}"# + "\n").utf8) { raw.send([byte]) }
        XCTAssertEqual(raw.readResponse()?.id, 43)
        // A request without newline before the client half-closes is still answered.
        let last = try RawClient(path)
        last.send(#"{"v":1,"id":44,"cmd":"status"}"#)
        shutdown(last.fd, Int32(SHUT_WR))
        XCTAssertEqual(last.readResponse()?.id, 44)
        XCTAssertFalse(logs.all.joined().contains("24680"), "a PIN is never logged")
        XCTAssertTrue(handler.requests.allSatisfy { $0 == .status || $0 == .snapshot }, "bad requests never reach the handler")
        _ = folder
    }

    func testSocketModeAndGroup() throws {
        let (folder, path) = socketFolder()
        let plain = try ControlServer(path: path, group: nil, handler: RecordingHandler(), logger: quietLogger)
        XCTAssertEqual(fileMode(path), 0o660)
        XCTAssertEqual(plain.mode, 0o660)
        plain.stop()

        // Our own primary group always exists and can be applied.
        let gid = getgid()
        let ownGroup = try XCTUnwrap(getgrgid(gid)).pointee.gr_name.map { String(cString: $0) }
        let grouped = try ControlServer(path: path, group: ownGroup, handler: RecordingHandler(), logger: quietLogger)
        var status = stat()
        stat(path, &status)
        XCTAssertEqual(status.st_gid, gid)
        XCTAssertEqual(fileMode(path), 0o660)
        grouped.stop()

        let logs = LogStore()
        let missing = try ControlServer(path: path, group: "kioskcam-no-such-group", handler: RecordingHandler(), logger: logs.logger)
        XCTAssertEqual(fileMode(path), 0o600, "root-only when the group is missing")
        XCTAssertEqual(logs.all.filter { $0.contains("kioskcam-no-such-group") && $0.contains("does not exist") }.count, 1, "\(logs.all)")
        missing.stop()
        XCTAssertFalse(FileManager.default.fileExists(atPath: path), "stop() removes the socket")
        _ = folder
    }

    func testASecondServerIsRefusedAndAStaleSocketIsReplaced() throws {
        let (folder, path) = socketFolder()
        let first = try ControlServer(path: path, group: nil, handler: RecordingHandler(), logger: quietLogger)
        XCTAssertThrowsError(try ControlServer(path: path, group: nil, handler: RecordingHandler(), logger: quietLogger)) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("already listening on \(path)") && text.contains("pid \(getpid())"), text)
        }
        XCTAssertNoThrow(try ControlClient(socketPath: path).send(.status), "the first server is unaffected")
        first.stop()

        // A stale socket: bound, then its owner died without removing it.
        let stale = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: Array(path.utf8))
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(stale, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        XCTAssertEqual(bound, 0)
        close(stale)
        XCTAssertTrue(FileManager.default.fileExists(atPath: path))
        XCTAssertThrowsError(try ControlClient(socketPath: path).send(.status)) { error in
            XCTAssertEqual(error as? ControlClientError, .staleSocket(socketPath: path))
            XCTAssertTrue("\(error)".contains("kioskcam is not running"), "\(error)")
        }
        let logs = LogStore()
        let second = try ControlServer(path: path, group: nil, handler: RecordingHandler(), logger: logs.logger)
        XCTAssertTrue(logs.all.contains { $0.contains("stale") }, "\(logs.all)")
        XCTAssertNoThrow(try ControlClient(socketPath: path).send(.status))
        second.stop()

        // A regular file in the way is never removed.
        _ = FileManager.default.createFile(atPath: path, contents: Data("keep".utf8))
        XCTAssertThrowsError(try ControlServer(path: path, group: nil, handler: RecordingHandler(), logger: quietLogger)) { error in
            XCTAssertTrue("\(error)".contains("is not a socket"), "\(error)")
        }
        XCTAssertEqual(FileManager.default.contents(atPath: path), Data("keep".utf8))
        _ = folder
    }

    func testClientMessagesWhenNothingRuns() throws {
        let (folder, path) = socketFolder()
        XCTAssertThrowsError(try ControlClient(socketPath: path).send(.status)) { error in
            XCTAssertEqual(error as? ControlClientError, .notRunning(socketPath: path))
            XCTAssertEqual("\(error)", "kioskcam is not running (no socket at \(path)): start it with `systemctl start kioskcam` or `kioskcam run`")
            XCTAssertEqual((error as? ControlClientError)?.exitCode, 69)
        }
        XCTAssertEqual("\(ControlClientError.permissionDenied(socketPath: path, group: "kioskcam"))".contains("join group kioskcam or use sudo"), false,
                       "the message explains how to join")
        XCTAssertTrue("\(ControlClientError.permissionDenied(socketPath: path, group: "kioskcam"))".contains("join group kioskcam"))
        XCTAssertTrue("\(ControlClientError.permissionDenied(socketPath: path, group: "kioskcam"))".contains("or use sudo"))
        _ = folder
    }

    func testASlowAnswerTimesOutTheClientOnly() throws {
        let (folder, path) = socketFolder()
        let handler = RecordingHandler()
        handler.delaySeconds = 1.5
        let server = try ControlServer(path: path, group: nil, handler: handler, logger: quietLogger)
        defer { server.stop() }
        let started = Date()
        XCTAssertThrowsError(try ControlClient(socketPath: path, timeoutSeconds: 0.3).send(.snapshot)) { error in
            XCTAssertEqual(error as? ControlClientError, .timedOut(socketPath: path, seconds: 0.3))
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 1.2)
        _ = folder
    }

    func testIdleClientsAreDisconnectedAndTheClientCapHolds() throws {
        let (folder, path) = socketFolder()
        let options = ControlServer.Options(maxClients: 2, idleTimeoutSeconds: 0.4)
        let server = try ControlServer(path: path, group: nil, options: options, handler: RecordingHandler(), logger: quietLogger)
        defer { server.stop() }
        let a = try RawClient(path), b = try RawClient(path)
        for (index, client) in [a, b].enumerated() {
            client.send(#"{"v":1,"id":\#(index),"cmd":"status"}"# + "\n")
            XCTAssertEqual(client.readResponse()?.id, Int64(index))
        }
        XCTAssertEqual(server.clientCount, 2)
        let third = try RawClient(path)
        XCTAssertEqual(third.readResponse()?.error?.code, .busy)
        XCTAssertNil(third.readLine(), "and closed")
        // Idle: after 0.4 s without a request the server hangs up.
        let started = Date()
        XCTAssertNil(a.readLine())
        XCTAssertEqual(Date().timeIntervalSince(started), 0.4, accuracy: 0.35)
        XCTAssertNil(b.readLine())
        let deadline = Date(timeIntervalSinceNow: 2)
        while server.clientCount > 0, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        XCTAssertEqual(server.clientCount, 0)
        XCTAssertNoThrow(try ControlClient(socketPath: path).send(.status), "room again")
        _ = folder
    }

    func testEventsReachSubscribersOfTheirKind() throws {
        let (folder, path) = socketFolder()
        let server = try ControlServer(path: path, group: nil, options: .init(idleTimeoutSeconds: 0.3), handler: RecordingHandler(), logger: quietLogger)
        let client = ControlClient(socketPath: path)
        let states = try client.subscribe([.state])
        let everything = try client.subscribe()
        server.publish(ControlEvent(.levels, ["rms_dbfs": [-20]]))
        server.publish(.state(.recording, file: "/m/video/x.mp4"))
        Thread.sleep(forTimeInterval: 0.6)  // longer than the idle time-out: subscribers stay
        server.publish(.state(.idle))
        XCTAssertEqual(try states.next(), .state(.recording, file: "/m/video/x.mp4"))
        XCTAssertEqual(try states.next(), .state(.idle))
        XCTAssertEqual(try everything.next()?.kind, .levels)
        XCTAssertEqual(try everything.next()?.kind, .state)
        XCTAssertEqual(try everything.next()?.kind, .state)
        // stop() ends the stream.
        server.stop()
        XCTAssertNil(try states.next())
        XCTAssertNil(try everything.next())
        states.close()
        everything.close()
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
        _ = folder
    }

    func testTheAsyncEventStream() async throws {
        let (folder, path) = socketFolder()
        let server = try ControlServer(path: path, group: nil, handler: RecordingHandler(), logger: quietLogger)
        defer { server.stop() }
        let stream = ControlClient(socketPath: path).events([.button])
        // The subscription is made before `events` returns, so nothing published now is lost.
        server.publish(.button("record", press: "long"))
        for try await event in stream {
            XCTAssertEqual(event, .button("record", press: "long"))
            break
        }
        _ = folder
    }

    /// A subscriber that never reads: publish stays fast, its queue drops the oldest
    /// events and counts them, and the client is told how many it missed.
    func testASlowSubscriberNeverBlocksPublishAndIsToldWhatItMissed() throws {
        let (folder, path) = socketFolder()
        let options = ControlServer.Options(eventQueueLimit: 8, writeTimeoutSeconds: 30)
        let server = try ControlServer(path: path, group: nil, options: options, handler: RecordingHandler(), logger: quietLogger)
        defer { server.stop() }
        let slow = try RawClient(path)
        slow.send(#"{"v":1,"id":1,"cmd":"subscribe"}"# + "\n")
        XCTAssertEqual(slow.readResponse()?.id, 1)
        let padding = String(repeating: "x", count: 2000)
        let count = 5000
        var slowest = 0.0
        let started = Date()
        for index in 0..<count {
            let before = Date()
            server.publish(ControlEvent(.progress, ["n": .integer(Int64(index)), "pad": .string(padding)]))
            slowest = max(slowest, Date().timeIntervalSince(before))
        }
        let elapsed = Date().timeIntervalSince(started)
        print("control: \(count) publishes of 2 kB to a stalled subscriber in \(String(format: "%.3f", elapsed)) s, slowest \(String(format: "%.2f", slowest * 1000)) ms, \(server.eventsDroppedTotal) dropped")
        // Never anywhere near the 30 s write time-out; the margin is for a busy machine.
        XCTAssertLessThan(slowest, 0.5, "publish never waits for a client")
        XCTAssertGreaterThan(server.eventsDroppedTotal, count / 2)
        // Now read everything: the numbers only go up, a `dropped` line tells the gap, the last event arrives.
        var received: [Int64] = [], droppedReported: Int64 = 0
        while let line = slow.readLine(), let parsed = try? ControlServerLine.parse(Array(line.utf8)), case .event(let event) = parsed {
            if event.kind == .dropped, case .integer(let n)? = event.data["count"] { droppedReported += n }
            if case .integer(let n)? = event.data["n"] { received.append(n) }
            if received.last == Int64(count - 1) { break }
        }
        XCTAssertEqual(received.last, Int64(count - 1), "the newest event is delivered")
        XCTAssertEqual(received, received.sorted())
        XCTAssertEqual(Int(droppedReported), server.eventsDroppedTotal)
        XCTAssertEqual(received.count + Int(droppedReported), count, "every event is delivered or counted")
        _ = folder
    }

    /// Mutated request lines over a real connection: every one is answered, and the
    /// server still serves afterwards.
    func testMutatedRequestsOverTheSocket() throws {
        let (folder, path) = socketFolder()
        let server = try ControlServer(path: path, group: nil, handler: RecordingHandler(), logger: quietLogger)
        defer { server.stop() }
        let raw = try RawClient(path)
        var rng = SystemRandomNumberGenerator()
        let seed = Array(#"{"v":1,"id":5,"cmd":"list","args":{"date":"20261122"}}"#.utf8)
        let total = 3000
        var answered = 0, sent = 0
        for _ in 0..<total {
            var bytes = seed
            for _ in 0..<Int.random(in: 1...3, using: &rng) {
                bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
            }
            bytes.removeAll { $0 == 10 || $0 == 13 }
            if bytes.allSatisfy({ $0 == 32 || $0 == 9 }) { continue }
            raw.send(bytes + [10])
            sent += 1
            if raw.readResponse() != nil { answered += 1 }
        }
        XCTAssertEqual(answered, sent)
        XCTAssertNoThrow(try ControlClient(socketPath: path).send(.status))
        _ = folder
    }
}
