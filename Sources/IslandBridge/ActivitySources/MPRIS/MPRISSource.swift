import Logging
import SDBus

/// MPRIS on one bus connection: players found on the bus (`ListNames`, then
/// `NameOwnerChanged`), read (`GetAll`) and followed by their signals; each change of a
/// player's properties becomes its Now Playing activity's update (`propertiesChanged`).
/// Taps raise a player; buttons are its `Previous`/`PlayPause`/`Next`.
package final class MPRISSource {
    package static let path = "/org/mpris/MediaPlayer2"
    package static let root = "org.mpris.MediaPlayer2"
    package static let player = "org.mpris.MediaPlayer2.Player"
    static let properties = "org.freedesktop.DBus.Properties"

    /// Metadata is a peer's dictionary of any size: read within these. The depth is that of
    /// the deepest value MPRIS has, a list in the metadata (`xesam:artist`, `xesam:genre`…) as
    /// `PropertiesChanged` and `GetAll` carry it: their a{sv} (1) → entry (2) → variant (3) →
    /// `Metadata`'s a{sv} (4) → entry (5) → variant (6) → the `as` (7), or an `av` and its
    /// variants (8). At 6 every list was skipped, and with it every artist.
    static let limits = DecodingLimits(maximumValues: 512, maximumStringBytes: 1024, maximumDepth: 8)

    private let bus: any SourceBus
    private let senders: SenderIdentities
    private let context: SourceContext
    /// Seconds a paused or stopped player's activity stays fresh (`bridge.conf`, reloadable).
    package var staleAfterPause: Double
    package private(set) var players = MediaPlayers()
    private var subscriptions: [BusSubscription] = []
    /// Reads under way (the first scan's, and each new player's): scanned when none is.
    package private(set) var readsUnderWay = 0
    /// Players whose first read is under way, shown only once it ends: which app the
    /// activity is depends on what the player claims (`DesktopEntry`, read with the root
    /// interface), an activity's app is fixed when it is requested, and on a busy machine a
    /// player's first `PropertiesChanged` can come before that read's answer.
    private var firstReads: Set<String> = []

    package init(bus: any SourceBus, senders: SenderIdentities, context: SourceContext, staleAfterPause: Double) {
        self.bus = bus
        self.senders = senders
        self.context = context
        self.staleAfterPause = staleAfterPause
    }

    /// Subscribes to the players' names and signals, and reads the players already there.
    package func start() {
        do {
            try subscribe()
        } catch {
            context.logger.error("cannot follow MPRIS players", metadata: ["error": "\(error)"])
        }
    }

    private func subscribe() throws(BusError) {
        // Three matches follow every player: names coming and going, and the two signals
        // players send from their one object path. Signals of other senders are ignored.
        subscriptions.append(
            try bus.addMatch(
                "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0namespace='org.mpris.MediaPlayer2'"
            ) { [weak self] message in
                guard let self, case let arguments = (try? message.arguments()) ?? [], arguments.count == 3,
                    let name = arguments[0].string, let old = arguments[1].string, let new = arguments[2].string
                else { return }
                playersChanged(players.nameOwnerChanged(name: name, oldOwner: old, newOwner: new, now: context.now()))
            })
        subscriptions.append(
            try bus.addMatch(
                "type='signal',interface='\(Self.properties)',member='PropertiesChanged',path='\(Self.path)'"
            ) { [weak self] message in
                guard let self, let owner = message.sender, players[owner] != nil,
                    case let arguments = (try? message.arguments(limits: Self.limits)) ?? [], arguments.count >= 2,
                    let interface = arguments[0].string, let changed = arguments[1].dictionary
                else { return }
                propertiesChanged(
                    owner: owner, interface: interface, changed: changed,
                    invalidated: arguments.count > 2 ? arguments[2].stringList ?? [] : [])
            })
        subscriptions.append(
            try bus.addMatch(
                "type='signal',interface='\(Self.player)',member='Seeked',path='\(Self.path)'"
            ) { [weak self] message in
                guard let self, let owner = message.sender, let position = (try? message.arguments())?.first?.integer else { return }
                positionRead(owner, position)
            })
        readBegan()
        do {
            try listPlayers()
        } catch {
            readEnded()
            throw error
        }
    }

    /// The players already on the bus.
    private func listPlayers() throws(BusError) {
        try bus.callDriver("ListNames") { [weak self] result in
            guard let self else { return }
            defer { readEnded() }
            guard case .success(let reply) = result, let names = (try? reply.arguments())?.first?.stringList else { return }
            for name in names where MediaPlayers.isPlayerName(name) {
                readBegan()
                bus.owner(of: name) { [weak self] owner in
                    guard let self else { return }
                    defer { readEnded() }
                    guard let owner else { return }
                    playersChanged(players.nameOwnerChanged(name: name, oldOwner: "", newOwner: owner, now: context.now()))
                }
            }
        }
    }

    /// Every player's activity ends: the bus is going away.
    package func end() -> [SourceChange] {
        subscriptions = []
        return players.removeAll().compactMap { change in
            guard case .vanished(let owner) = change else { return nil }
            return .finish(source: MediaPlayer.source(busID: context.busID, owner: owner), content: nil, keep: false)
        }
    }

    // MARK: Bus events to activities

    /// A `PropertiesChanged` of `owner`'s player: its activity is updated, and the position
    /// read again when playback, track or rate changed.
    func propertiesChanged(owner: String, interface: String, changed: [String: BusValue], invalidated: [String]) {
        guard var player = players[owner] else { return }
        var reread = false
        switch interface {
        case Self.root: player.applyRoot(changed)
        case Self.player: reread = player.applyPlayer(changed, now: context.now())
        default: return
        }
        players[owner] = player
        show(owner)
        if reread || invalidated.contains("Metadata") || invalidated.contains("PlaybackStatus") { readPosition(owner) }
    }

    private func positionRead(_ owner: String, _ position: Int64) {
        guard var player = players[owner] else { return }
        player.positionRead(position, now: context.now())
        players[owner] = player
        show(owner)
    }

    private func playersChanged(_ changes: [MediaPlayers.Change]) {
        for change in changes {
            switch change {
            case .appeared(let owner):
                context.logger.info("a player appeared", metadata: ["player": "\(players[owner]?.busName ?? owner)"])
                read(owner)
            case .vanished(let owner):
                context.logger.info("a player left", metadata: ["owner": "\(owner)"])
                context.apply([.finish(source: MediaPlayer.source(busID: context.busID, owner: owner), content: nil, keep: false)])
            }
        }
    }

    /// Finds out who the player's connection is, then reads both interfaces' properties, one
    /// after the other; the activity is shown once all three answered (or failed).
    private func read(_ owner: String) {
        readBegan()
        firstReads.insert(owner)
        senders.identify(owner) { [weak self] identity in
            guard let self else { return }
            guard var player = players[owner] else {
                firstReads.remove(owner)
                return readEnded()
            }
            player.identity = identity
            players[owner] = player
            readProperties(owner, Self.root) { [weak self] in
                self?.readProperties(owner, Self.player) { [weak self] in
                    self?.firstReads.remove(owner)
                    self?.show(owner)
                    self?.readEnded()
                }
            }
        }
    }

    private func readProperties(_ owner: String, _ interface: String, then next: @escaping () -> Void) {
        do {
            try bus.call(
                destination: owner, path: Self.path, interface: Self.properties, member: "GetAll",
                arguments: [.string(interface)], timeout: .seconds(5)
            ) { [weak self] result in
                guard let self else { return }
                if case .success(let reply) = result, let values = (try? reply.arguments(limits: Self.limits))?.first?.dictionary,
                    var player = players[owner]
                {
                    if interface == Self.root {
                        player.applyRoot(values)
                    } else {
                        player.applyPlayer(values, now: context.now())
                    }
                    players[owner] = player
                }
                next()
            }
        } catch {
            next()
        }
    }

    /// `Position` emits no change signal: it is read when playback, track or rate change.
    private func readPosition(_ owner: String) {
        do {
            try bus.call(
                destination: owner, path: Self.path, interface: Self.properties, member: "Get",
                arguments: [.string(Self.player), .string("Position")], timeout: .seconds(5)
            ) { [weak self] result in
                guard case .success(let reply) = result, let position = (try? reply.arguments())?.first?.integer else { return }
                self?.positionRead(owner, position)
            }
        } catch {
            context.logger.debug("cannot read a player's position", metadata: ["error": "\(error)"])
        }
    }

    /// Shows the player as the app its connection is verified as, once that is known.
    private func show(_ owner: String) {
        guard !firstReads.contains(owner), let player = players[owner], let identity = player.identity else { return }
        let app = SourceApp.resolve(
            claim: player.desktopEntry, identity: identity, kind: .media,
            label: player.name ?? String(player.busName.dropFirst(MediaPlayers.prefix.count)),
            lookup: context.lookup)
        context.apply([
            .show(
                player.activity(
                    source: MediaPlayer.source(busID: context.busID, owner: owner), app: app,
                    staleAfterPause: staleAfterPause))
        ])
    }

    private func readBegan() { readsUnderWay += 1 }

    private func readEnded() {
        readsUnderWay -= 1
        context.readEnded()
    }

    // MARK: Taps and buttons

    /// A tap on player `owner`'s activity raises the player, if it can be.
    package func tapped(owner: String) {
        guard let player = players[owner], player.canRaise else { return }
        callQuietly(owner, Self.root, "Raise")
    }

    /// A button of player `owner`'s activity: the player's method it stands for.
    package func pressed(_ action: String, owner: String) {
        guard players[owner] != nil, let method = MediaPlayer.method(forButton: action) else { return }
        callQuietly(owner, Self.player, method)
    }

    /// A player's buttons: a failure is logged, not reported.
    private func callQuietly(_ owner: String, _ interface: String, _ member: String) {
        do {
            try bus.call(
                destination: owner, path: Self.path, interface: interface, member: member, arguments: [],
                timeout: .seconds(25)
            ) { [logger = context.logger] result in
                if case .failure(let error) = result {
                    logger.info("a call to a source failed", metadata: ["call": "\(interface).\(member)", "error": "\(error)"])
                }
            }
        } catch {
            context.logger.info("a call to a source failed", metadata: ["call": "\(interface).\(member)", "error": "\(error)"])
        }
    }
}
