public import OrderedCollections
public import OrderedJSON

/// What a source wants shown for one thing it follows (a player, a notification, a job).
public struct BridgedActivity: Sendable, Hashable {
    /// The source's own key for the thing (`mpris:…`, `notify:…`, `job:…`): stable for as long
    /// as the thing exists, stored in the activity's attributes so that a restarted bridge
    /// finds its activities again.
    public var source: String
    /// The activity type, whose layout the bridge ships (`NowPlaying`, `Progress`, `Transfer`).
    public var type: String
    public var attributes: JSONObject
    public var content: BridgedContent
    public var rank: Rank

    public init(source: String, type: String, attributes: JSONObject, content: BridgedContent, rank: Rank) {
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
public struct BridgedContent: Sendable, Hashable {
    public var state: JSONObject
    public var staleDate: Double?
    public var relevance: Double

    public init(state: JSONObject, staleDate: Double? = nil, relevance: Double = 0) {
        self.state = state
        self.staleDate = staleDate
        self.relevance = relevance
    }
}

/// Which activities the bridge keeps when it may not show them all: a higher tier first,
/// then the one that entered its tier last.
public struct Rank: Sendable, Hashable, Comparable {
    public enum Tier: Int, Sendable, Hashable, Comparable {
        case stopped = 0
        case paused = 1
        case progress = 2
        case playing = 3

        public static func < (a: Tier, b: Tier) -> Bool { a.rawValue < b.rawValue }

        /// The relevance score the daemon orders the island and the list by.
        public var relevance: Double { Double(rawValue * 10) }
    }

    public var tier: Tier
    /// When the thing entered its tier (a player started playing, a transfer began).
    public var since: Double

    public init(tier: Tier, since: Double) {
        self.tier = tier
        self.since = since
    }

    public static func < (a: Rank, b: Rank) -> Bool {
        (a.tier, a.since) < (b.tier, b.since)
    }
}

/// What becomes of an activity whose source ended it.
public enum Dismissal: Sendable, Hashable {
    /// Gone from the island and the list at once.
    case immediate
    /// Listed as ended until this date.
    case after(Double)
}
