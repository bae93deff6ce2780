import IslandBridge
import OrderedCollections
import OrderedJSON
import SDBus
import Testing

@Suite("MPRIS source: players on the bus become Now Playing activities")
struct MPRISSourceTests {
    static let owner = ":1.7"
    static let source = SourceKey.player(busID: SourceHarness.busID, owner: owner).description

    static func metadata(_ title: String) -> BusValue {
        .vardict([("xesam:title", .string(title)), ("mpris:length", .int64(200_000_000)), ("mpris:trackid", .objectPath("/t/\(title)"))])
    }

    /// A bus with one player, `org.mpris.MediaPlayer2.example` at `:1.7`, playing "First".
    static func harness(
        identity: SenderIdentity = SenderIdentity(confinement: .flatpak(appID: "org.example.Player"))
    )
        -> (SourceHarness, MPRISSource)
    {
        let harness = SourceHarness()
        harness.bus.identities[owner] = identity
        harness.bus.answer = { call in
            switch (call.member, call.arguments.first?.string) {
            case ("ListNames", _):
                .success(
                    .reply([
                        .strings([
                            "org.freedesktop.DBus", ":1.7", "org.mpris.MediaPlayer2.example",
                            "org.mpris.MediaPlayer2.playerctld",
                        ])
                    ]))
            case ("GetNameOwner", "org.mpris.MediaPlayer2.example"): .success(.reply([.string(owner)]))
            case ("GetAll", MPRISSource.root):
                .success(
                    .reply(
                        [
                            .vardict([
                                ("Identity", .string("Example")), ("DesktopEntry", .string("org.example.Player")),
                                ("CanRaise", .boolean(true)),
                            ])
                        ], from: owner))
            case ("GetAll", MPRISSource.player):
                .success(
                    .reply(
                        [
                            .vardict([
                                ("PlaybackStatus", .string("Playing")), ("Metadata", metadata("First")),
                                ("Position", .int64(10_000_000)), ("CanGoNext", .boolean(true)),
                            ])
                        ], from: owner))
            case ("Get", _): .success(.reply([.variant(.int64(0))], from: owner))
            default: nil
            }
        }
        let source = MPRISSource(bus: harness.bus, senders: harness.senders, context: harness.context, staleAfterPause: 600)
        harness.subject = source
        return (harness, source)
    }

    static func propertiesChanged(
        from sender: String = owner, path: String = MPRISSource.path,
        interface: String = MPRISSource.player, _ changed: [(String, BusValue)]
    ) -> FakeMessage {
        .signal(
            from: sender, path: path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
            [.string(interface), .vardict(changed), .strings([])])
    }

    @Test("a player already on the bus is identified, read and shown once the scan is over")
    func scan() throws {
        let (harness, source) = Self.harness()
        source.start()
        #expect(source.readsUnderWay > 0)
        #expect(harness.shown().isEmpty)
        harness.bus.run()
        #expect(source.readsUnderWay == 0)
        #expect(harness.readsEnded >= 1)
        let shown = harness.shown()
        let activity = try #require(shown.last)
        #expect(shown.count == 1, "shown once, when both interfaces are read")
        #expect(activity.source == Self.source)
        #expect(activity.type == "NowPlaying")
        expectJSON(activity.content.state["title"], "First")
        #expect(activity.app == "Example Player", "a Flatpak of the entry it claims is that app")
        #expect(harness.bus.identified == [Self.owner])
        #expect(source.players.players.count == 1, "playerctld's proxy name is not a player")
    }

    @Test("a player's signal before its first read is answered shows nothing: the app it claims decides whose activity it is")
    func signalBeforeTheFirstRead() throws {
        let (harness, source) = Self.harness()
        let answer = harness.bus.answer
        // The root interface's GetAll, which carries DesktopEntry, is answered late, as on a busy machine.
        harness.bus.answer = { call in
            call.member == "GetAll" && call.arguments.first?.string == MPRISSource.root ? nil : answer(call)
        }
        source.start()
        harness.bus.run()
        #expect(harness.bus.waiting.map(\.member) == ["GetAll"])
        harness.bus.send(Self.propertiesChanged([("PlaybackStatus", .string("Playing"))]))
        #expect(harness.shown().isEmpty, "not shown before what the player claims is known")
        harness.bus.answer = answer
        harness.bus.run()
        let shown = harness.shown()
        #expect(shown.count == 1)
        #expect(shown.last?.app == "Example Player", "the app the player's entry names, not the bridge's own")
    }

    @Test("a PropertiesChanged of a player becomes its activity's update, and the position is read again")
    func propertiesChangedUpdates() throws {
        let (harness, source) = Self.harness()
        source.start()
        harness.bus.run()
        _ = harness.take()
        harness.now = 1010
        harness.bus.send(Self.propertiesChanged([("Metadata", Self.metadata("Second"))]))
        let update = try #require(harness.shown().last)
        #expect(update.source == Self.source)
        expectJSON(update.content.state["title"], "Second")
        #expect(harness.bus.waiting.map(\.member) == ["Get"], "Position is read when the track changes")
        harness.bus.run()
        let positioned = try #require(harness.shown().last)
        expectJSON(positioned.content.state["startedAt"], .double(1010), "the track started when its position was 0")

        harness.bus.send(Self.propertiesChanged(interface: MPRISSource.root, [("Identity", .string("Renamed"))]))
        #expect(harness.shown().count == 1, "the root interface's changes count too")
    }

    /// mpv's metadata as mpv-mpris sends it (`gdbus` of a tagged file):
    /// `{'xesam:album': <'Suite bergamasque'>, 'xesam:artist': <['Claude Debussy']>,
    /// 'mpris:trackid': <objectpath '/0'>, 'xesam:title': <'Clair de Lune'>,
    /// 'xesam:url': <'file:///music/debussy.flac'>, 'mpris:length': <int64 300000000>}`.
    static func mpvMetadata(artists: [String] = ["Claude Debussy"], title: String = "Clair de Lune") -> BusValue {
        .vardict([
            ("xesam:album", .string("Suite bergamasque")), ("xesam:artist", .strings(artists)),
            ("mpris:trackid", .objectPath("/0")), ("xesam:title", .string(title)),
            ("xesam:url", .string("file:///music/debussy.flac")), ("mpris:length", .int64(300_000_000)),
        ])
    }

    @Test("the artist list mpv sends reaches the state, from GetAll and from PropertiesChanged, read within the source's limits")
    func artistFromTheWireShape() throws {
        let (harness, source) = Self.harness()
        let answer = harness.bus.answer
        harness.bus.answer = { call in
            guard call.member == "GetAll", call.arguments.first?.string == MPRISSource.player else { return answer(call) }
            return .success(
                .reply(
                    [.vardict([("PlaybackStatus", .string("Playing")), ("Metadata", Self.mpvMetadata())])],
                    from: Self.owner))
        }
        source.start()
        harness.bus.run()
        let read = try #require(harness.shown().last).content.state
        #expect(read["artist"] == "Claude Debussy")
        #expect(read["title"] == "Clair de Lune")
        #expect(read["album"] == "Suite bergamasque")

        // The next track, as the signal carries it: one container deeper than GetAll's reply.
        harness.bus.send(
            Self.propertiesChanged([
                (
                    "Metadata",
                    Self.mpvMetadata(
                        artists: ["Maurice Ravel", "Claude Debussy"],
                        title: "Boléro")
                )
            ]))
        let changed = try #require(harness.shown().last).content.state
        #expect(changed["artist"] == "Maurice Ravel, Claude Debussy", "every artist, joined for display")
        #expect(changed["title"] == "Boléro")
    }

    @Test("list-valued fields: an av of strings, a lone string, the album's artists when the track names none; bounded")
    func artistShapes() throws {
        let (harness, source) = Self.harness()
        source.start()
        harness.bus.run()
        func artist(_ entries: [(String, BusValue)]) throws -> String? {
            harness.bus.send(Self.propertiesChanged([("Metadata", .vardict([("xesam:title", .string("T"))] + entries))]))
            return try #require(harness.shown().last).content.state["artist"]?.stringValue
        }
        #expect(
            try artist([("xesam:artist", .array(elementSignature: "v", [.variant(.string("A")), .variant(.string("B"))]))])
                == "A, B")
        #expect(try artist([("xesam:artist", .string("Solo"))]) == "Solo")
        #expect(try artist([("xesam:artist", .strings([" ", ""])), ("xesam:albumArtist", .strings(["Various"]))]) == "Various")
        #expect(try artist([]) == nil, "no artist, no key")
        let many = try #require(try artist([("xesam:artist", .strings((1...500).map { "Artist \($0)" }))]))
        #expect(many.utf8.count <= MediaPlayer.maximumTextBytes)
        #expect(source.players[Self.owner]?.artists.count == 8, "a list is kept to its first few names")
    }

    @Test("only the player's own connection and object path change it")
    func sendersChecked() {
        let (harness, source) = Self.harness()
        source.start()
        harness.bus.run()
        _ = harness.take()
        harness.bus.send(Self.propertiesChanged(from: ":1.66", [("Metadata", Self.metadata("Forged"))]))
        harness.bus.send(Self.propertiesChanged(path: "/org/mpris/MediaPlayer2/other", [("Metadata", Self.metadata("Elsewhere"))]))
        harness.bus.send(Self.propertiesChanged(interface: "org.example.Other", [("Metadata", Self.metadata("Other interface"))]))
        #expect(harness.take().isEmpty)
        #expect(source.players[Self.owner]?.title == "First")
    }

    @Test("an unverified claim shows the bridge's Media, not the app claimed")
    func unverifiedClaim() throws {
        let (harness, source) = Self.harness(identity: .unknown)
        source.start()
        harness.bus.run()
        let activity = try #require(harness.shown().last)
        #expect(activity.app == "Media")
    }

    @Test("Seeked moves the position; the player leaving the bus ends its activity at once")
    func seekAndLeave() throws {
        let (harness, source) = Self.harness()
        source.start()
        harness.bus.run()
        _ = harness.take()
        harness.bus.send(
            .signal(
                from: Self.owner, path: MPRISSource.path, interface: MPRISSource.player, member: "Seeked",
                [.int64(60_000_000)]))
        let seeked = try #require(harness.shown().last)
        expectJSON(seeked.content.state["startedAt"], .double(harness.now - 60))
        harness.bus.send(
            .signal(
                from: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "NameOwnerChanged",
                [.string("org.mpris.MediaPlayer2.example"), .string(Self.owner), .string("")]))
        #expect(harness.take() == [.finish(source: Self.source, content: nil, keep: false)])
        #expect(source.players.players.isEmpty)
    }

    @Test("a player appearing later is read and shown; end() ends every player and drops the matches")
    func appearAndEnd() throws {
        let (harness, source) = Self.harness()
        harness.bus.answer = { call in
            switch (call.member, call.arguments.first?.string) {
            case ("ListNames", _): .success(.reply([.strings([])]))
            case ("GetAll", _): .success(.reply([.vardict([("PlaybackStatus", .string("Paused"))])], from: ":1.8"))
            default: nil
            }
        }
        source.start()
        harness.bus.run()
        #expect(harness.take().isEmpty)
        harness.bus.send(
            .signal(
                from: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "NameOwnerChanged", [.string("org.mpris.MediaPlayer2.late"), .string(""), .string(":1.8")]))
        harness.bus.run()
        let late = try #require(harness.shown().last)
        expectJSON(late.content.state["status"], "paused")
        #expect(harness.bus.heldMatches == 3)
        let key = SourceKey.player(busID: SourceHarness.busID, owner: ":1.8").description
        #expect(source.end() == [.finish(source: key, content: nil, keep: false)])
        #expect(harness.bus.heldMatches == 0)
    }
}
