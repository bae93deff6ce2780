import Foundation
import IslandBridge
import OrderedJSON
import IslandKit
import Logging
import OrderedCollections
import SDBus

/// MPRIS: players found on the bus and followed by their signals.
extension Bridge {
    static let mprisPath = "/org/mpris/MediaPlayer2"
    static let mprisRoot = "org.mpris.MediaPlayer2"
    static let mprisPlayer = "org.mpris.MediaPlayer2.Player"
    static let properties = "org.freedesktop.DBus.Properties"

    func startMPRIS(on bus: Bus) {
        do {
            // Three matches follow every player: names coming and going, and the two signals
            // players send from their one object path. Signals of other senders are ignored.
            busSlots.append(try bus.addMatch(
                "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0namespace='org.mpris.MediaPlayer2'"
            ) { [self] message in
                guard case let arguments = (try? message.arguments()) ?? [], arguments.count == 3,
                      let name = arguments[0].string, let old = arguments[1].string, let new = arguments[2].string
                else { return }
                playersChanged(players.nameOwnerChanged(name: name, oldOwner: old, newOwner: new, now: Self.now))
            })
            busSlots.append(try bus.addMatch(
                "type='signal',interface='\(Self.properties)',member='PropertiesChanged',path='\(Self.mprisPath)'"
            ) { [self] message in
                guard let owner = message.sender, players[owner] != nil,
                      case let arguments = (try? message.arguments(limits: Self.playerLimits)) ?? [], arguments.count >= 2,
                      let interface = arguments[0].string, let changed = arguments[1].dictionary
                else { return }
                propertiesChanged(owner: owner, interface: interface, changed: changed,
                                  invalidated: arguments.count > 2 ? arguments[2].stringList ?? [] : [])
            })
            busSlots.append(try bus.addMatch(
                "type='signal',interface='\(Self.mprisPlayer)',member='Seeked',path='\(Self.mprisPath)'"
            ) { [self] message in
                guard let owner = message.sender, var player = players[owner],
                      let position = (try? message.arguments())?.first?.integer
                else { return }
                player.positionRead(position, now: Self.now)
                players[owner] = player
                showPlayer(owner)
            })
            // The players already there.
            initialReads += 1
            try bus.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                         member: "ListNames") { [self] result in
                defer {
                    initialReads -= 1
                    settleIfScanned()
                }
                guard case .success(let reply) = result, let names = (try? reply.arguments())?.first?.stringList else { return }
                for name in names where MediaPlayers.isPlayerName(name) {
                    initialReads += 1
                    callForOwner(of: name) { [self] owner in
                        defer {
                            initialReads -= 1
                            settleIfScanned()
                        }
                        guard let owner else { return }
                        playersChanged(players.nameOwnerChanged(name: name, oldOwner: "", newOwner: owner, now: Self.now))
                    }
                }
            }
        } catch {
            logger.error("cannot follow MPRIS players", metadata: ["error": "\(error)"])
        }
    }

    /// Metadata is a peer's dictionary of any size: read within these.
    static let playerLimits = DecodingLimits(maximumValues: 512, maximumStringBytes: 1024, maximumDepth: 6)

    private func callForOwner(of name: String, _ body: @escaping (String?) -> Void) {
        do {
            try bus?.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                          member: "GetNameOwner", arguments: [.string(name)]) { result in
                guard case .success(let reply) = result else { return body(nil) }
                body((try? reply.arguments())?.first?.string)
            }
        } catch {
            body(nil)
        }
    }

    private func playersChanged(_ changes: [MediaPlayers.Change]) {
        for change in changes {
            switch change {
            case .appeared(let owner):
                logger.info("a player appeared", metadata: ["player": "\(players[owner]?.busName ?? owner)"])
                readPlayer(owner)
            case .vanished(let owner):
                logger.info("a player left", metadata: ["owner": "\(owner)"])
                apply([.finish(source: MediaPlayer.source(busID: busID, owner: owner), content: nil, keep: false)])
            }
        }
    }

    /// Finds out who the player's connection is, then reads both interfaces' properties, one
    /// after the other; the activity is shown once all three answered (or failed).
    private func readPlayer(_ owner: String) {
        initialReads += 1
        identify(owner) { [self] identity in
            guard var player = players[owner] else {
                initialReads -= 1
                return settleIfScanned()
            }
            player.identity = identity
            players[owner] = player
            readProperties(owner)
        }
    }

    private func readProperties(_ owner: String) {
        readProperties(owner, Self.mprisRoot) { [self] in
            readProperties(owner, Self.mprisPlayer) { [self] in
                showPlayer(owner)
                initialReads -= 1
                settleIfScanned()
            }
        }
    }

    private func readProperties(_ owner: String, _ interface: String, then next: @escaping () -> Void) {
        do {
            try bus?.call(destination: owner, path: Self.mprisPath, interface: Self.properties, member: "GetAll",
                          arguments: [.string(interface)], timeout: .seconds(5)) { [self] result in
                if case .success(let reply) = result, let values = (try? reply.arguments(limits: Self.playerLimits))?.first?.dictionary,
                   var player = players[owner] {
                    if interface == Self.mprisRoot {
                        player.applyRoot(values)
                    } else {
                        player.applyPlayer(values, now: Self.now)
                    }
                    players[owner] = player
                }
                next()
            }
        } catch {
            next()
        }
    }

    private func propertiesChanged(owner: String, interface: String, changed: [String: BusValue], invalidated: [String]) {
        guard var player = players[owner] else { return }
        var reread = false
        switch interface {
        case Self.mprisRoot: player.applyRoot(changed)
        case Self.mprisPlayer: reread = player.applyPlayer(changed, now: Self.now)
        default: return
        }
        players[owner] = player
        showPlayer(owner)
        if reread || invalidated.contains("Metadata") || invalidated.contains("PlaybackStatus") { readPosition(owner) }
    }

    /// `Position` emits no change signal: it is read when playback, track or rate change.
    private func readPosition(_ owner: String) {
        do {
            try bus?.call(destination: owner, path: Self.mprisPath, interface: Self.properties, member: "Get",
                          arguments: [.string(Self.mprisPlayer), .string("Position")], timeout: .seconds(5)) { [self] result in
                guard case .success(let reply) = result, let position = (try? reply.arguments())?.first?.integer,
                      var player = players[owner] else { return }
                player.positionRead(position, now: Self.now)
                players[owner] = player
                showPlayer(owner)
            }
        } catch {
            logger.debug("cannot read a player's position", metadata: ["error": "\(error)"])
        }
    }

    /// Shows the player as the app its connection is verified as, once that is known.
    private func showPlayer(_ owner: String) {
        guard let player = players[owner], let identity = player.identity else { return }
        let app = SourceApp.resolve(claim: player.desktopEntry, identity: identity, kind: .media,
                                    label: player.name ?? String(player.busName.dropFirst(MediaPlayers.prefix.count))) {
            entries.lookup($0)
        }
        apply([.show(player.activity(source: MediaPlayer.source(busID: busID, owner: owner), app: app,
                                     staleAfterPause: configuration.staleAfterPause))])
    }

    func raisePlayer(source: String) {
        guard let player = players.players.values.first(where: { MediaPlayer.source(busID: busID, owner: $0.owner) == source }),
              player.canRaise else { return }
        callQuietly(player.owner, Self.mprisPath, Self.mprisRoot, "Raise")
    }

    func controlPlayer(source: String, action: String) {
        guard let player = players.players.values.first(where: { MediaPlayer.source(busID: busID, owner: $0.owner) == source }),
              let method = MediaPlayer.method(forButton: action) else { return }
        callQuietly(player.owner, Self.mprisPath, Self.mprisPlayer, method)
    }
}
