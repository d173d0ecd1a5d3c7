import CLinuxFB
import Glibc
import KioskCore
import SystemPackage

/// The picture memory the screen draws into: a Linux framebuffer device (`/dev/fbN`,
/// mmap'd), a file-backed one another process can read (`kioskcam screenshot`), or
/// plain memory (tests, benchmarks).
///
/// One type with three backings rather than a protocol: every backing is the same thing
/// to the renderer — a mapped block of rows in a pixel layout — and differs only in how
/// it is opened, blanked and released.
///
/// The mapping is released exactly once: by `close()` (idempotent) or, failing that,
/// by `deinit`. `@unchecked Sendable` because the daemon opens it on one thread and
/// hands it to the UI thread: the geometry is immutable, only the renderer writes the
/// pixels, and a reader on another thread (a screenshot) may see a half-drawn frame,
/// which is what a panel shows too. `close()` must come after the renderer's last draw.
// @unchecked: it holds the mapping's raw pointers; the geometry never changes (see above).
public final class Framebuffer: @unchecked Sendable, CustomStringConvertible {
    /// Where the pixels live.
    public enum Backing: Sendable, Equatable {
        /// A kernel framebuffer; `driver` is its `fb_fix_screeninfo.id` ("vfb", "simple", …).
        case device(path: String, driver: String)
        /// A kioskcam framebuffer file (`FramebufferFile`).
        case file(path: String)
        case memory
    }

    public let backing: Backing
    /// The visible panel in pixels (before any rotation of the picture).
    public let size: ScreenSize
    /// Bytes from one row to the next (`line_length`), at least `size.width * bytesPerPixel`.
    public let stride: Int
    public let format: FramebufferPixelFormat
    /// False for framebuffers opened only to read them (screenshots).
    public let isWritable: Bool

    /// The visible picture's top-left pixel.
    package let pixels: UnsafeMutableRawPointer
    private let region: UnsafeMutableRawPointer
    private let regionLength: Int
    private let descriptor: FileDescriptor?
    private let lock = Lock()
    private var isClosed = false

    private init(backing: Backing, size: ScreenSize, stride: Int, format: FramebufferPixelFormat, isWritable: Bool,
                 pixels: UnsafeMutableRawPointer, region: UnsafeMutableRawPointer, regionLength: Int,
                 descriptor: FileDescriptor?) {
        self.backing = backing
        self.size = size
        self.stride = stride
        self.format = format
        self.isWritable = isWritable
        self.pixels = pixels
        self.region = region
        self.regionLength = regionLength
        self.descriptor = descriptor
    }

    deinit { close() }

    /// The device node or file, or "memory".
    public var path: String {
        switch backing {
        case .device(let path, _), .file(let path): path
        case .memory: "memory"
        }
    }

    /// "/dev/fb0 (vfb) 800x480 RGB565, 1600 bytes a row".
    public var description: String {
        let name: String
        switch backing {
        case .device(let path, let driver): name = "\(path) (\(driver))"
        case .file(let path): name = "file \(path)"
        case .memory: name = "memory"
        }
        return "\(name) \(size) \(format), \(stride) bytes a row"
    }

    package var plane: PixelPlane { PixelPlane(base: pixels, size: size, stride: stride) }

    /// Unmaps the pixels and closes the device or file; later calls do nothing.
    public func close() {
        let shouldClose = lock.withLock {
            defer { isClosed = true }
            return !isClosed
        }
        guard shouldClose else { return }
        if descriptor == nil, case .memory = backing {
            region.deallocate()
        } else {
            munmap(region, regionLength)
            try? descriptor?.close()
        }
    }

    // MARK: Device

    /// Opens a framebuffer device and maps its visible screen.
    ///
    /// The layout comes from the driver's bitfields (`fb_var_screeninfo`), the row length
    /// from `line_length` (`fb_fix_screeninfo`); drawing starts at the current pan
    /// position (`xoffset`, `yoffset`).
    /// - Parameters:
    ///   - path: The device node, e.g. "/dev/fb0".
    ///   - writable: False to map read-only (screenshots).
    /// - Throws: `ScreenError` `.notFound`, `.permissionDenied`, `.notAFramebuffer` (ENOTTY,
    ///   or not packed true colour), `.unsupportedFormat` (palette, 24 bpp, …) or `.system`.
    public static func device(path: String, writable: Bool = true) throws(ScreenError) -> Framebuffer {
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.open(FilePath(path), writable ? .readWrite : .readOnly, options: [.closeOnExec])
        } catch let errno as Errno {
            throw ScreenError(path: path, operation: "open", errno: errno)
        } catch {
            throw ScreenError(.system, path: path, operation: "open", detail: "\(error)")
        }
        do throws(ScreenError) {
            var variable = fb_var_screeninfo()
            var fixed = fb_fix_screeninfo()
            try ioctl(descriptor, kc_fbioget_vscreeninfo(), &variable, name: "FBIOGET_VSCREENINFO", path: path)
            try ioctl(descriptor, kc_fbioget_fscreeninfo(), &fixed, name: "FBIOGET_FSCREENINFO", path: path)
            let driver = cString(fixed.id)
            guard fixed.type == FB_TYPE_PACKED_PIXELS,
                  fixed.visual == FB_VISUAL_TRUECOLOR || fixed.visual == FB_VISUAL_DIRECTCOLOR else {
                throw ScreenError(.unsupportedFormat, path: path, operation: "FBIOGET_FSCREENINFO",
                                  detail: "\(driver) is not a packed true-colour framebuffer (type \(fixed.type), visual \(fixed.visual))",
                                  hint: "switch it to 16 or 32 bits per pixel, e.g. `fbset -fb \(path) -depth 16`")
            }
            let format = try pixelFormat(variable, path: path)
            let size = ScreenSize(width: Int(variable.xres), height: Int(variable.yres))
            let stride = Int(fixed.line_length)
            let offset = Int(variable.yoffset) * stride + Int(variable.xoffset) * format.bytesPerPixel
            let length = Int(fixed.smem_len)
            guard size.width > 0, size.height > 0, stride >= size.width * format.bytesPerPixel,
                  offset + stride * (size.height - 1) + size.width * format.bytesPerPixel <= length else {
                throw ScreenError(.invalidGeometry, path: path, operation: "FBIOGET_FSCREENINFO",
                                  detail: "\(size) at \(variable.bits_per_pixel) bpp, \(stride) bytes a row, offset \(variable.xoffset),\(variable.yoffset) does not fit in \(length) bytes of video memory")
            }
            let region = try map(descriptor, length: length, writable: writable, path: path)
            return Framebuffer(backing: .device(path: path, driver: driver), size: size, stride: stride, format: format,
                               isWritable: writable, pixels: region + offset, region: region, regionLength: length,
                               descriptor: descriptor)
        } catch {
            try? descriptor.close()
            throw error
        }
    }

    /// The layout the driver reports, or `.unsupportedFormat` naming it.
    package static func pixelFormat(_ variable: fb_var_screeninfo, path: String) throws(ScreenError) -> FramebufferPixelFormat {
        func channel(_ field: fb_bitfield) -> FramebufferPixelFormat.Channel {
            .init(offset: Int(field.offset), length: Int(field.length))
        }
        let bits = Int(variable.bits_per_pixel)
        guard variable.grayscale == 0 || variable.grayscale > 1, // > 1 is a FOURCC; those fail below
              let format = FramebufferPixelFormat(bitsPerPixel: bits, red: channel(variable.red), green: channel(variable.green),
                                                  blue: channel(variable.blue), transparency: channel(variable.transp)) else {
            throw ScreenError(.unsupportedFormat, path: path, operation: "FBIOGET_VSCREENINFO",
                              detail: "\(bits) bits per pixel with red \(variable.red.length)@\(variable.red.offset), green \(variable.green.length)@\(variable.green.offset), blue \(variable.blue.length)@\(variable.blue.offset) cannot be drawn",
                              hint: "kioskcam draws 16-bit (RGB565) and 32-bit (XRGB8888) framebuffers: `fbset -fb \(path) -depth 16` or `-depth 32`, or the display driver's boot option")
        }
        return format
    }

    /// Blanks or unblanks the panel (FBIOBLANK, powering it down where the driver can).
    /// - Returns: False when the backing or driver cannot blank (EINVAL, ENOTTY), which
    ///   is not an error: the renderer paints the screen black anyway.
    @discardableResult
    public func setBlanked(_ blanked: Bool) -> Bool {
        guard let descriptor, case .device = backing, lock.withLock({ !isClosed }) else { return false }
        let level = blanked ? FB_BLANK_POWERDOWN : FB_BLANK_UNBLANK
        while true {
            if kc_fb_ioctl(descriptor.rawValue, kc_fbioblank(), UnsafeMutableRawPointer(bitPattern: level)) == 0 { return true }
            if Glibc.errno != EINTR { return false }
        }
    }

    // MARK: File

    /// Creates (or replaces) a file-backed framebuffer at `path` and maps it shared, so
    /// another process reading the file sees each frame as it is drawn.
    ///
    /// The new file is written under a temporary name and renamed into place: a reader
    /// that still maps the old file keeps a valid picture instead of a SIGBUS.
    /// - Throws: `ScreenError` when the folder is missing or not writable, or the disk is full.
    public static func createFile(path: String, size: ScreenSize, format: FramebufferPixelFormat) throws(ScreenError) -> Framebuffer {
        let header = FramebufferFileHeader(size: size, format: format)
        let temporary = path + ".new"
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.open(FilePath(temporary), .readWrite, options: [.create, .truncate, .closeOnExec],
                                                 permissions: [.ownerReadWrite, .groupRead, .otherRead])
        } catch let errno as Errno {
            throw ScreenError(path: temporary, operation: "create framebuffer file", errno: errno)
        } catch {
            throw ScreenError(.system, path: temporary, operation: "create framebuffer file", detail: "\(error)")
        }
        do throws(ScreenError) {
            let length = header.fileLength
            guard ftruncate(descriptor.rawValue, off_t(length)) == 0 else {
                throw ScreenError(path: temporary, operation: "size framebuffer file", errno: Errno(rawValue: Glibc.errno))
            }
            let region = try map(descriptor, length: length, writable: true, path: temporary)
            header.encoded.withUnsafeBytes { region.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            guard rename(temporary, path) == 0 else {
                let errno = Errno(rawValue: Glibc.errno)
                munmap(region, length)
                throw ScreenError(path: path, operation: "rename \(temporary) to", errno: errno)
            }
            return Framebuffer(backing: .file(path: path), size: size, stride: header.stride, format: format, isWritable: true,
                               pixels: region + header.pixelOffset, region: region, regionLength: length, descriptor: descriptor)
        } catch {
            try? descriptor.close()
            unlink(temporary)
            throw error
        }
    }

    /// Opens an existing framebuffer file read-only (what the daemon is showing, or showed last).
    /// - Throws: `ScreenError` `.notFound`, `.permissionDenied`, or `.notAFramebuffer` when
    ///   the file is not a kioskcam framebuffer file or is cut short.
    public static func openFile(path: String) throws(ScreenError) -> Framebuffer {
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec])
        } catch let errno as Errno {
            throw ScreenError(path: path, operation: "open framebuffer file", errno: errno)
        } catch {
            throw ScreenError(.system, path: path, operation: "open framebuffer file", detail: "\(error)")
        }
        do throws(ScreenError) {
            var bytes = [UInt8](repeating: 0, count: FramebufferFileHeader.encodedLength)
            let count = bytes.withUnsafeMutableBytes { pread(descriptor.rawValue, $0.baseAddress, $0.count, 0) }
            var status = stat()
            guard fstat(descriptor.rawValue, &status) == 0 else {
                throw ScreenError(path: path, operation: "stat framebuffer file", errno: Errno(rawValue: Glibc.errno))
            }
            guard count == bytes.count, let header = FramebufferFileHeader(decoding: bytes) else {
                throw ScreenError(.notAFramebuffer, path: path, operation: "read framebuffer file header",
                                  detail: "not a kioskcam framebuffer file", hint: "give the file the daemon draws into (screen.framebuffer)")
            }
            guard Int(status.st_size) >= header.fileLength else {
                throw ScreenError(.notAFramebuffer, path: path, operation: "read framebuffer file",
                                  detail: "the file has \(status.st_size) bytes, a \(header.size) \(header.format) picture needs \(header.fileLength)")
            }
            let region = try map(descriptor, length: header.fileLength, writable: false, path: path)
            return Framebuffer(backing: .file(path: path), size: header.size, stride: header.stride, format: header.format,
                               isWritable: false, pixels: region + header.pixelOffset, region: region,
                               regionLength: header.fileLength, descriptor: descriptor)
        } catch {
            try? descriptor.close()
            throw error
        }
    }

    // MARK: Memory

    /// A framebuffer in process memory, cleared to black.
    /// - Parameter stride: Bytes a row; at least `size.width * bytesPerPixel` (more imitates
    ///   a driver's padded `line_length`).
    public static func memory(size: ScreenSize, format: FramebufferPixelFormat, stride: Int? = nil) -> Framebuffer {
        let rowBytes = max(stride ?? 0, max(1, size.width) * format.bytesPerPixel)
        let length = rowBytes * max(1, size.height)
        let region = UnsafeMutableRawPointer.allocate(byteCount: length, alignment: 64)
        region.initializeMemory(as: UInt8.self, repeating: 0, count: length)
        return Framebuffer(backing: .memory, size: size, stride: rowBytes, format: format, isWritable: true,
                           pixels: region, region: region, regionLength: length, descriptor: nil)
    }

    // MARK: Reading back

    /// What the panel shows, as the user sees it (the picture turned back by `rotation`),
    /// RGBA bytes, rows top to bottom.
    public func logicalRGBA(rotation: ScreenRotation) -> [UInt8] {
        PanelCopy.readLogicalRGBA(from: plane, mapping: PanelMapping(panelSize: size, rotation: rotation),
                                  packer: PixelPacker(format))
    }

    // MARK: System calls

    private static func ioctl<T>(_ descriptor: FileDescriptor, _ request: UInt, _ argument: inout T,
                                 name: String, path: String) throws(ScreenError) {
        let errno: Errno? = withUnsafeMutablePointer(to: &argument) { pointer in
            while true {
                if kc_fb_ioctl(descriptor.rawValue, request, pointer) == 0 { return nil }
                let errno = Errno(rawValue: Glibc.errno)
                if errno != .interrupted { return errno }
            }
        }
        if let errno { throw ScreenError(path: path, operation: name, errno: errno) }
    }

    private static func map(_ descriptor: FileDescriptor, length: Int, writable: Bool,
                            path: String) throws(ScreenError) -> UnsafeMutableRawPointer {
        let protection = writable ? PROT_READ | PROT_WRITE : PROT_READ
        let region = mmap(nil, length, protection, MAP_SHARED, descriptor.rawValue, 0)
        guard let region, region != UnsafeMutableRawPointer(bitPattern: -1) else {
            throw ScreenError(path: path, operation: "mmap \(length) bytes", errno: Errno(rawValue: Glibc.errno))
        }
        return region
    }
}

/// A fixed-size C `char` array (imported as a tuple) up to its first NUL.
package func cString<T>(_ tuple: T) -> String {
    withUnsafeBytes(of: tuple) { bytes in
        let end = bytes.firstIndex(of: 0) ?? bytes.count
        return String(decoding: bytes[..<end], as: UTF8.self)
    }
}
