import IslandCore
import OrderedJSON
import OrderedCollections
import SeededRandom
import Testing

/// The `image` view: a picture from a local file named by a template, or its fallback; the
/// path of the file never reaches a text.
@Suite("Layout image view: a local file or its fallback, never a path in text")
struct LayoutImageTests {
    private func layout(_ view: String) throws -> Layout {
        try Layout(json: .object(["minimal": try json(view)]))
    }

    private func render(_ view: String, art: JSON?) throws -> RenderedView {
        var state: JSONObject = ["app": "☕"]
        if let art { state["art"] = art }
        let layout = try layout(view)
        return LayoutRenderer(attributes: [:], state: state, now: 0).render(try #require(layout.minimal?.view))
    }

    private let withFallback = #"{"type": "image", "source": "{{state.art}}", "fallback": {"type": "symbol", "name": "{{state.app}}"}}"#

    @Test("parsed with its source and fallback; re-validated from its own JSON to the same layout")
    func parses() throws {
        let parsed = try layout(withFallback)
        #expect(
            parsed.minimal?.view
                == .image(
                    LayoutImage(
                        source: try LayoutTemplate("{{state.art}}"),
                        fallback: .symbol(LayoutSymbol(name: try LayoutTemplate("{{state.app}}"))))))
        #expect(try Layout(json: .object(parsed.json)) == parsed)
        #expect(try layout(#"{"type": "image", "source": "file:///usr/share/app/logo.png"}"#).minimal?.view.typeName == "image")
        #expect(try layout(#"{"type": "image", "source": "/usr/share/app/logo.png"}"#).minimal?.view.typeName == "image")
    }

    @Test("refused: no source, a written-out source that is not a local file, an unknown key, a fallback that is not a view")
    func validation() throws {
        #expect(try layoutError(#"{"minimal": {"type": "image"}}"#) == LayoutError(path: "minimal.source", reason: "required"))
        for source in ["https://example.com/a.png", "file://host/a.png", "a.png", "/tmp/../a.png", ""] {
            #expect(
                try layoutError(#"{"minimal": {"type": "image", "source": "\#(source)"}}"#)
                    == LayoutError(path: "minimal.source", reason: "not a local file: expected a file:/// URL or an absolute path"), "\(source)")
        }
        #expect(
            try layoutError(#"{"lockScreen": {"type": "hstack", "children": [{"type": "image", "source": "/a.png", "name": "a"}]}}"#)
                == LayoutError(path: "lockScreen.children[0].name", reason: "unknown key 'name'"))
        #expect(
            try layoutError(#"{"minimal": {"type": "image", "source": "/a.png", "fallback": "☕"}}"#)
                == LayoutError(path: "minimal.fallback", reason: "expected a view object, found string"))
        #expect(
            try layoutError(#"{"minimal": {"type": "image", "source": "/a.png", "fallback": {"type": "text"}}}"#)
                == LayoutError(path: "minimal.fallback.template", reason: "required"))
    }

    @Test("the fallback counts as a view nested one deeper")
    func fallbackIsNested() throws {
        var view = #"{"type": "spacer"}"#
        for _ in 0..<(LayoutLimits.maximumDepth - 1) { view = #"{"type": "image", "source": "/a.png", "fallback": \#(view)}"# }
        #expect(try layoutError(#"{"minimal": \#(view)}"#) == nil)
        let deeper = #"{"type": "image", "source": "/a.png", "fallback": \#(view)}"#
        #expect(try layoutError(#"{"minimal": \#(deeper)}"#)?.reason == "views nested more than \(LayoutLimits.maximumDepth) deep")
    }

    @Test("a local file renders as its absolute path, decoded; the text of the view is its fallback's")
    func localFiles() throws {
        let url = try render(withFallback, art: "file:///home/u/Music/Clair%20de%20Lune/cover.jpg")
        #expect(url == .image(path: "/home/u/Music/Clair de Lune/cover.jpg", fallback: .symbol("☕")))
        #expect(url.plainText == "☕")
        #expect(try render(withFallback, art: "FILE://localhost/tmp/a.png") == .image(path: "/tmp/a.png", fallback: .symbol("☕")))
        #expect(try render(withFallback, art: "/tmp/a b.png") == .image(path: "/tmp/a b.png", fallback: .symbol("☕")))
        let alone = try render(#"{"type": "image", "source": "{{state.art}}"}"#, art: "/tmp/a.png")
        #expect(alone == .image(path: "/tmp/a.png", fallback: nil))
        #expect(alone.plainText == "")
    }

    @Test(
        "anything else renders as the fallback, or as nothing",
        arguments: [
            "http://example.com/a.png", "https://example.com/a.png", "data:image/png;base64,iVBORw0KGgo=", "file://host/a.png",
            "file:/tmp/a.png", "tmp/a.png", "./a.png", "~/a.png", "/tmp/../etc/shadow", "/tmp/./a.png", "/tmp//a.png",
            "file:///tmp/%2e%2e/etc/passwd", "/tmp/a\u{0}.png", "/tmp/a\n.png", "/tmp/\u{1B}]0;x\u{7}.png", "/tmp/a\u{85}.png",
            "file:///tmp/a%0a.png", "file:///tmp/a%C3.png", "file:///tmp/a.png?x=1", "smb://host/a.png", "", " /tmp/a.png",
        ])
    func hostileSources(_ source: String) throws {
        #expect(try render(withFallback, art: .string(source)) == .symbol("☕"))
        #expect(try render(#"{"type": "image", "source": "{{state.art}}"}"#, art: .string(source)) == .text(""))
    }

    @Test("a source of another type, or missing, is the fallback; so is a huge one, which is never cut into another path")
    func otherValues() throws {
        for value: JSON? in [nil, .int(3), .bool(true), .array(["/tmp/a.png"]), .object(["path": "/tmp/a.png"])] {
            #expect(try render(withFallback, art: value) == .symbol("☕"), "\(String(describing: value))")
        }
        let huge = "/" + String(repeating: "a/", count: 3000) + "a.png"
        #expect(try render(withFallback, art: .string(huge)) == .symbol("☕"))
        let justOver = "/" + String(repeating: "a", count: 1000)
        #expect(try render(withFallback, art: .string(justOver)) == .symbol("☕"))
    }

    @Test("whatever the state holds, a rendered image names a clean absolute path (a seeded fuzz)")
    func fuzz() throws {
        var generator = SplitMix64(seed: 27)
        let pieces = [
            "file://", "/", "localhost", "..", ".", "%", "2e", "2F", "00", "C3", "A9", "a", "é", "?", "#", "%2e%2e", " ", "\n",
            "\u{1B}", "\u{202E}", "http://", "{{", "}}",
        ]
        let view = try #require(try layout(withFallback).minimal?.view)
        var images = 0
        for _ in 0..<20_000 {
            let count = Int(generator.next() % 10)
            let start = ["", "/a", "file:///a"][Int(generator.next() % 3)]
            let source = start + (0..<count).map { _ in pieces[Int(generator.next() % UInt64(pieces.count))] }.joined()
            let rendered = LayoutRenderer(attributes: [:], state: ["art": .string(source), "app": "☕"], now: 0).render(view)
            #expect(rendered.plainText == "☕", "\(source.debugDescription)")
            guard case .image(let path, _) = rendered else {
                #expect(rendered == .symbol("☕"))
                continue
            }
            images += 1
            let segments = path.split(separator: "/", omittingEmptySubsequences: false)
            #expect(segments.first == "" && segments.dropFirst().allSatisfy { !$0.isEmpty && $0 != "." && $0 != ".." }, "\(source.debugDescription)")
            #expect(!path.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }, "\(source.debugDescription)")
        }
        #expect(images > 1000, "the pieces make valid sources too, so the checks above check something")
    }
}
