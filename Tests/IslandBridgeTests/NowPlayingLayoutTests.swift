import Foundation
import IslandBridge
import IslandCore
import OrderedCollections
import OrderedJSON
import SDBus
import Testing

/// The Now Playing layout the bridge ships, drawn from the states the bridge makes of a
/// player: what a presenter shows must match what the player says.
@Suite("Now Playing layout: drawn from the bridge's own states")
struct NowPlayingLayoutTests {
    static let path = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("packaging/layouts/org.island.bridge/NowPlaying.json")

    static func layout() throws -> Layout {
        try Layout(json: try JSONParser.parse(Array(try Data(contentsOf: path))))
    }

    /// A player at `status`, 30 s into a 300 s track by `artists`.
    static func rendered(_ status: String, artists: [String] = ["Claude Debussy"], artURL: String? = nil, now: Double = 1000) throws -> RenderedLayout {
        var player = MediaPlayer(busName: "org.mpris.MediaPlayer2.mpv", owner: ":1.7", now: 0)
        var metadata: [(String, BusValue)] = [
            ("xesam:title", .string("Clair de Lune")), ("xesam:album", .string("Suite bergamasque")),
            ("mpris:length", .int64(300_000_000)),
        ]
        if !artists.isEmpty { metadata.append(("xesam:artist", .strings(artists))) }
        if let artURL { metadata.append(("mpris:artUrl", .string(artURL))) }
        player.applyPlayer(["PlaybackStatus": .string(status), "Metadata": .vardict(metadata), "Position": .int64(30_000_000)], now: now)
        let app = SourceApp(name: "mpv Media Player", icon: "mpv", desktopEntry: "mpv")
        let activity = player.activity(source: "s", app: app, staleAfterPause: 600)
        return LayoutRenderer(attributes: activity.attributes, state: activity.content.state, now: now).render(try layout())
    }

    static func buttons(_ view: RenderedView?) -> [(action: String, label: String, symbol: String?)] {
        switch view {
        case .button(let action, let label, let symbol): [(action, label, symbol)]
        case .hstack(let children, _), .vstack(let children, _): children.flatMap(buttons)
        case .link(_, let child): buttons(child)
        default: []
        }
    }

    static func playPause(_ view: RenderedView?) throws -> (label: String, symbol: String?) {
        let button = try #require(buttons(view).first { $0.action == "playPause" })
        return (button.label, button.symbol)
    }

    @Test(
        "the play/pause button shows pause while playing and play while paused or stopped, its label saying the same",
        arguments: [
            ("Playing", "Pause", "media-playback-pause-symbolic"), ("Paused", "Play", "media-playback-start-symbolic"),
            ("Stopped", "Play", "media-playback-start-symbolic"),
        ])
    func playPauseFollowsTheState(status: String, label: String, symbol: String) throws {
        let layout = try Self.rendered(status)
        for region in [layout.expandedBottom, layout.lockScreen] {
            let button = try Self.playPause(region?.view)
            #expect(button.label == label)
            #expect(button.symbol == symbol)
        }
    }

    @Test("every media button has a symbol and a label")
    func buttonsHaveSymbolsAndLabels() throws {
        for status in ["Playing", "Paused"] {
            let layout = try Self.rendered(status)
            for region in [layout.expandedBottom, layout.lockScreen] {
                let buttons = Self.buttons(region?.view)
                #expect(buttons.map(\.action) == ["previous", "playPause", "next"])
                #expect(buttons.allSatisfy { $0.symbol?.isEmpty == false && !$0.label.isEmpty })
            }
        }
    }

    /// One convention on every form: the glyph is the play/pause button's, which the user sees
    /// a second later in the expanded island (playing: pause), never its opposite.
    @Test("the compact glyph is the glyph of the expanded play/pause button", arguments: ["Playing", "Paused", "Stopped"])
    func compactGlyph(_ status: String) throws {
        let layout = try Self.rendered(status)
        let button = try #require(Self.buttons(layout.expandedBottom?.view).first { $0.action == "playPause" })
        #expect(layout.compactTrailing?.view == .symbol(try #require(button.symbol)))
    }

    @Test("expanded: the title over the artist and album, two lines; no dangling dash without an artist")
    func titleOverArtist() throws {
        let center = try #require(try Self.rendered("Playing").expandedCenter?.view)
        #expect(center == .vstack([.text("Clair de Lune"), .text("Claude Debussy — Suite bergamasque")], spacing: nil))
        let noArtist = try #require(try Self.rendered("Playing", artists: []).expandedCenter?.view)
        #expect(noArtist == .vstack([.text("Clair de Lune"), .text("Suite bergamasque")], spacing: nil))
    }

    /// What the lock-screen card's rows say, as text presenters print them.
    static func lockScreenLines(_ layout: RenderedLayout) throws -> [String] {
        let view = try #require(layout.lockScreen?.view)
        guard case .vstack(let children, _) = view else { Issue.record("not a vstack: \(view)"); return [] }
        return children.map(\.plainText)
    }

    @Test("the lock screen: title and elapsed time, artist and album, the bar, the buttons; no more rows than a card holds")
    func lockScreen() throws {
        let lines = try Self.lockScreenLines(try Self.rendered("Playing", now: 1000))
        // Four rows: the overlay's list card holds 116 px of them (22 + 22 + 14 + 34 and gaps).
        #expect(
            lines == [
                "Clair de Lune 0:30", "Claude Debussy — Suite bergamasque", "10%",
                "media-skip-backward-symbolic Previous media-playback-pause-symbolic Pause media-skip-forward-symbolic Next",
            ])
    }

    @Test("a source not verified as an app says what it is: the card's heading is the bridge's, the title line names the kind")
    func unverifiedSource() throws {
        var player = MediaPlayer(busName: "org.mpris.MediaPlayer2.fake", owner: ":1.7", now: 0)
        player.applyPlayer(
            ["PlaybackStatus": .string("Playing"), "Metadata": .vardict([("xesam:title", .string("Clair de Lune"))])],
            now: 0)
        let app = SourceApp.resolve(claim: "mpv", identity: .unknown, kind: .media, label: "Fake", lookup: { _ in nil })
        let activity = player.activity(source: "s", app: app, staleAfterPause: 600)
        let layout = LayoutRenderer(attributes: activity.attributes, state: activity.content.state, now: 0).render(try Self.layout())
        #expect(try Self.lockScreenLines(layout).first == "Media · Clair de Lune")
        #expect(
            try Self.lockScreenLines(try Self.rendered("Playing")).first?.hasPrefix("Clair de Lune") == true,
            "a verified source's card is headed by its app: the line is the title alone")
    }

    @Test("expanded leading: the album art where the player gives a local file, the player's icon as its fallback and otherwise")
    func albumArt() throws {
        let art = try #require(try Self.rendered("Playing", artURL: "file:///home/u/Music/Debussy/cover%20art.jpg").expandedLeading?.view)
        #expect(art == .image(path: "/home/u/Music/Debussy/cover art.jpg", fallback: .symbol("mpv")))
        #expect(art.plainText == "mpv", "text presenters show the fallback, never the path")
        for url in [nil, "https://i.scdn.co/image/ab67616d", "file://host/cover.jpg", "file:///tmp/../etc/cover.jpg"] {
            #expect(try Self.rendered("Playing", artURL: url).expandedLeading?.view == .symbol("mpv"), "\(url ?? "no art")")
        }
    }
}
