import Glibc
import KioskCore
import XCTest

/// The one rendering of every device wrapper's error, and the one errno-name table.
final class DeviceErrorTests: XCTestCase {
    enum TestCode: DeviceErrorCode { case busy, other }

    enum TestStep: String, Hashable, Sendable, CustomStringConvertible {
        case open = "open for capture"
        var description: String { rawValue }
    }

    enum SteppedCode: DeviceErrorCode {
        typealias Call = TestStep
        case missing
    }

    typealias TestError = DeviceError<TestCode>

    func testFullRenderingNamesCallSubjectDetailCauseAndHint() {
        let error = TestError(.busy, subject: "/dev/video0", call: "VIDIOC_S_FMT", errno: EBUSY,
                              systemMessage: "Device or resource busy", detail: "for YUYV",
                              hint: "another process holds the camera — stop it (e.g. `fuser /dev/video0`)")
        XCTAssertEqual(error.description,
                       "VIDIOC_S_FMT failed for /dev/video0: for YUYV: Device or resource busy (EBUSY). "
                       + "Another process holds the camera — stop it (e.g. `fuser /dev/video0`).")
        XCTAssertEqual(error.cause, "Device or resource busy (EBUSY)")
        XCTAssertEqual(error.message, "for YUYV: Device or resource busy (EBUSY)")
    }

    func testRenderingWithoutErrnoOrHint() {
        let plain = TestError(.other, subject: "/dev/video0", call: "VIDIOC_S_FMT", detail: "the driver set an empty size 0x0")
        XCTAssertEqual(plain.description, "VIDIOC_S_FMT failed for /dev/video0: the driver set an empty size 0x0.")
        XCTAssertNil(plain.cause)

        let bare = TestError(.other, subject: nil, call: "stream")
        XCTAssertEqual(bare.description, "stream failed.")
        XCTAssertEqual(bare.message, "")

        let errnoOnly = TestError(.busy, subject: "hw:1,0", call: "open", errno: EBUSY, systemMessage: "Device or resource busy")
        XCTAssertEqual(errnoOnly.description, "open failed for hw:1,0: Device or resource busy (EBUSY).")

        let hintOnly = TestError(.other, subject: nil, call: "set the PIN", detail: "a PIN is exactly 4 digits 0–9",
                                 hint: "enter 4 digits and nothing else")
        XCTAssertEqual(hintOnly.description, "set the PIN failed: a PIN is exactly 4 digits 0–9. Enter 4 digits and nothing else.")
    }

    /// FFmpeg and alsa-lib have words for codes that are no errno; an errno without words
    /// still shows its name.
    func testCauseWithWordsOnlyOrNameOnly() {
        let words = TestError(.other, subject: "in.mp4", call: "read media", systemMessage: "Invalid data found when processing input",
                              detail: "no readable media header")
        XCTAssertEqual(words.description, "read media failed for in.mp4: no readable media header: Invalid data found when processing input.")
        let name = TestError(.other, subject: "gpiochip0", call: "wait for edge events", errno: EINTR)
        XCTAssertEqual(name.cause, "EINTR")
        XCTAssertEqual(name.description, "wait for edge events failed for gpiochip0: EINTR.")
    }

    /// The call keeps its case; the hint starts a sentence unless it starts with a name;
    /// text that already ends a sentence gets no second period.
    func testSentences() {
        func hint(_ text: String) -> String {
            TestError(.other, subject: nil, call: "open", hint: text).description
        }
        XCTAssertEqual(hint("no such camera: list cameras"), "open failed. No such camera: list cameras.")
        XCTAssertEqual(hint("The device is busy."), "open failed. The device is busy.")
        XCTAssertEqual(hint("gpiochip0 has 8 lines (offsets 0–7)"), "open failed. gpiochip0 has 8 lines (offsets 0–7).")
        XCTAssertEqual(hint("buttons.chip names no chip"), "open failed. buttons.chip names no chip.")
        XCTAssertEqual(hint("/dev/null is not a V4L2 video device"), "open failed. /dev/null is not a V4L2 video device.")
        XCTAssertEqual(hint("`kioskcam probe` lists them"), "open failed. `kioskcam probe` lists them.")
        XCTAssertEqual(hint("why?"), "open failed. Why?")
        XCTAssertEqual(TestError(.other, subject: "x", call: "write", detail: "closed.").description, "write failed for x: closed.")
        XCTAssertEqual(TestError(.other, subject: nil, call: "open", hint: "").description, "open failed.")
    }

    func testAWrappersOwnStepsRenderByTheirDescription() {
        let error = DeviceError<SteppedCode>(.missing, subject: "hw:7,0", call: .open, errno: ENOENT,
                                             systemMessage: "No such file or directory")
        XCTAssertEqual(error.call, .open)
        XCTAssertEqual(error.description, "open for capture failed for hw:7,0: No such file or directory (ENOENT).")
    }

    func testCodeIsReachableThroughTheSpecialisationAndErrorsCompare() {
        let code: TestError.Code = .busy
        let error = TestError(code, subject: "a", call: "open", errno: EBUSY)
        XCTAssertEqual(error, TestError(.busy, subject: "a", call: "open", errno: EBUSY))
        XCTAssertNotEqual(error, TestError(.busy, subject: "a", call: "open", errno: EACCES))
        let thrown: Error = error
        XCTAssertEqual((thrown as? TestError)?.code, .busy)
        XCTAssertNil(thrown as? DeviceError<SteppedCode>)
    }

    func testErrnoNames() {
        XCTAssertEqual(ErrnoName.of(EBUSY), "EBUSY")
        XCTAssertEqual(ErrnoName.of(EACCES), "EACCES")
        XCTAssertEqual(ErrnoName.of(ENOENT), "ENOENT")
        XCTAssertEqual(ErrnoName.of(ENODEV), "ENODEV")
        XCTAssertEqual(ErrnoName.of(ENOTTY), "ENOTTY")
        XCTAssertEqual(ErrnoName.of(999), "errno 999")
        XCTAssertEqual(ErrnoName.of(0), "errno 0")
        XCTAssertEqual(ErrnoName.of(-16), "errno -16", "a negated errno is not an errno")
    }

    /// KioskCore writes the numbers down (it imports no C module); they must be the C
    /// library's on every machine this builds on.
    func testEveryNameMatchesTheCLibrarysNumber() {
        let glibc: [String: Int32] = [
            "EPERM": EPERM, "ENOENT": ENOENT, "ESRCH": ESRCH, "EINTR": EINTR, "EIO": EIO, "ENXIO": ENXIO,
            "E2BIG": E2BIG, "ENOEXEC": ENOEXEC, "EBADF": EBADF, "ECHILD": ECHILD, "EAGAIN": EAGAIN, "ENOMEM": ENOMEM,
            "EACCES": EACCES, "EFAULT": EFAULT, "ENOTBLK": ENOTBLK, "EBUSY": EBUSY, "EEXIST": EEXIST, "EXDEV": EXDEV,
            "ENODEV": ENODEV, "ENOTDIR": ENOTDIR, "EISDIR": EISDIR, "EINVAL": EINVAL, "ENFILE": ENFILE, "EMFILE": EMFILE,
            "ENOTTY": ENOTTY, "ETXTBSY": ETXTBSY, "EFBIG": EFBIG, "ENOSPC": ENOSPC, "ESPIPE": ESPIPE, "EROFS": EROFS,
            "EMLINK": EMLINK, "EPIPE": EPIPE, "EDOM": EDOM, "ERANGE": ERANGE, "EDEADLK": EDEADLK,
            "ENAMETOOLONG": ENAMETOOLONG, "ENOLCK": ENOLCK, "ENOSYS": ENOSYS, "ENOTEMPTY": ENOTEMPTY, "ELOOP": ELOOP,
            "ENODATA": ENODATA, "ETIME": ETIME, "EPROTO": EPROTO, "EOVERFLOW": EOVERFLOW, "EBADFD": EBADFD,
            "EOPNOTSUPP": EOPNOTSUPP, "EADDRINUSE": EADDRINUSE, "EADDRNOTAVAIL": EADDRNOTAVAIL,
            "ENETUNREACH": ENETUNREACH, "ECONNABORTED": ECONNABORTED, "ECONNRESET": ECONNRESET, "ENOBUFS": ENOBUFS,
            "ENOTCONN": ENOTCONN, "ETIMEDOUT": ETIMEDOUT, "ECONNREFUSED": ECONNREFUSED, "EHOSTUNREACH": EHOSTUNREACH,
            "EDQUOT": EDQUOT, "ENOMEDIUM": ENOMEDIUM, "ECANCELED": ECANCELED,
        ]
        XCTAssertEqual(Set(ErrnoName.names.values), Set(glibc.keys), "the table and this list name the same errnos")
        for (number, name) in ErrnoName.names {
            XCTAssertEqual(glibc[name], number, name)
        }
    }
}
