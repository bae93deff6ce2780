import OrderedCollections
import IslandBridge
import OrderedJSON
import SDBus
import Testing

@Suite("MPRIS players: properties to a Now Playing activity")
struct MediaPlayerTests {
    static let app = SourceApp(name: "Player", icon: "audio-x-generic")

    static func metadata(title: String, length: Int64, track: String = "/t/1") -> BusValue {
        .vardict([
            ("xesam:title", .string(title)), ("xesam:artist", .strings(["A", "B"])), ("xesam:album", .string("LP")),
            ("mpris:length", .int64(length)), ("mpris:trackid", .objectPath(track)),
        ])
    }

    static func playing(at now: Double, position: Int64 = 30_000_000) -> MediaPlayer {
        var player = MediaPlayer(busName: "org.mpris.MediaPlayer2.test", owner: ":1.7", now: 0)
        player.applyRoot(["Identity": .string("Test"), "DesktopEntry": .string("test"), "CanRaise": .boolean(true)])
        player.applyPlayer(
            [
                "PlaybackStatus": .string("Playing"), "Metadata": metadata(title: "Song", length: 200_000_000),
                "Position": .int64(position), "CanGoNext": .boolean(true),
            ], now: now)
        return player
    }

    @Test("playing: a time range from the track's start to its end, no stale date")
    func playingRange() {
        let player = Self.playing(at: 1000)
        let activity = player.activity(source: "s", app: Self.app, staleAfterPause: 600)
        let state = activity.content.state
        expectJSON(state["title"], "Song")
        expectJSON(state["artist"], "A, B")
        expectJSON(state["album"], "LP")
        expectJSON(state["playing"], true)
        #expect(state["startedAt"]?.doubleValue == 970)
        #expect(state["endsAt"]?.doubleValue == 1170)
        #expect(state["barFrom"]?.doubleValue == 970)
        #expect(state["barTo"]?.doubleValue == 1170)
        #expect(activity.content.staleDate == nil)
        #expect(activity.rank.tier == .playing)
        #expect(activity.type == "NowPlaying")
        #expect(activity.attributes["player"] == "org.mpris.MediaPlayer2.test")
    }

    @Test("paused: the timer stands at the position, the bar is stretched still, stale after the pause")
    func pausedStands() {
        var player = Self.playing(at: 1000)
        // 10 s of playing later: paused at 40 s of 200.
        let reread = player.applyPlayer(["PlaybackStatus": .string("Paused")], now: 1010)
        #expect(reread, "the position is read again")
        let state = player.activity(source: "s", app: Self.app, staleAfterPause: 600).content
        expectJSON(state.state["paused"], true)
        #expect(state.state["startedAt"]?.doubleValue == 970)
        #expect(state.state["endsAt"]?.doubleValue == 1010)
        let from: Double = state.state["barFrom"]?.doubleValue ?? 0
        let to: Double = state.state["barTo"]?.doubleValue ?? 0
        // At any later instant the bar shows (almost exactly) 40/200.
        for now: Double in [1010, 4610] {
            let fraction = (now - from) / (to - from)
            #expect(abs(fraction - 0.2) < 1e-5)
        }
        #expect(state.staleDate == 1610)
        #expect(player.activity(source: "s", app: Self.app, staleAfterPause: 600).rank == Rank(tier: .paused, since: 1010))
    }

    @Test("a rate of 2 halves the range; a seek moves it; a stream has no end")
    func rateSeekStream() {
        var player = Self.playing(at: 1000, position: 0)
        player.applyPlayer(["Rate": .double(2)], now: 1000)
        var state = player.activity(source: "s", app: Self.app, staleAfterPause: 600).content.state
        #expect(state["endsAt"]?.doubleValue == 1100)
        player.positionRead(100_000_000, now: 1010)
        state = player.activity(source: "s", app: Self.app, staleAfterPause: 600).content.state
        #expect(state["startedAt"]?.doubleValue == 960)
        player.applyPlayer(["Metadata": .vardict([("xesam:title", .string("Radio"))])], now: 1020)
        state = player.activity(source: "s", app: Self.app, staleAfterPause: 600).content.state
        #expect(state["endsAt"] == nil && state["barFrom"] == nil, "no length, no end")
        #expect(state["startedAt"] != nil, "the timer still counts up")
    }

    @Test("untrusted text is cut; a missing title falls back to the player's identity")
    func boundedText() {
        var player = MediaPlayer(busName: "org.mpris.MediaPlayer2.x", owner: ":1.9", now: 0)
        player.applyRoot(["Identity": .string("Ident")])
        var state = player.activity(source: "s", app: Self.app, staleAfterPause: 1).content.state
        expectJSON(state["title"], "Ident")
        player.applyPlayer(["Metadata": .vardict([("xesam:title", .string(String(repeating: "é", count: 500)))])], now: 0)
        state = player.activity(source: "s", app: Self.app, staleAfterPause: 1).content.state
        #expect(state["title"]!.stringValue!.utf8.count <= MediaPlayer.maximumTextBytes)
        #expect(state["title"]!.stringValue!.hasSuffix("…"))
    }

    @Test("players by connection: several names are one player, playerctld is skipped, at most maximumPlayers")
    func players() {
        var players = MediaPlayers()
        #expect(players.nameOwnerChanged(name: "org.mpris.MediaPlayer2.vlc", oldOwner: "", newOwner: ":1.1", now: 0) == [.appeared(owner: ":1.1")])
        #expect(players.nameOwnerChanged(name: "org.mpris.MediaPlayer2.vlc.instance7", oldOwner: "", newOwner: ":1.1", now: 0) == [])
        #expect(players.nameOwnerChanged(name: "org.mpris.MediaPlayer2.playerctld", oldOwner: "", newOwner: ":1.2", now: 0) == [])
        #expect(players.nameOwnerChanged(name: "org.mpris.MediaPlayer2.vlc", oldOwner: ":1.1", newOwner: "", now: 0) == [])
        #expect(
            players.nameOwnerChanged(name: "org.mpris.MediaPlayer2.vlc.instance7", oldOwner: ":1.1", newOwner: "", now: 0)
                == [.vanished(owner: ":1.1")])
        for n in 0..<MediaPlayers.maximumPlayers + 3 {
            _ = players.nameOwnerChanged(name: "org.mpris.MediaPlayer2.p\(n)", oldOwner: "", newOwner: ":2.\(n)", now: 0)
        }
        #expect(players.players.count == MediaPlayers.maximumPlayers)
        #expect(MediaPlayer.method(forButton: "playPause") == "PlayPause")
        #expect(MediaPlayer.method(forButton: "rm -rf") == nil)
    }
}
