import OrderedCollections
package import OrderedJSON

/// What a source wants shown for one thing it follows (a player, a notification, a job).
package struct BridgedActivity: Sendable, Hashable {
    /// The source's own key for the thing (`mpris:…`, `notify:…`, `job:…`): stable for as long
    /// as the thing exists, stored in the activity's attributes so that a restarted bridge
    /// finds its activities again.
    package var source: String
    /// The activity type, whose layout the bridge ships (`NowPlaying`, `Progress`, `Transfer`).
    package var type: String
    package var attributes: JSONObject
    package var content: BridgedContent
    package var rank: Rank

    package init(source: String, type: String, attributes: JSONObject, content: BridgedContent, rank: Rank) {
        self.source = source
        self.type = type
        var attributes = attributes
        attributes["source"] = .string(source)
        self.attributes = attributes
        self.content = content
        self.rank = rank
    }
}

/// An activity's content as the daemon takes it.
package struct BridgedContent: Sendable, Hashable {
    package var state: JSONObject
    package var staleDate: Double?
    package var relevance: Double

    package init(state: JSONObject, staleDate: Double? = nil, relevance: Double = 0) {
        self.state = state
        self.staleDate = staleDate
        self.relevance = relevance
    }
}

/// Which activities the bridge keeps when it may not show them all: a higher tier first,
/// then the one that entered its tier last.
package struct Rank: Sendable, Hashable, Comparable {
    package enum Tier: Int, Sendable, Hashable, Comparable {
        case stopped = 0
        case paused = 1
        case progress = 2
        case playing = 3

        package static func < (a: Tier, b: Tier) -> Bool { a.rawValue < b.rawValue }

        /// The relevance score the daemon orders the island and the list by.
        package var relevance: Double { Double(rawValue * 10) }
    }

    package var tier: Tier
    /// When the thing entered its tier (a player started playing, a transfer began).
    package var since: Double

    package init(tier: Tier, since: Double) {
        self.tier = tier
        self.since = since
    }

    package static func < (a: Rank, b: Rank) -> Bool {
        (a.tier, a.since) < (b.tier, b.since)
    }
}

/// What becomes of an activity whose source ended it.
package enum Dismissal: Sendable, Hashable {
    /// Gone from the island and the list at once.
    case immediate
    /// Listed as ended until this date.
    case after(Double)
}
