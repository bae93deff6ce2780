import CPangoCairo
import Foundation
import Glibc

/// Draws pictures from local files (a layout's `image` view: album art) into a cairo context.
/// The layout asks `canDraw` before it places a picture, and places the view's fallback where
/// the answer is no; the painter then only paints what was decoded then.
package protocol OverlayArtworkSource: AnyObject {
    /// Whether the file at `path` is a picture this source can draw (read and decoded now, once
    /// per version of the file).
    func canDraw(_ path: String) -> Bool
    /// Paints the picture filling `rect` (a square, logical pixels); false when it has none.
    func draw(_ path: String, cairo: OpaquePointer, rect: OverlayRect, scale: Int) -> Bool
}

/// Why a file is not drawn.
package enum ArtworkRefusal: Error, Equatable {
    /// open(2) failed: no such file, no permission, or a symbolic link (`ELOOP` for the file
    /// itself, `ENOTDIR` for a folder on its path).
    case cannotOpen(errno: Int32)
    /// A directory, a FIFO, a device, a socket: only a regular file is read.
    case notRegularFile
    case empty
    /// More bytes than `ArtworkLoader.maximumFileBytes`.
    case tooLarge(bytes: Int)
    /// Fewer bytes than the file said it held (it changed while it was read), or a read error.
    case unreadable
    /// Neither PNG's signature nor JPEG's.
    case notPNGOrJPEG
    /// Wider or taller than `ArtworkLoader.maximumSide`: refused before a pixel is decoded.
    case tooManyPixels(width: Int, height: Int)
    /// The decoder failed (a truncated or corrupt file).
    case undecodable
}

/// The two formats a picture is decoded as, told by their first bytes, never by a file name.
package enum ArtworkFormat: String, Sendable, Equatable {
    case png, jpeg

    package init?(sniffing bytes: some Collection<UInt8>) {
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            self = .png
        } else if bytes.starts(with: [0xFF, 0xD8, 0xFF]) {
            self = .jpeg
        } else {
            return nil
        }
    }
}

/// A decoded picture: a square cairo image surface (the middle of the picture, cropped), at
/// most `ArtworkLoader.decodedSide` pixels wide.
package final class Artwork {
    package let side: Int
    let surface: OpaquePointer

    init(surface: OpaquePointer) {
        self.surface = surface
        side = Int(cairo_image_surface_get_width(surface))
    }

    deinit { cairo_surface_destroy(surface) }
}

/// Album art read from local files within bounds any producer may name: a regular file of at
/// most 2 MiB opened without following a symbolic link anywhere in its path and without
/// blocking on a FIFO,
/// its format sniffed from its bytes and decoded as PNG (cairo) or JPEG (gdk-pixbuf's JPEG
/// loader) only, its size read from the header and refused over 4096 pixels a side before any
/// pixel is decoded, scaled down once, and kept: each version of a file (its inode, size and
/// modification time) is read once, each size it is painted at scaled once, both caches small.
package final class ArtworkLoader: OverlayArtworkSource {
    package static let maximumFileBytes = 2 << 20
    package static let maximumSide = 4096
    /// The decoded square's side: past what the largest slot needs (44 px at Size=2, scale 2).
    package static let decodedSide = 256
    /// Files, and painted sizes, kept; past it the cache starts again.
    static let cacheLimit = 8

    /// One version of one file, as lstat(2) sees it.
    struct Version: Hashable {
        var device: UInt64, inode: UInt64, size: Int64, seconds: Int, nanoseconds: Int
    }

    private var decoded: [String: (version: Version, artwork: Artwork?)] = [:]
    private var scaled: [ScaledKey: OpaquePointer] = [:]
    private struct ScaledKey: Hashable { var path: String, version: Version, pixels: Int }

    package init() {}

    deinit { for surface in scaled.values { cairo_surface_destroy(surface) } }

    package func canDraw(_ path: String) -> Bool {
        guard let version = Self.version(path) else {
            decoded[path] = nil
            return false
        }
        if let known = decoded[path], known.version == version { return known.artwork != nil }
        if decoded.count >= Self.cacheLimit { decoded.removeAll() }
        decoded[path] = (version, try? Self.load(path).get())
        return decoded[path]?.artwork != nil
    }

    package func draw(_ path: String, cairo cr: OpaquePointer, rect: OverlayRect, scale: Int) -> Bool {
        guard let (version, artwork) = decoded[path], let artwork, rect.width >= 1, rect.width.isFinite else { return false }
        // At most twice the decoded side: the largest slot (44 px at Size=2, scale 2) is 176.
        let pixels = min(2 * Self.decodedSide, max(1, Int((rect.width * Double(max(1, scale))).rounded())))
        let key = ScaledKey(path: path, version: version, pixels: pixels)
        let surface: OpaquePointer
        if let known = scaled[key] {
            surface = known
        } else {
            if scaled.count >= Self.cacheLimit {
                for surface in scaled.values { cairo_surface_destroy(surface) }
                scaled.removeAll()
            }
            // The decoded square at `pixels` a side (the painted size, scaled once).
            guard let square = Self.square(artwork.surface, side: pixels) else { return false }
            surface = square
            scaled[key] = surface
        }
        cairo_save(cr)
        cairo_translate(cr, rect.x, rect.y)
        cairo_scale(cr, rect.width / Double(pixels), rect.height / Double(pixels))
        cairo_set_source_surface(cr, surface, 0, 0)
        cairo_paint(cr)
        cairo_restore(cr)
        return true
    }

    private static func version(_ path: String) -> Version? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return Version(
            device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
            seconds: info.st_mtim.tv_sec, nanoseconds: info.st_mtim.tv_nsec)
    }

    // MARK: Reading

    /// The file at `path`, read and decoded within the bounds above.
    package static func load(_ path: String) -> Result<Artwork, ArtworkRefusal> {
        read(path).flatMap { decode($0) }
    }

    /// The bytes of the regular file at `path`, at most `maximumFileBytes`.
    package static func read(_ path: String) -> Result<[UInt8], ArtworkRefusal> {
        let fd = openFollowingNoLink(path)
        guard fd >= 0 else { return .failure(.cannotOpen(errno: errno)) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return .failure(.unreadable) }
        guard info.st_mode & S_IFMT == S_IFREG else { return .failure(.notRegularFile) }
        let size = Int(info.st_size)
        guard size > 0 else { return .failure(.empty) }
        guard size <= maximumFileBytes else { return .failure(.tooLarge(bytes: size)) }
        var bytes = [UInt8](repeating: 0, count: size)
        var filled = 0
        let complete = bytes.withUnsafeMutableBytes { buffer -> Bool in
            while filled < size {
                let count = Glibc.read(fd, buffer.baseAddress! + filled, size - filled)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return false }
                filled += count
            }
            return true
        }
        return complete ? .success(bytes) : .failure(.unreadable)
    }

    /// Opens `path` for reading one component at a time from `/`, refusing a symbolic link
    /// anywhere in it: the picture a producer names is the file at that very path, never one a
    /// link there leads to — not another folder through a folder's link, not another process's
    /// files through `/proc/<pid>/cwd` or `/proc/<pid>/root` (links, to the kernel), not a file
    /// the producer could not name itself through a link it placed. Each folder is opened
    /// `O_PATH | O_NOFOLLOW | O_DIRECTORY` (a link there is `ENOTDIR`), the file itself
    /// `O_NOFOLLOW` (a link is `ELOOP`) and `O_NONBLOCK` (a FIFO does not wait for a writer).
    /// -1 with `errno` set when it cannot.
    static func openFollowingNoLink(_ path: String) -> Int32 {
        let components = path.split(separator: "/", omittingEmptySubsequences: true)
        guard path.hasPrefix("/"), let name = components.last,
            !components.contains(where: { $0 == "." || $0 == ".." })
        else {
            errno = EINVAL
            return -1
        }
        var folder = open("/", Self.openPathOnly | O_DIRECTORY | O_CLOEXEC)
        guard folder >= 0 else { return -1 }
        for component in components.dropLast() {
            let next = openat(folder, String(component), Self.openPathOnly | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            let error = errno
            close(folder)
            guard next >= 0 else {
                errno = error
                return -1
            }
            folder = next
        }
        let fd = openat(folder, String(name), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        let error = errno
        close(folder)
        errno = error
        return fd
    }

    /// `O_PATH`, which Glibc's module leaves out (a GNU extension); the same on every Linux
    /// architecture Swift builds for.
    static let openPathOnly: Int32 = 0o10000000

    // MARK: Decoding

    /// `bytes` as a picture: PNG or JPEG by their signature, never anything else; refused over
    /// `maximumSide` pixels a side when the header is read, before any pixel is; the middle
    /// square kept, at most `decodedSide` pixels a side.
    package static func decode(_ bytes: [UInt8]) -> Result<Artwork, ArtworkRefusal> {
        switch ArtworkFormat(sniffing: bytes) {
        case .png: decodePNG(bytes)
        case .jpeg: decodeJPEG(bytes)
        case nil: .failure(.notPNGOrJPEG)
        }
    }

    /// PNG through cairo, which reads the whole image or fails (gdk-pixbuf's incremental PNG
    /// loader hands back a truncated file's rows as a picture). Its size is the IHDR chunk's,
    /// which libpng requires first.
    private static func decodePNG(_ bytes: [UInt8]) -> Result<Artwork, ArtworkRefusal> {
        pngSurface(bytes).flatMap { image in
            defer { cairo_surface_destroy(image) }
            guard let square = decodedSquare(image) else { return .failure(.undecodable) }
            return .success(Artwork(surface: square))
        }
    }

    /// `bytes` as a PNG, whole, in an image surface the caller destroys; refused over
    /// `maximumSide` pixels a side when the IHDR chunk (which libpng requires first) is read,
    /// before any pixel is.
    package static func pngSurface(_ bytes: [UInt8]) -> Result<OpaquePointer, ArtworkRefusal> {
        guard ArtworkFormat(sniffing: bytes) == .png, bytes.count >= 24, bytes[12..<16].elementsEqual("IHDR".utf8) else {
            return .failure(.undecodable)
        }
        func bigEndian(_ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        let width = bigEndian(16), height = bigEndian(20)
        guard width > 0, height > 0, width <= maximumSide, height <= maximumSide else {
            return .failure(.tooManyPixels(width: width, height: height))
        }
        final class Reader { let bytes: [UInt8]; var offset = 0; init(_ bytes: [UInt8]) { self.bytes = bytes } }
        let reader = Unmanaged.passRetained(Reader(bytes))
        defer { reader.release() }
        let read: cairo_read_func_t = { closure, data, length in
            guard let closure, let data else { return CAIRO_STATUS_READ_ERROR }
            let reader = Unmanaged<Reader>.fromOpaque(closure).takeUnretainedValue()
            let count = Int(length)
            guard reader.bytes.count - reader.offset >= count else { return CAIRO_STATUS_READ_ERROR }
            reader.bytes.withUnsafeBufferPointer { data.update(from: $0.baseAddress! + reader.offset, count: count) }
            reader.offset += count
            return CAIRO_STATUS_SUCCESS
        }
        guard let image = cairo_image_surface_create_from_png_stream(read, reader.toOpaque()) else { return .failure(.undecodable) }
        guard cairo_surface_status(image) == CAIRO_STATUS_SUCCESS else {
            cairo_surface_destroy(image)
            return .failure(.undecodable)
        }
        return .success(image)
    }

    /// What may follow a JPEG's End Of Image marker (some writers pad the file).
    static let jpegTrailingBytes = 16
    /// The most scans a JPEG may have: a baseline one has one per component at most, a
    /// progressive one about ten; every scan of a progressive picture is another pass over
    /// all of it.
    static let maximumJPEGScans = 64

    /// Whether `bytes` are a JPEG the decoder is given at all: its markers walked from Start Of
    /// Image to End Of Image (at most `jpegTrailingBytes` after it), one frame, baseline,
    /// extended or progressive with Huffman coding (SOF0–SOF2) — the arithmetic-coded,
    /// lossless and hierarchical kinds, which no album art uses, are refused (libjpeg spins
    /// for ever on a 173-byte arithmetic-coded file that fuzz-artwork found) —, at most
    /// `maximumJPEGScans` scans. libjpeg only warns of a file that ends early and fills the
    /// rest grey: a file without its End Of Image is refused here.
    static func isAcceptableJPEG(_ bytes: [UInt8]) -> Bool {
        var index = 2, scans = 0, frames = 0
        while index + 1 < bytes.count {
            guard bytes[index] == 0xFF else { return false }
            let marker = bytes[index + 1]
            index += 2
            switch marker {
            case 0xFF:
                index -= 1  // a fill byte before the marker
            case 0xD9:
                return frames == 1 && scans > 0 && bytes.count - index <= jpegTrailingBytes
            case 0x01, 0xD0...0xD7:
                continue
            default:
                guard index + 1 < bytes.count else { return false }
                let length = Int(bytes[index]) << 8 | Int(bytes[index + 1])
                guard length >= 2, index + length <= bytes.count else { return false }
                switch marker {
                case 0xC0, 0xC1, 0xC2: frames += 1
                case 0xC3, 0xC5...0xC7, 0xC9...0xCB, 0xCD...0xCF, 0xDE: return false
                case 0xDA:
                    scans += 1
                    guard frames == 1, scans <= maximumJPEGScans else { return false }
                    index += length
                    // The entropy-coded data: a 0xFF in it is followed by 0x00 or a restart
                    // marker; anything else starts the next marker.
                    while index + 1 < bytes.count, !(bytes[index] == 0xFF && bytes[index + 1] != 0x00 && !(0xD0...0xD7).contains(bytes[index + 1])) {
                        index += 1
                    }
                    continue
                default: break
                }
                index += length
            }
        }
        return false
    }

    /// JPEG through gdk-pixbuf's JPEG loader, asked for by name: the header's size refused or
    /// scaled down (libjpeg decodes at a fraction of the size) before the pixels are decoded.
    private static func decodeJPEG(_ bytes: [UInt8]) -> Result<Artwork, ArtworkRefusal> {
        guard isAcceptableJPEG(bytes) else { return .failure(.undecodable) }
        return JPEGDecoding().decode(bytes).flatMap { image in
            defer { cairo_surface_destroy(image) }
            return decodedSquare(image).map { .success(Artwork(surface: $0)) } ?? .failure(.undecodable)
        }
    }

    /// The middle square of `image`, scaled down to at most `decodedSide` pixels a side.
    private static func decodedSquare(_ image: OpaquePointer) -> OpaquePointer? {
        let shorter = min(Int(cairo_image_surface_get_width(image)), Int(cairo_image_surface_get_height(image)))
        return square(image, side: min(shorter, decodedSide))
    }

    /// The middle square of `image`, scaled to `side` pixels a side.
    private static func square(_ image: OpaquePointer, side: Int) -> OpaquePointer? {
        let width = Int(cairo_image_surface_get_width(image)), height = Int(cairo_image_surface_get_height(image))
        guard width > 0, height > 0, side > 0 else { return nil }
        let shorter = min(width, height)
        guard let surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, Int32(side), Int32(side)),
            cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS
        else { return nil }
        let cr = cairo_create(surface)!
        let factor = Double(side) / Double(shorter)
        cairo_scale(cr, factor, factor)
        cairo_translate(cr, -Double(width - shorter) / 2, -Double(height - shorter) / 2)
        cairo_set_source_surface(cr, image, 0, 0)
        cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_GOOD)
        cairo_paint(cr)
        cairo_destroy(cr)
        cairo_surface_flush(surface)
        return surface
    }

    /// An 8-bit RGB(A) pixbuf as a cairo ARGB32 surface (premultiplied, as cairo keeps it).
    static func surface(_ pixbuf: OpaquePointer) -> OpaquePointer? {
        let width = Int(gdk_pixbuf_get_width(pixbuf)), height = Int(gdk_pixbuf_get_height(pixbuf))
        let channels = Int(gdk_pixbuf_get_n_channels(pixbuf)), stride = Int(gdk_pixbuf_get_rowstride(pixbuf))
        let alpha = gdk_pixbuf_get_has_alpha(pixbuf) != 0
        guard width > 0, height > 0, width <= maximumSide, height <= maximumSide, gdk_pixbuf_get_bits_per_sample(pixbuf) == 8,
            channels == (alpha ? 4 : 3), let pixels = gdk_pixbuf_read_pixels(pixbuf)
        else { return nil }
        guard let surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, Int32(width), Int32(height)),
            cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS, let data = cairo_image_surface_get_data(surface)
        else { return nil }
        cairo_surface_flush(surface)
        let outStride = Int(cairo_image_surface_get_stride(surface))
        for y in 0..<height {
            let source = pixels + y * stride
            let row = UnsafeMutableRawPointer(data + y * outStride).assumingMemoryBound(to: UInt32.self)
            for x in 0..<width {
                let p = source + x * channels
                let a = alpha ? UInt32(p[3]) : 255
                func premultiplied(_ c: UInt8) -> UInt32 { (UInt32(c) * a + 127) / 255 }
                row[x] = a << 24 | premultiplied(p[0]) << 16 | premultiplied(p[1]) << 8 | premultiplied(p[2])
            }
        }
        cairo_surface_mark_dirty(surface)
        return surface
    }
}

/// One JPEG decode by gdk-pixbuf's loader, and what its size-prepared handler saw and decided.
private final class JPEGDecoding {
    var width = 0, height = 0
    var refused = false

    /// The picture as a cairo surface (the caller's to destroy), scaled so that its shorter side
    /// is at most `ArtworkLoader.decodedSide`.
    func decode(_ bytes: [UInt8]) -> Result<OpaquePointer, ArtworkRefusal> {
        guard let loader = gdk_pixbuf_loader_new_with_type("jpeg", nil) else { return .failure(.undecodable) }
        defer { g_object_unref(loader) }
        let handler: @convention(c) (UnsafeMutableRawPointer?, Int32, Int32, UnsafeMutableRawPointer?) -> Void = { loader, width, height, data in
            guard let loader, let data else { return }
            Unmanaged<JPEGDecoding>.fromOpaque(data).takeUnretainedValue()
                .sizePrepared(loader.assumingMemoryBound(to: GdkPixbufLoader.self), width: Int(width), height: Int(height))
        }
        g_signal_connect_data(
            UnsafeMutableRawPointer(loader), "size-prepared", unsafeBitCast(handler, to: GCallback.self),
            Unmanaged.passUnretained(self).toOpaque(), nil, GConnectFlags(rawValue: 0))
        let written = feed(bytes, to: loader)
        // Closing fails for a file that ended early: no half-decoded picture is shown.
        let closed = gdk_pixbuf_loader_close(loader, nil) != 0
        if refused { return .failure(.tooManyPixels(width: width, height: height)) }
        guard written, closed, let pixbuf = gdk_pixbuf_loader_get_pixbuf(loader), let image = ArtworkLoader.surface(pixbuf) else {
            return .failure(.undecodable)
        }
        return .success(image)
    }

    private func sizePrepared(_ loader: UnsafeMutablePointer<GdkPixbufLoader>, width: Int, height: Int) {
        self.width = width
        self.height = height
        guard width > 0, height > 0, width <= ArtworkLoader.maximumSide, height <= ArtworkLoader.maximumSide else {
            // A size of zero makes the loader stop with an error before it allocates.
            refused = true
            gdk_pixbuf_loader_set_size(loader, 0, 0)
            return
        }
        let factor = min(1, Double(ArtworkLoader.decodedSide) / Double(min(width, height)))
        gdk_pixbuf_loader_set_size(loader, max(1, Int32((Double(width) * factor).rounded())), max(1, Int32((Double(height) * factor).rounded())))
    }

    /// Writes `bytes` to the loader in pieces, so that a refusal in the header stops the decode
    /// before the rest is fed; false when the loader failed.
    private func feed(_ bytes: [UInt8], to loader: UnsafeMutablePointer<GdkPixbufLoader>) -> Bool {
        bytes.withUnsafeBufferPointer { buffer in
            var offset = 0
            while offset < buffer.count, !refused {
                let count = min(buffer.count - offset, 65536)
                guard gdk_pixbuf_loader_write(loader, buffer.baseAddress! + offset, gsize(count), nil) != 0 else { return false }
                offset += count
            }
            return true
        }
    }
}
