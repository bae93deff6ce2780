/// The MPRIS players on the bus, by connection: which well-known names each holds, bounded.
///
/// Any process may own an `org.mpris.MediaPlayer2.*` name, so the bridge follows at most
/// `maximumPlayers` players; names past that are ignored until one leaves. One player may
/// hold several names (`…vlc` and `…vlc.instance42`): it is one player, gone when its last
/// name is. `playerctld`'s name is skipped: it proxies a player the bridge already follows.
package struct MediaPlayers: Sendable {
    package static let prefix = "org.mpris.MediaPlayer2."
    package static let maximumPlayers = 16
    static let proxies: Set<String> = ["org.mpris.MediaPlayer2.playerctld"]

    package private(set) var players: [String: MediaPlayer] = [:]
    private var names: [String: Set<String>] = [:]

    package init() {}

    package enum Change: Sendable, Hashable {
        /// A new player: read its properties.
        case appeared(owner: String)
        /// A player left (its last name, or its connection).
        case vanished(owner: String)
    }

    /// Whether `name` is one the bridge follows.
    package static func isPlayerName(_ name: String) -> Bool {
        name.hasPrefix(prefix) && name.count > prefix.count && !proxies.contains(name)
    }

    /// A `NameOwnerChanged` (or a name found at start, with `oldOwner` empty).
    package mutating func nameOwnerChanged(name: String, oldOwner: String, newOwner: String, now: Double) -> [Change] {
        guard Self.isPlayerName(name) else { return [] }
        var changes: [Change] = []
        if !oldOwner.isEmpty, names[oldOwner]?.remove(name) != nil, names[oldOwner]?.isEmpty == true {
            names[oldOwner] = nil
            players[oldOwner] = nil
            changes.append(.vanished(owner: oldOwner))
        }
        if !newOwner.isEmpty {
            if names[newOwner] != nil {
                names[newOwner]?.insert(name)
            } else if players.count < Self.maximumPlayers {
                names[newOwner] = [name]
                players[newOwner] = MediaPlayer(busName: name, owner: newOwner, now: now)
                changes.append(.appeared(owner: newOwner))
            }
        }
        return changes
    }

    /// Every player, as when the bus goes away.
    package mutating func removeAll() -> [Change] {
        defer {
            players = [:]
            names = [:]
        }
        return players.keys.sorted().map { .vanished(owner: $0) }
    }

    package subscript(owner: String) -> MediaPlayer? {
        get { players[owner] }
        set {
            guard players[owner] != nil, let newValue else { return }
            players[owner] = newValue
        }
    }
}
