import IslandBridge
import OrderedCollections
import OrderedJSON
import SDBus
import SeededRandom
import Testing

@Suite("Album art: only a local file's path, spelt one way, reaches the state")
struct AlbumArtTests {
    @Test("local files by absolute path, localhost included; spelt again the one way")
    func localFiles() {
        #expect(AlbumArt.localFileURL("file:///home/u/Music/cover.jpg") == "file:///home/u/Music/cover.jpg")
        #expect(AlbumArt.localFileURL("FILE://localhost/tmp/a.png") == "file:///tmp/a.png")
        #expect(AlbumArt.localFileURL("file:///tmp/Clair%20de%20Lune/caf%C3%A9.png") == "file:///tmp/Clair%20de%20Lune/caf%C3%A9.png")
        #expect(
            AlbumArt.localFileURL("file:///tmp/café (1).png") == "file:///tmp/caf%C3%A9%20%281%29.png",
            "what a player leaves unencoded is encoded")
        #expect(AlbumArt.localFileURL("file:///tmp/a%2fb.png") == "file:///tmp/a/b.png", "one path, one spelling")
    }

    @Test(
        "never the network, another host, a relative or climbing path, a broken escape, a control character",
        arguments: [
            "https://i.scdn.co/image/ab67616d", "http://example.com/a.png", "data:image/png;base64,iVBORw0KGgo=",
            "file://server/share/a.png", "file:/tmp/a.png", "file:tmp/a.png", "/tmp/a.png", "file://", "file:///",
            "file:///tmp/../etc/shadow", "file:///tmp/./a.png", "file:///tmp//a.png", "file:///tmp/%2e%2e/etc/passwd",
            "file:///tmp/a%00.png", "file:///tmp/a%0a.png", "file:///tmp/a%zz.png", "file:///tmp/a%C3.png", "file:///tmp/a%",
            "file:///tmp/a.png?x=1", "file:///tmp/a.png#frag", "file:///tmp/\u{7}.png", "smb://host/a.png", "",
        ])
    func refused(_ url: String) {
        #expect(AlbumArt.localFileURL(url) == nil)
    }

    @Test("bounded: a URL the bus may have cut, or one too long for the state, is none")
    func bounded() {
        let long = "file:///" + String(repeating: "a", count: AlbumArt.maximumURLBytes)
        #expect(AlbumArt.localFileURL(long) == nil)
        let wide = "file:///" + String(repeating: "é", count: 100)
        #expect(AlbumArt.localFileURL(wide) == nil, "600 bytes once encoded, over what the state holds")
    }

    @Test("whatever a peer sends, the state holds a file:/// URL of an absolute path without . or .. (a seeded fuzz)")
    func fuzz() {
        var generator = SplitMix64(seed: 27)
        let pieces = ["file://", "/", "localhost", "..", ".", "%", "2e", "2F", "00", "C3", "A9", "a", "é", "?", "#", "%2e%2e", " ", "\n"]
        var accepted = 0
        for _ in 0..<20_000 {
            let count = Int(generator.next() % 12)
            // Mostly what a player would send, a file:// URL, for the pieces to break.
            let start = generator.next() % 4 == 0 ? "" : "file:///a"
            let url = start + (0..<count).map { _ in pieces[Int(generator.next() % UInt64(pieces.count))] }.joined()
            guard let art = AlbumArt.localFileURL(url) else { continue }
            accepted += 1
            #expect(art.hasPrefix("file:///") && art.utf8.count <= AlbumArt.maximumStateBytes, "\(url) → \(art)")
            let segments = art.dropFirst("file://".count).split(separator: "/", omittingEmptySubsequences: false).dropFirst()
            #expect(
                segments.allSatisfy { !$0.isEmpty && $0 != "." && $0 != ".." && $0.lowercased() != "%2e%2e" && $0.lowercased() != "%2e" },
                "\(url) → \(art)")
            #expect(art.allSatisfy { $0.isASCII && !$0.isWhitespace }, "\(url) → \(art)")
        }
        #expect(accepted > 1000, "the pieces make valid URLs too, so the checks above check something")
    }

    @Test("a player's local art reaches the state as artUrl; a remote one does not")
    func inTheState() {
        func art(_ url: String) -> JSON? {
            var player = MediaPlayer(busName: "org.mpris.MediaPlayer2.test", owner: ":1.7", now: 0)
            player.applyPlayer(
                [
                    "PlaybackStatus": .string("Playing"),
                    "Metadata": .vardict([("xesam:title", .string("T")), ("mpris:artUrl", .string(url))]),
                ], now: 0)
            return player.activity(source: "s", app: SourceApp(name: "P", icon: "p"), staleAfterPause: 600).content.state["artUrl"]
        }
        #expect(art("file:///home/u/.cache/art/1.jpg") == "file:///home/u/.cache/art/1.jpg")
        #expect(art("https://example.com/1.jpg") == nil)
    }
}
