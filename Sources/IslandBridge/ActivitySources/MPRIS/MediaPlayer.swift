import OrderedCollections
import OrderedJSON
package import SDBus

/// One MPRIS player (`org.mpris.MediaPlayer2.*`) as the bridge follows it: what its
/// properties said last, and the Now Playing activity that makes of it.
///
/// The position is never polled. A player reports it only when asked (`Position` emits no
/// change signal), so the bridge reads it when playback starts, pauses, seeks
/// (`Seeked`), changes track or rate, and hands presenters a time range to tick through
/// locally.
package struct MediaPlayer: Sendable {
    package enum Status: String, Sendable, Hashable {
        case playing, paused, stopped
    }

    /// The well-known name the player was found by (`org.mpris.MediaPlayer2.mpv`).
    package var busName: String
    /// Its connection's unique name, to which calls go and by which its signals are known.
    package var owner: String
    /// What the bridge established about the owner's process: nil until looked up, and the
    /// player is not shown before.
    package var identity: SenderIdentity?
    /// The player's `Identity` property: its own name for itself.
    package var name: String?
    package var desktopEntry: String?
    package var canRaise = false
    package var title: String?
    package var artists: [String] = []
    package var album: String?
    /// `mpris:artUrl` when it names a local file (`AlbumArt.localFileURL`).
    package var artURL: String?
    /// Microseconds; nil when the track has no known length (a stream).
    package var length: Int64?
    package var trackID: String?
    package var status: Status = .stopped
    package var rate = 1.0
    package var canGoNext = false
    package var canGoPrevious = false
    package var canPlay = false
    package var canPause = false
    /// The last position read, in microseconds, and when (seconds since the epoch).
    package var position: (microseconds: Int64, at: Double)?
    /// When `status` last changed.
    package var statusSince: Double

    package init(busName: String, owner: String, now: Double) {
        self.busName = busName
        self.owner = owner
        statusSince = now
    }

    // MARK: What the player says

    /// Applies `org.mpris.MediaPlayer2` properties (from `GetAll` or `PropertiesChanged`).
    package mutating func applyRoot(_ properties: [String: BusValue]) {
        if let name = properties["Identity"]?.string { self.name = name }
        if let entry = properties["DesktopEntry"]?.string { desktopEntry = entry }
        if let raise = properties["CanRaise"]?.bool { canRaise = raise }
    }

    /// Applies `org.mpris.MediaPlayer2.Player` properties; true when the position must be
    /// read again (playback, track or rate changed).
    @discardableResult
    package mutating func applyPlayer(_ properties: [String: BusValue], now: Double) -> Bool {
        var rereadPosition = false
        if let text = properties["PlaybackStatus"]?.string, let status = Status(rawValue: text.lowercased()), status != self.status {
            // Where a playing track got to when it paused: advanced by the time it played.
            if self.status == .playing, let elapsed = elapsed(at: now) { position = (elapsed, now) }
            self.status = status
            statusSince = now
            rereadPosition = true
        }
        if let rate = properties["Rate"]?.number, rate.isFinite, rate > 0, rate != self.rate {
            if status == .playing, let elapsed = elapsed(at: now) { position = (elapsed, now) }
            self.rate = rate
            rereadPosition = true
        }
        if let metadata = properties["Metadata"]?.dictionary {
            let track = metadata["mpris:trackid"]?.string
            let newTitle = metadata["xesam:title"]?.string
            if track != trackID || newTitle != title { rereadPosition = true }
            trackID = track
            title = newTitle
            // A compilation's track may name only its album's artists.
            artists = Self.names(metadata["xesam:artist"])
            if artists.isEmpty { artists = Self.names(metadata["xesam:albumArtist"]) }
            album = metadata["xesam:album"]?.string
            artURL = metadata["mpris:artUrl"]?.string.flatMap(AlbumArt.localFileURL)
            length =
                metadata["mpris:length"]?.integer.flatMap { $0 > 0 ? $0 : nil }
                ?? metadata["mpris:length"]?.number.flatMap { $0.isFinite && $0 > 0 && $0 < 9e18 ? Int64($0) : nil }
        }
        if let position = properties["Position"]?.integer { self.position = (max(0, position), now) }
        if let value = properties["CanGoNext"]?.bool { canGoNext = value }
        if let value = properties["CanGoPrevious"]?.bool { canGoPrevious = value }
        if let value = properties["CanPlay"]?.bool { canPlay = value }
        if let value = properties["CanPause"]?.bool { canPause = value }
        return rereadPosition
    }

    /// Artists a track keeps: enough for any credit line (the line is cut at
    /// `maximumTextBytes` anyway), few enough that no list is joined whole.
    static let maximumNames = 8

    /// A list-valued `xesam:` field (`as`, an `av` of strings, or a lone string, as players
    /// send them): its first `maximumNames` non-blank entries.
    static func names(_ value: BusValue?) -> [String] {
        var names: [String] = []
        for element in value?.stringList ?? [] where !element.allSatisfy(\.isWhitespace) {
            names.append(element)
            if names.count == maximumNames { break }
        }
        return names
    }

    /// The position the player reported (a `Position` read, or `Seeked`), at `now`.
    package mutating func positionRead(_ microseconds: Int64, now: Double) {
        position = (max(0, microseconds), now)
    }

    /// Where playback is at `now`, in microseconds.
    func elapsed(at now: Double) -> Int64? {
        guard let position else { return nil }
        guard status == .playing else { return position.microseconds }
        let advanced = Double(position.microseconds) + (now - position.at) * rate * 1_000_000
        return Int64(max(0, min(advanced, 9e18)))
    }

    // MARK: The activity

    /// The source key: one activity per player connection on one bus.
    package static func source(busID: String, owner: String) -> String { SourceKey.player(busID: busID, owner: owner).description }

    package static let maximumTextBytes = 128

    /// A stretch of time so long that a paused track's bar does not move (about 32 years):
    /// layouts have no paused time range, and the bridge sends no per-second updates.
    static let standingRange = 1e9

    /// The Now Playing activity: the track, the status, the position as a time range
    /// presenters tick through (`startedAt`…`endsAt` while playing; a timer that stands at
    /// the position and a bar stretched still while paused), stale `staleAfterPause` seconds
    /// after playback paused or stopped.
    package func activity(source: String, app: SourceApp, staleAfterPause: Double) -> BridgedActivity {
        var state: JSONObject = [
            "status": .string(status.rawValue),
            "title": .string(BoundedText.line(title ?? name ?? app.name, maximumBytes: Self.maximumTextBytes)),
        ]
        let artist = BoundedText.line(artists.joined(separator: ", "), maximumBytes: Self.maximumTextBytes)
        if !artist.isEmpty { state["artist"] = .string(artist) }
        if let album = album.map({ BoundedText.line($0, maximumBytes: Self.maximumTextBytes) }), !album.isEmpty {
            state["album"] = .string(album)
        }
        if let artURL { state["artUrl"] = .string(artURL) }
        // Mustache sections cannot compare: one flag per status.
        state[status.rawValue] = .bool(true)
        state["canGoNext"] = .bool(canGoNext)
        state["canGoPrevious"] = .bool(canGoPrevious)
        if let position, status != .stopped {
            let rate = status == .playing ? rate : 1
            let seconds = Double(position.microseconds) / 1_000_000
            let start = position.at - seconds / rate
            let end = length.map { start + Double($0) / 1_000_000 / rate }
            if status == .playing {
                state["startedAt"] = .double(start)
                if let end {
                    state["endsAt"] = .double(end)
                    state["barFrom"] = .double(start)
                    state["barTo"] = .double(end)
                }
            } else {
                // A count-up timer stops at its `to`.
                state["startedAt"] = .double(position.at - seconds)
                state["endsAt"] = .double(position.at)
                if let length, length > 0 {
                    let fraction = min(1, seconds / (Double(length) / 1_000_000))
                    let from = position.at - fraction * Self.standingRange
                    state["barFrom"] = .double(from)
                    state["barTo"] = .double(from + Self.standingRange)
                }
            }
        }
        let tier: Rank.Tier =
            switch status {
            case .playing: .playing
            case .paused: .paused
            case .stopped: .stopped
            }
        let staleDate = status == .playing ? nil : statusSince + staleAfterPause
        return BridgedActivity(
            source: source, type: "NowPlaying",
            attributes: ["app": app.json, "player": .string(busName)],
            content: BridgedContent(state: state, staleDate: staleDate, relevance: tier.relevance),
            rank: Rank(tier: tier, since: statusSince))
    }

    /// The player's method a layout button stands for.
    package static func method(forButton action: String) -> String? {
        switch action {
        case "previous": "Previous"
        case "playPause": "PlayPause"
        case "next": "Next"
        default: nil
        }
    }
}
