import Foundation
import KioskCore
import KioskTestSupport
import XCTest
@testable import KioskPIN

/// The PIN store with real files in a temp folder.
final class PinStoreTests: XCTestCase {
    var folder: TemporaryDirectory!
    var directory: String { folder.path + "/state" }
    /// A fixed wall clock the tests move by hand.
    let t0 = Date(timeIntervalSince1970: 1_750_000_000)

    override func setUp() {
        folder = TemporaryDirectory("kioskcam-pin")
    }

    /// The floor of 100,000 iterations keeps the tests quick; the default (210,000) is measured separately.
    func makeStore(_ throttle: PinThrottle = .standard) -> PinStore {
        PinStore(directory: directory, throttle: throttle, iterations: PinHash.minimumIterations)
    }

    func mode(_ path: String) throws -> Int {
        try XCTUnwrap((try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue)
    }

    func testFactoryDefaultUntilAPINIsSet() throws {
        let store = makeStore()
        XCTAssertTrue(try store.isDefault())
        XCTAssertEqual(try store.status(now: t0), PinStatus(isDefault: true, failures: 0, waitSeconds: 0, iterations: nil))
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory), "reading creates nothing")
        XCTAssertEqual(try store.verify("1234", now: t0), .right, "the factory default unlocks")
        XCTAssertEqual(try store.verify("4321", now: t0), .wrong(waitSeconds: 0))

        try store.setPIN("2580")
        XCTAssertFalse(try store.isDefault())
        XCTAssertEqual(try store.status(now: t0).isDefault, false)
        XCTAssertEqual(try store.status(now: t0).failures, 0, "setting a PIN clears the failures")
        XCTAssertEqual(try store.verify("1234", now: t0), .wrong(waitSeconds: 0), "the default no longer works")
        XCTAssertEqual(try store.verify("2580", now: t0), .right)
    }

    func testFilesAreRootOnlyAndHoldOnlyASaltedHash() throws {
        let store = makeStore()
        try store.setPIN("2580")
        XCTAssertEqual(try mode(directory), 0o700, "the state directory is created 0700")
        XCTAssertEqual(try mode(store.pinPath), 0o600)
        let text = try String(contentsOfFile: store.pinPath, encoding: .utf8)
        XCTAssertNotNil(text.range(of: #"^pbkdf2-sha256\$100000\$[A-Za-z0-9+/]{22}==\$[A-Za-z0-9+/]{43}=\n$"#, options: .regularExpression), text)
        XCTAssertFalse(text.contains("2580"))
        // A fresh salt each time: the same PIN never gives the same line.
        try store.setPIN("2580")
        XCTAssertNotEqual(try String(contentsOfFile: store.pinPath, encoding: .utf8), text)
        XCTAssertEqual(try store.verify("2580", now: t0), .right)

        XCTAssertEqual(try store.verify("0000", now: t0), .wrong(waitSeconds: 0))
        XCTAssertEqual(try mode(store.throttlePath), 0o600)
        XCTAssertEqual(try String(contentsOfFile: store.throttlePath, encoding: .utf8),
                       "failures=1\nlocked_until=\(String(format: "%.3f", t0.timeIntervalSince1970))\n")
        XCTAssertEqual(folder.files().filter { $0.contains(".tmp") }, [], "no temp files left behind")
    }

    func testDefaultIterationsAndHashFormatRoundTrip() throws {
        let hash = try PinHash(pin: "7391")
        XCTAssertEqual(hash.iterations, 210_000)
        XCTAssertGreaterThanOrEqual(hash.iterations, 100_000, "the floor: at least 100,000")
        let parsed = try PinHash(parsing: hash.encoded)
        XCTAssertEqual(parsed, hash)
        XCTAssertTrue(try parsed.matches("7391"))
        XCTAssertFalse(try parsed.matches("7392"))
    }

    func testNewPINMustBeFourDigitsAndNotTrivial() throws {
        let store = makeStore()
        for bad in ["", "123", "12345", "12a4", " 1234", "١٢٣٤", "12 4"] {
            XCTAssertThrowsError(try store.setPIN(bad, allowTrivial: true), "'\(bad)'") { error in
                XCTAssertEqual((error as? PinStoreError)?.code, .invalidPIN)
            }
        }
        for trivial in ["0000", "7777", "1234", "0123", "6789", "9876", "3210"] {
            XCTAssertTrue(PinStore.isTrivial(trivial), trivial)
            XCTAssertThrowsError(try store.setPIN(trivial), trivial) { error in
                XCTAssertEqual((error as? PinStoreError)?.code, .trivialPIN)
                XCTAssertTrue("\(error)".contains("--force"), "\(error)")
                XCTAssertFalse("\(error)".contains(trivial), "the PIN is never in a message: \(error)")
            }
        }
        for fine in ["2580", "1357", "7890", "1243", "1122", "0987"] {
            XCTAssertFalse(PinStore.isTrivial(fine), fine)
        }
        XCTAssertTrue(try store.isDefault(), "nothing was written")
        try store.setPIN("0000", allowTrivial: true)
        XCTAssertEqual(try store.verify("0000", now: t0), .right)
    }

    /// 5 misses → 30 s, then 60 s, 120 s …; the state survives a restart.
    func testThrottlingDoublesAndSurvivesAReload() throws {
        let store = makeStore()
        try store.setPIN("2580")
        for attempt in 1...4 {
            XCTAssertEqual(try store.verify("1111", now: t0), .wrong(waitSeconds: 0), "attempt \(attempt)")
        }
        XCTAssertEqual(try store.verify("1111", now: t0), .wrong(waitSeconds: 30))
        XCTAssertEqual(try store.verify("2580", now: t0.addingTimeInterval(10)), .throttled(waitSeconds: 20),
                       "not even the right PIN is checked during the wait")

        // A restart: a new store on the same folder.
        let reloaded = makeStore()
        XCTAssertEqual(try reloaded.status(now: t0.addingTimeInterval(10)),
                       PinStatus(isDefault: false, failures: 5, waitSeconds: 20, iterations: 100_000))
        XCTAssertEqual(try reloaded.verify("1111", now: t0.addingTimeInterval(29.5)), .throttled(waitSeconds: 1))
        var now = t0.addingTimeInterval(30)
        XCTAssertEqual(try reloaded.verify("1111", now: now), .wrong(waitSeconds: 60))
        now += 60
        XCTAssertEqual(try makeStore().verify("1111", now: now), .wrong(waitSeconds: 120))
        now += 120
        XCTAssertEqual(try makeStore().verify("2580", now: now), .right)
        XCTAssertEqual(try makeStore().status(now: now).failures, 0, "a right PIN clears the count")
        XCTAssertFalse(FileManager.default.fileExists(atPath: reloaded.throttlePath))
    }

    /// The wait is stored as wall-clock time; a clock set back must not stretch it.
    func testClockSetBackNeverWaitsLongerThanTheCurrentStep() throws {
        let store = makeStore(PinThrottle(failuresBeforeLockout: 1, firstLockoutSeconds: 30, maximumLockoutSeconds: 3600))
        XCTAssertEqual(try store.verify("9999", now: t0), .wrong(waitSeconds: 30))
        let dayEarlier = t0.addingTimeInterval(-86_400)
        XCTAssertEqual(try store.status(now: dayEarlier).waitSeconds, 30)
        XCTAssertEqual(try store.verify("1234", now: dayEarlier), .throttled(waitSeconds: 30))
        // Stored anew relative to the new clock: over after 30 s of it.
        XCTAssertEqual(try store.verify("1234", now: dayEarlier.addingTimeInterval(20)), .throttled(waitSeconds: 10))
        XCTAssertEqual(try store.verify("1234", now: dayEarlier.addingTimeInterval(30)), .right)
    }

    func testGarbledThrottleFileIsTakenAsTheFirstLockout() throws {
        let store = makeStore()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try "nonsense".write(toFile: store.throttlePath, atomically: true, encoding: .utf8)
        XCTAssertEqual(try store.status(now: t0), PinStatus(isDefault: true, failures: 5, waitSeconds: 30, iterations: nil))
        XCTAssertEqual(try store.verify("1234", now: t0), .throttled(waitSeconds: 30))
        XCTAssertEqual(try store.verify("1234", now: t0.addingTimeInterval(30)), .right)
    }

    func testCorruptPINFileIsAClearErrorWithoutItsContent() throws {
        let store = makeStore()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for content in ["pbkdf2-sha256$1000$c2FsdHNhbHQ=$AAAA", "secret-1234", "pbkdf2-sha256$210000$%%%$AAAA"] {
            try content.write(toFile: store.pinPath, atomically: true, encoding: .utf8)
            XCTAssertThrowsError(try store.verify("1234", now: t0)) { error in
                let error = error as? PinStoreError
                XCTAssertEqual(error?.code, .corrupt)
                XCTAssertTrue(error?.description.contains(store.pinPath) == true, "\(String(describing: error))")
                XCTAssertTrue(error?.description.contains("kioskcam pin set") == true)
                XCTAssertFalse(error?.description.contains(content) == true)
            }
            XCTAssertThrowsError(try store.status(now: t0))
        }
    }

    func testUnusableStateDirectoryNamesTheFix() throws {
        try "a file".write(toFile: folder.path + "/file", atomically: true, encoding: .utf8)
        let store = PinStore(directory: folder.path + "/file/state")
        XCTAssertThrowsError(try store.setPIN("2580")) { error in
            XCTAssertTrue("\(error)".contains(folder.path + "/file/state"), "\(error)")
            XCTAssertTrue("\(error)".contains("[control] state_directory"), "\(error)")
        }
        XCTAssertThrowsError(try PinStore(directory: folder.path + "/missing/state").setPIN("2580")) { error in
            XCTAssertTrue("\(error)".contains("state_directory"), "\(error)")
        }
    }

    func testPermissionDeniedSaysRunAsRoot() throws {
        guard geteuid() != 0 else { throw XCTSkip("running as root: permissions do not apply; run the tests as a normal user to cover this") }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        chmod(directory, 0o500)
        defer { chmod(directory, 0o700) }
        XCTAssertThrowsError(try makeStore().setPIN("2580")) { error in
            XCTAssertEqual((error as? PinStoreError)?.code, .permissionDenied)
            XCTAssertTrue("\(error)".contains("Run as root or check [control] state_directory"), "\(error)")
        }
    }

    func testSystemErrorMappingNamesTheFix() {
        let denied = PinStoreError.system("read", path: "/var/lib/kioskcam/pin", errno: EACCES)
        XCTAssertEqual(denied.code, .permissionDenied)
        XCTAssertEqual(denied.description,
                       "read failed for /var/lib/kioskcam/pin: Permission denied (EACCES). Run as root or check [control] state_directory.")
        XCTAssertTrue(PinStoreError.system("replace", path: "/x", errno: EROFS).description.contains("read-only"))
    }

    /// The daemon and the CLI may check at the same time: no failure may be lost.
    func testConcurrentChecksCountEveryFailure() throws {
        let throttle = PinThrottle(failuresBeforeLockout: 100, firstLockoutSeconds: 30, maximumLockoutSeconds: 60)
        try makeStore(throttle).setPIN("2580")
        let attempts = 6
        let results = Results()
        let directory = directory, t0 = t0
        DispatchQueue.concurrentPerform(iterations: attempts) { index in
            // A separate store value per thread, as two processes would have.
            let store = PinStore(directory: directory, throttle: throttle)
            results.append(Result { try store.verify(index % 2 == 0 ? "1111" : "2222", now: t0) })
        }
        XCTAssertEqual(results.all.count, attempts)
        for result in results.all { XCTAssertEqual(try result.get(), .wrong(waitSeconds: 0)) }
        XCTAssertEqual(try makeStore(throttle).status(now: t0).failures, attempts)
    }

    /// The figure for the report: one check at the default 210,000 iterations.
    func testOneCheckTakesANoticeableTime() throws {
        let store = PinStore(directory: directory)
        try store.setPIN("2580")
        var timings: [Duration] = []
        for _ in 0..<3 {
            let start = ContinuousClock.now
            XCTAssertEqual(try store.verify("2580", now: t0), .right)
            timings.append(ContinuousClock.now - start)
        }
        let best = timings.min()!
        print("PinStore.verify at \(PinHash.defaultIterations) iterations: best of 3 \(best)")
        XCTAssertGreaterThan(best, .milliseconds(5), "a slow hash is slow")
        XCTAssertLessThan(best, .seconds(10))
    }
}

final class Results: @unchecked Sendable {
    private let lock = KioskCore.Lock()
    private var values: [Result<PinCheckResult, any Error>] = []
    func append(_ value: Result<PinCheckResult, any Error>) { lock.withLock { values.append(value) } }
    var all: [Result<PinCheckResult, any Error>] { lock.withLock { values } }

    /// EBUSY, EACCES and ENOENT keep the code and the hint they had before the device
    /// errors took one shape (`DeviceError`).
    func testBusyDeniedAndMissingKeepTheirCodeAndHint() {
        let cases: [(Int32, PinStoreError.Code, String?)] = [
            (EBUSY, .io, nil),
            (EACCES, .permissionDenied, "run as root or check [control] state_directory"),
            (ENOENT, .io, "create the parent folder or check [control] state_directory"),
        ]
        for (errno, code, hint) in cases {
            let error = PinStoreError.system("read", path: "/var/lib/kioskcam/pin", errno: errno)
            XCTAssertEqual(error.code, code, "\(errno)")
            XCTAssertEqual(error.hint, hint, "\(errno)")
            XCTAssertEqual(error.errno, errno)
            XCTAssertEqual(error.systemMessage, String(cString: strerror(errno)))
            XCTAssertTrue(error.description.hasPrefix("read failed for /var/lib/kioskcam/pin: \(String(cString: strerror(errno))) (\(ErrnoName.of(errno)))."),
                          error.description)
        }
    }
}
