package import OrderedJSON
import OrderedCollections

/// Where an activity is in its life: `pending → active ⇄ stale → ended → dismissed`.
/// The raw values are the wire strings.
///
/// `pending` is an activity requested to start at a later date (ActivityKit's scheduled
/// activities, `ScheduledStart`): live for the limits and its app, shown by no presenter.
package enum ActivityState: String, Sendable, Hashable, CaseIterable {
    case pending, active, stale, ended, dismissed

    /// Pending, active and stale activities are live: they count against the limits and can
    /// be updated; ended and dismissed ones are history.
    package var isLive: Bool {
        switch self {
        case .pending, .active, .stale: true
        case .ended, .dismissed: false
        }
    }
}

/// Why an activity ended. The raw values are the wire strings.
package enum EndReason: String, Sendable, Hashable, CaseIterable {
    /// The producing app ended it.
    case app
    /// The user dismissed it, or turned Live Activities off for its app.
    case user
    /// It ran longer than `maximumActiveDuration`.
    case expired
    /// Its producer went away and its `OwnerGonePolicy` is `end`.
    case ownerGone
    /// The system ended it (the daemon's own decision, e.g. an uninstalled app).
    case system
}

/// What happens to an activity when the last producer connection of its app goes away.
package enum OwnerGonePolicy: String, Sendable, Hashable, CaseIterable {
    /// Nothing: the activity keeps showing its last content (the default, as in ActivityKit).
    case keep
    /// The activity ends at once with reason `ownerGone`.
    case end
    /// The activity turns stale after `ownerGoneGracePeriod`, unless the app comes back first.
    case stale
}

/// How long an ended activity stays listed.
package enum DismissalPolicy: Sendable, Hashable {
    /// Up to `maximumDismissalDelay` (4 h by default).
    case `default`
    /// Dismissed as it ends.
    case immediate
    /// At the given date (seconds since the epoch), clamped to `[end, end + maximumDismissalDelay]`.
    case after(Double)
}

/// The alert of an alerting update: presenters expand the activity and show this text.
package struct Alert: Sendable, Hashable {
    package var title: String
    package var body: String

    package init(title: String, body: String) {
        self.title = title
        self.body = body
    }
}

/// What an activity shows: the dynamic state, when it goes stale, and how relevant it is.
package struct ActivityContent: Sendable, Hashable {
    /// The state as a tree. A content made from text alone (`init(canonicalText:)`) parses it
    /// each time it is asked: the daemon's path of an update never asks.
    package var state: JSONObject {
        get { written.value.state }
        set { written = Shared(WrittenState(newValue)) }
    }
    /// `state` as compact JSON text, written once, when the content is made: an update sends
    /// it to presenters and back in its reply, and counts it against the payload limit.
    package var stateText: [UInt8] { written.value.text }
    /// How deep the state nests (`JSON.nestingDepth`), which a limit bounds.
    package var stateNesting: Int { written.value.nesting }
    /// The state's keys and the kinds of their values (`JSON.objectShape`), which a default
    /// layout is worked out from: compared on every update, to know whether it must be again.
    package var stateShape: [UInt8] { written.value.shape }
    private var written: Shared<WrittenState>
    /// When the content stops being accurate (seconds since the epoch); then the activity is `stale`.
    package var staleDate: Double?
    /// Orders activities on the island and the lock screen: higher first.
    package var relevanceScore: Double

    /// Whether `other` is this very content — the same state, not an equal copy of it — as
    /// an activity's delivered content is its content until a throttled update comes: a
    /// check of one reference, where `==` may compare the states' texts.
    package func isSame(as other: ActivityContent) -> Bool {
        written === other.written && staleDate == other.staleDate && relevanceScore == other.relevanceScore
    }

    package init(state: JSONObject, staleDate: Double? = nil, relevanceScore: Double = 0) {
        self.written = Shared(WrittenState(state))
        self.staleDate = staleDate
        self.relevanceScore = relevanceScore
    }

    /// From the state's text alone: `canonicalText` must be an object exactly as
    /// `JSON.object(state).serialized()` writes it (as `JSONReader.readObjectText` reads it),
    /// nesting `nesting` deep and of shape `shape` (worked out from the text when not given),
    /// which debug builds check.
    package init(
        canonicalText: [UInt8], nesting: Int? = nil, shape: [UInt8]? = nil, staleDate: Double? = nil,
        relevanceScore: Double = 0
    ) {
        assert(
            (try? JSONParser.parse(canonicalText))?.objectValue.map { JSON.object($0).serialized() } == canonicalText,
            "a state's text that is not the canonical form of an object")
        assert(nesting == nil || nesting == JSON.nestingDepth(ofText: canonicalText), "a state's nesting that is not its text's")
        assert(shape == nil || shape == JSON.objectShape(ofText: canonicalText), "a state's shape that is not its text's")
        self.written = Shared(
            WrittenState(
                text: canonicalText, nesting: nesting ?? JSON.nestingDepth(ofText: canonicalText),
                shape: shape ?? Self.shape(of: canonicalText)))
        self.staleDate = staleDate
        self.relevanceScore = relevanceScore
    }

    /// A state's text, and its tree when it was made from one. Equal when their texts are,
    /// which tells `1` from `1.0` as the trees do, for a comparison of bytes.
    private struct WrittenState: Sendable, Hashable {
        private let tree: JSONObject?
        let text: [UInt8]
        let nesting: Int
        let shape: [UInt8]

        init(_ state: JSONObject) {
            self.tree = state
            self.text = JSON.object(state).serialized()
            self.nesting = JSON.object(state).nestingDepth
            self.shape = ActivityContent.shape(of: text)
        }

        init(text: [UInt8], nesting: Int, shape: [UInt8]) {
            self.tree = nil
            self.text = text
            self.nesting = nesting
            self.shape = shape
        }

        var state: JSONObject {
            if let tree { return tree }
            // The text is an object's canonical form (see init(canonicalText:)).
            return (try? JSONParser.parse(text))?.objectValue ?? [:]
        }

        static func == (lhs: WrittenState, rhs: WrittenState) -> Bool { lhs.text == rhs.text }
        func hash(into hasher: inout Hasher) { hasher.combine(text) }
    }

    /// The shape of an object's canonical text, which always has one.
    private static func shape(of text: [UInt8]) -> [UInt8] {
        JSON.objectShape(ofText: text) ?? []
    }

    /// Whether this content is out of date at `now` (a stale date equal to `now` has passed).
    package func isStale(at now: Double) -> Bool {
        guard let staleDate else { return false }
        return staleDate <= now
    }
}
