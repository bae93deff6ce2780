import CPangoCairo
import Foundation
import Glibc
import IslandCore
import IslandPresenter
import OrderedJSON
import OrderedCollections
import SeededRandom
import Testing
@testable import IslandOverlay

/// Pictures written by the test itself, in a directory of its own.
final class ArtworkFiles {
    let directory: String

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("island-artwork-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    func path(_ name: String) -> String { directory + "/" + name }

    @discardableResult
    func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        try Data(bytes).write(to: URL(fileURLWithPath: path(name)))
        return path(name)
    }

    /// A `width`×`height` PNG written by cairo: red on its left half, blue on its right.
    func png(width: Int = 40, height: Int = 24) throws -> [UInt8] {
        let surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, Int32(width), Int32(height))!
        defer { cairo_surface_destroy(surface) }
        let cr = cairo_create(surface)!
        cairo_set_source_rgb(cr, 1, 0, 0)
        cairo_rectangle(cr, 0, 0, Double(width) / 2, Double(height))
        cairo_fill(cr)
        cairo_set_source_rgb(cr, 0, 0, 1)
        cairo_rectangle(cr, Double(width) / 2, 0, Double(width) / 2, Double(height))
        cairo_fill(cr)
        cairo_destroy(cr)
        let file = path("made-\(width)x\(height).png")
        #expect(cairo_surface_write_to_png(surface, file) == CAIRO_STATUS_SUCCESS)
        return Array(try Data(contentsOf: URL(fileURLWithPath: file)))
    }

    /// The same picture as a JPEG, saved by gdk-pixbuf.
    func jpeg(width: Int = 40, height: Int = 24) throws -> [UInt8] {
        let png = try write("source-\(width)x\(height).png", try png(width: width, height: height))
        let pixbuf = try #require(gdk_pixbuf_new_from_file(png, nil))
        defer { g_object_unref(UnsafeMutableRawPointer(pixbuf)) }
        let file = path("made-\(width)x\(height).jpg")
        #expect(gdk_pixbuf_savev(pixbuf, file, "jpeg", nil, nil, nil) != 0)
        return Array(try Data(contentsOf: URL(fileURLWithPath: file)))
    }
}

/// PNG's CRC-32 (ISO 3309), for chunks the test writes itself.
func crc32(_ bytes: some Sequence<UInt8>) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in bytes {
        crc ^= UInt32(byte)
        for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
    }
    return ~crc
}

/// A PNG's first bytes: its signature and an IHDR chunk (RGBA, 8 bits) with a valid CRC.
func pngHeader(width: UInt32, height: UInt32) -> [UInt8] {
    func be(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    let body = Array("IHDR".utf8) + be(width) + be(height) + [8, 6, 0, 0, 0]
    return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + be(13) + body + be(crc32(body))
}

/// The colour at the middle of the left and right quarters of what `loader` draws for `path`
/// in a 32 px square.
func drawnColours(_ loader: ArtworkLoader, _ path: String) -> (left: UInt32, right: UInt32) {
    let surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 32, 32)!
    defer { cairo_surface_destroy(surface) }
    let cr = cairo_create(surface)!
    #expect(loader.draw(path, cairo: cr, rect: OverlayRect(x: 0, y: 0, width: 32, height: 32), scale: 1))
    cairo_destroy(cr)
    cairo_surface_flush(surface)
    let data = cairo_image_surface_get_data(surface)!, stride = Int(cairo_image_surface_get_stride(surface))
    func pixel(_ x: Int, _ y: Int) -> UInt32 { UnsafeRawPointer(data + y * stride).assumingMemoryBound(to: UInt32.self)[x] }
    return (pixel(6, 16), pixel(26, 16))
}

@Suite("Artwork: only a bounded regular file, decoded only as PNG or JPEG by its bytes")
struct ArtworkLoaderTests {
    @Test("a PNG and a JPEG decode to their middle square, cropped and kept small")
    func decodes() throws {
        let files = try ArtworkFiles()
        let png = try ArtworkLoader.decode(try files.png()).get()
        #expect(png.side == 24, "the middle 24×24 of a 40×24 picture")
        let jpeg = try ArtworkLoader.decode(try files.jpeg()).get()
        #expect(jpeg.side == 24)
        let large = try ArtworkLoader.decode(try files.png(width: 600, height: 400)).get()
        #expect(large.side == ArtworkLoader.decodedSide)
        let largeJPEG = try ArtworkLoader.decode(try files.jpeg(width: 600, height: 400)).get()
        #expect(largeJPEG.side == ArtworkLoader.decodedSide)
    }

    @Test("drawn as the picture: red at the left, blue at the right, from a PNG and a JPEG alike")
    func draws() throws {
        let files = try ArtworkFiles()
        let loader = ArtworkLoader()
        for (name, bytes) in [("a.png", try files.png()), ("a.jpg", try files.jpeg())] {
            let path = try files.write(name, bytes)
            #expect(loader.canDraw(path))
            let (left, right) = drawnColours(loader, path)
            #expect(left >> 16 & 0xFF > 200 && left & 0xFF < 60, "\(name): left is red, \(String(left, radix: 16))")
            #expect(right & 0xFF > 200 && right >> 16 & 0xFF < 60, "\(name): right is blue, \(String(right, radix: 16))")
        }
    }

    @Test("the format is told by the bytes, not the name: a PNG named .jpg decodes as a PNG, a JPEG named .png as a JPEG")
    func sniffed() throws {
        let files = try ArtworkFiles()
        #expect(ArtworkFormat(sniffing: try files.png()) == .png)
        #expect(ArtworkFormat(sniffing: try files.jpeg()) == .jpeg)
        #expect(throws: Never.self) { try ArtworkLoader.load(try files.write("cover.jpg", try files.png())).get() }
        #expect(throws: Never.self) { try ArtworkLoader.load(try files.write("cover.png", try files.jpeg())).get() }
    }

    @Test("refused without crashing: text, a FIFO, a symbolic link, a directory, 3 MiB, nothing, no such file")
    func refusesFiles() throws {
        let files = try ArtworkFiles()
        #expect(ArtworkLoader.load(try files.write("notes.png", Array("not a picture\n".utf8))).failure == .notPNGOrJPEG)
        let fifo = files.path("fifo.png")
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(ArtworkLoader.load(fifo).failure == .notRegularFile, "opened without waiting for a writer, then refused")
        let target = try files.write("real.png", try files.png())
        let link = files.path("link.png")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        #expect(ArtworkLoader.load(link).failure == .cannotOpen(errno: ELOOP))
        // A link anywhere on the path: a folder's, or the kernel's own for another process.
        let linkedFolder = files.path("linked-folder")
        try FileManager.default.createSymbolicLink(atPath: linkedFolder, withDestinationPath: files.directory)
        #expect(ArtworkLoader.load(linkedFolder + "/real.png").failure == .cannotOpen(errno: ENOTDIR))
        #expect(ArtworkLoader.load("/proc/self/cwd" + target).failure == .cannotOpen(errno: ENOTDIR))
        #expect(ArtworkLoader.load("/proc/\(getpid())/root" + target).failure == .cannotOpen(errno: ENOTDIR))
        #expect(throws: Never.self) { try ArtworkLoader.load(target).get() }
        let directory = files.path("folder.png")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        #expect(ArtworkLoader.load(directory).failure == .notRegularFile)
        let huge = try files.write("huge.png", try files.png() + [UInt8](repeating: 0, count: 3 << 20))
        #expect(ArtworkLoader.load(huge).failure == .tooLarge(bytes: (try? Data(contentsOf: URL(fileURLWithPath: huge)).count) ?? 0))
        #expect(ArtworkLoader.load(try files.write("empty.png", [])).failure == .empty)
        #expect(ArtworkLoader.load(files.path("missing.png")).failure == .cannotOpen(errno: ENOENT))
        #expect(ArtworkLoader.load("/proc/\(getpid())/status").failure == .empty, "a file the kernel makes up says it holds nothing")
    }

    @Test("a 20000×20000 header is refused before a pixel is decoded, as PNG and as JPEG")
    func refusesHugePictures() throws {
        let files = try ArtworkFiles()
        // The PNG: a valid header and a little image data; nothing of 1.6 GB is ever allocated.
        let png = pngHeader(width: 20000, height: 20000) + [0, 0, 0, 0] + Array("IDAT".utf8) + [0x35, 0xAF, 0x06, 0x1E]
        #expect(ArtworkLoader.decode(png).failure == .tooManyPixels(width: 20000, height: 20000))
        #expect(ArtworkLoader.decode(pngHeader(width: 4097, height: 16)).failure == .tooManyPixels(width: 4097, height: 16))
        #expect(ArtworkLoader.decode(pngHeader(width: 0, height: 16)).failure == .tooManyPixels(width: 0, height: 16))
        // The JPEG: a real one with its frame header (SOF0) saying 20000×20000.
        var jpeg = try files.jpeg()
        let sof = try #require(jpeg.indices.dropLast().first { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xC0 })
        jpeg.replaceSubrange(sof + 5..<sof + 9, with: [0x4E, 0x20, 0x4E, 0x20])
        #expect(ArtworkLoader.decode(jpeg).failure == .tooManyPixels(width: 20000, height: 20000))
    }

    @Test("a truncated PNG or JPEG is refused, not drawn half decoded")
    func refusesTruncated() throws {
        let files = try ArtworkFiles()
        for bytes in [try files.png(width: 64, height: 64), try files.jpeg(width: 64, height: 64)] {
            for length in [3, 8, 24, 33, bytes.count / 2, bytes.count - 13, bytes.count - 1] {
                #expect(ArtworkLoader.decode(Array(bytes.prefix(length))).failure != nil, "\(length) of \(bytes.count) bytes")
            }
        }
    }

    /// 173 bytes, found by fuzz-artwork: an arithmetic-coded frame (SOF9) on which libjpeg,
    /// through gdk-pixbuf's loader, spins for ever.
    static let spinningJPEG: [UInt8] = {
        let hex = [
            "ffd8ffdb0043000806060706050c0707074a46494600140c0b0b0c191220242e27201c313434341f27393d385b323c2e",
            "333432ff7adb0043010909090c0b0c180d0d1832333432ffdb0043010909090c0b0c180d0d1831211c2132320c180d0d",
            "1831211c213232ffd8ff32323232323232323232323232323232323232323232323232323232323232323232ffc90011",
            "08002f005c03012200021101031101ffda000c030100021103118affd9",
        ].joined()
        return stride(from: 0, to: hex.count, by: 2).map { UInt8(hex.dropFirst($0).prefix(2), radix: 16)! }
    }()

    @Test("refused before the decoder sees them: arithmetic coding, lossless frames, two frames, too many scans, no End Of Image")
    func refusesJPEGKinds() throws {
        #expect(Self.spinningJPEG.count == 173)
        #expect(ArtworkLoader.decode(Self.spinningJPEG).failure == .undecodable)
        let files = try ArtworkFiles()
        let jpeg = try files.jpeg()
        #expect(ArtworkLoader.isAcceptableJPEG(jpeg))
        let sof = try #require(jpeg.indices.dropLast().first { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xC0 })
        for kind: UInt8 in [0xC3, 0xC5, 0xC9, 0xCA, 0xCB, 0xCF] {
            var other = jpeg
            other[sof + 1] = kind
            #expect(ArtworkLoader.decode(other).failure == .undecodable, "SOF 0x\(String(kind, radix: 16))")
        }
        var progressive = jpeg
        progressive[sof + 1] = 0xC2
        #expect(ArtworkLoader.isAcceptableJPEG(progressive), "progressive frames are read")
        // Scans past the bound: the file's one scan repeated.
        let sos = try #require(jpeg.indices.dropLast().first { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xDA })
        let scan = Array(jpeg[sos..<(jpeg.count - 2)])
        let many = Array(jpeg[..<sos]) + Array([[UInt8]](repeating: scan, count: ArtworkLoader.maximumJPEGScans + 1).joined()) + [0xFF, 0xD9]
        #expect(!ArtworkLoader.isAcceptableJPEG(many))
        #expect(!ArtworkLoader.isAcceptableJPEG(Array(jpeg.dropLast(2))), "no End Of Image")
        #expect(!ArtworkLoader.isAcceptableJPEG(jpeg + [UInt8](repeating: 0, count: 17)), "more than padding after it")
        #expect(ArtworkLoader.isAcceptableJPEG(jpeg + [UInt8](repeating: 0, count: 16)))
    }

    @Test("the loader keeps what it decoded: a changed file is read again, a file gone is no longer drawn")
    func cachesByVersion() throws {
        let files = try ArtworkFiles()
        let loader = ArtworkLoader()
        let path = try files.write("cover.png", try files.png())
        #expect(loader.canDraw(path))
        try files.write("cover.png", Array("now text".utf8))
        #expect(!loader.canDraw(path), "another size (and time): read again, and refused")
        try FileManager.default.removeItem(atPath: path)
        #expect(!loader.canDraw(path))
        #expect(
            !loader.draw(
                path, cairo: cairo_create(cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 4, 4))!, rect: .init(x: 0, y: 0, width: 4, height: 4), scale: 1))
    }

    @Test("the fuzz-artwork corpus decodes or is refused, and what decodes had a PNG or JPEG signature and is a small square")
    func corpus() throws {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fuzz/Corpus/fuzz-artwork")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(names.count >= 10)
        for name in names {
            let bytes = Array(try Data(contentsOf: directory.appendingPathComponent(name)))
            guard case .success(let artwork) = ArtworkLoader.decode(bytes) else { continue }
            #expect(ArtworkFormat(sniffing: bytes) != nil, "\(name)")
            #expect((1...ArtworkLoader.decodedSide).contains(artwork.side), "\(name)")
        }
    }

    @Test("whatever the bytes, decoding ends without a trap and gives a small square or a refusal (a seeded fuzz)")
    func fuzz() throws {
        let files = try ArtworkFiles()
        let seeds = [try files.png(width: 12, height: 9), try files.jpeg(width: 12, height: 9), pngHeader(width: 3, height: 3)]
        var generator = SplitMix64(seed: 27)
        var decoded = 0
        for _ in 0..<3000 {
            var bytes = seeds[Int(generator.next() % UInt64(seeds.count))]
            for _ in 0..<(1 + generator.next() % 4) {
                let at = Int(generator.next() % UInt64(max(1, bytes.count)))
                switch generator.next() % 4 {
                case 0: if at < bytes.count { bytes[at] = UInt8(truncatingIfNeeded: generator.next()) }
                case 1: bytes = Array(bytes.prefix(at))
                case 2:
                    bytes.insert(contentsOf: (0..<(generator.next() % 16)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }, at: min(at, bytes.count))
                default: if at + 8 < bytes.count { bytes[at..<at + 8] = [0x7F, 0xFF, 0xFF, 0xFF, 0x7F, 0xFF, 0xFF, 0xFF] }
                }
            }
            if case .success(let artwork) = ArtworkLoader.decode(bytes) {
                decoded += 1
                #expect(artwork.side >= 1 && artwork.side <= ArtworkLoader.decodedSide)
            }
        }
        #expect(decoded > 100, "mutations that keep the picture valid decode, so the bound above is checked")
    }
}

@Suite("Artwork in the island: drawn where it decodes, its fallback elsewhere, its path in no text")
struct ArtworkLayoutTests {
    /// Every region given, so that none comes from the default layout (which shows the state's
    /// values, a producer's own text, as "Label: value").
    static let artLayout: JSON = [
        "compactLeading": ["type": "image", "source": "{{state.art}}", "fallback": ["type": "symbol", "name": "🎵"]],
        "compactTrailing": ["type": "text", "template": "0:30"],
        "minimal": ["type": "image", "source": "{{state.art}}"],
        "lockScreen": [
            "type": "hstack",
            "children": [
                ["type": "image", "source": "{{state.art}}", "fallback": ["type": "symbol", "name": "🎵"]],
                ["type": "text", "template": "Clair de Lune"],
            ],
        ],
        "expanded": [
            "leading": ["type": "image", "source": "{{state.art}}", "priority": 1, "fallback": ["type": "symbol", "name": "🎵"]],
            "center": [
                "type": "vstack", "priority": 2,
                "children": [
                    ["type": "text", "template": "Clair de Lune"], ["type": "text", "template": "Claude Debussy"],
                ],
            ],
        ],
    ]

    static func scene(art: String) -> IslandScene {
        Scenes.scene(
            ["mode": "expanded", "attached": "a", "expanded": "a"],
            items: [Scenes.item("a", layout: artLayout, state: ["art": .string(art)])])
    }

    @Test("a picture the loader decodes: a square beside the title and subtitle, as tall as both")
    func drawnWhenItDecodes() throws {
        let files = try ArtworkFiles()
        let path = try files.write("cover.jpg", try files.jpeg())
        let loader = ArtworkLoader()
        let layout = OverlayLayout(canvasWidth: 440, canvasHeight: 640, top: 8, metrics: FixedMetrics(), artwork: loader)
        let frame = layout.frame(Self.scene(art: "file://" + path))
        let art = try #require(frame.content.first { $0.primitive == .image(path: path) })
        #expect(art.rect.width == art.rect.height)
        #expect(art.rect.height == layout.geometry.expandedArtwork)
        let title = try #require(frame.content.first { $0.primitive == .text("Clair de Lune", font: .title, ink: .primary, alignment: .leading) })
        #expect(title.rect.x >= art.rect.maxX, "the title reads from beside the picture")
        #expect(!frame.content.contains { $0.primitive == .symbol("🎵") })
        #expect(!frame.hits.contains { $0.name.contains(path) || $0.name.contains("cover") }, "no accessible name says the path")
        // Painted: the picture's colours are on the canvas.
        let painter = OverlayPainter(icons: nil, artwork: loader)
        let png = files.path("frame.png")
        #expect(painter.writePNG(frame, crop: OverlayRect(x: 0, y: 0, width: 440, height: 200), to: png))
    }

    @Test(
        "no file, not a picture, another host, the network: the fallback, laid out as if the picture never was",
        arguments: ["/nonexistent/cover.jpg", "NOTES", "file://host/cover.png", "https://example.com/cover.png"])
    func fallback(_ source: String) throws {
        let files = try ArtworkFiles()
        let notes = try files.write("notes.jpg", Array("not a picture".utf8))
        let art = source == "NOTES" ? notes : source
        let layout = OverlayLayout(canvasWidth: 440, canvasHeight: 640, top: 8, metrics: FixedMetrics(), artwork: ArtworkLoader())
        let frame = layout.frame(Self.scene(art: art))
        #expect(!frame.content.contains { if case .image = $0.primitive { true } else { false } })
        #expect(frame.content.contains { $0.primitive == .symbol("🎵") })
    }

    @Test("without an artwork source (the SVG document) every picture is its fallback; texts never hold the path")
    func textSinks() throws {
        let files = try ArtworkFiles()
        let path = try files.write("cover.png", try files.png())
        let scene = Self.scene(art: path)
        let frame = OverlayLayout(canvasWidth: 440, canvasHeight: 640, top: 8, metrics: FixedMetrics()).frame(scene)
        #expect(frame.content.contains { $0.primitive == .symbol("🎵") })
        #expect(!frame.content.contains { if case .image = $0.primitive { true } else { false } })
        let svg = try #require(OverlaySnapshot.svg(scene, painter: OverlayPainter(icons: nil)))
        #expect(!svg.contains(files.directory) && !svg.contains("cover.png"))
        let expanded = try #require(scene.expanded)
        #expect(IslandScene.lockScreenText(expanded) == "🎵 Clair de Lune")
        #expect(IslandScene.compactText(expanded) == "🎵 0:30")
        #expect(expanded.layout.expandedLeading?.view.displayText == "🎵")
        #expect(!TerminalFrame(columns: 80, rows: 24).render(scene, chrome: .init()).contains { $0.plain.contains(path) })
        // The description of a frame with a picture in it says there is one, never where from.
        let placed = OverlayPlaced(rect: .init(x: 0, y: 0, width: 44, height: 44), primitive: .image(path: path), slot: "s")
        let description = OverlaySnapshot.description(of: OverlayFrame(form: .expanded, listOpen: false, shapes: [], content: [placed], hits: []))
        #expect(description == ["Picture"])
    }
}

extension Result {
    var failure: Failure? { if case .failure(let failure) = self { failure } else { nil } }
}
