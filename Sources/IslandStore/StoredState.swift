public import OrderedJSON

/// An activity row as stored: the daemon maps `body` back to its model.
public struct StoredActivity: Sendable, Hashable {
    public var id: String
    public var app: String
    public var state: String
    public var body: JSONObject
    /// When the row was last written (seconds since 1970), as stamped by the store.
    public var updatedAt: Double?

    public init(id: String, app: String, state: String, body: JSONObject, updatedAt: Double? = nil) {
        self.id = id
        self.app = app
        self.state = state
        self.body = body
        self.updatedAt = updatedAt
    }
}

/// A registered layout row.
public struct StoredLayout: Sendable, Hashable {
    public var app: String
    /// The registering extension's uid in the system scope; nil in the user scope.
    public var uid: UInt32?
    public var type: String
    public var body: String

    public init(app: String, uid: UInt32? = nil, type: String, body: String) {
        self.app = app
        self.uid = uid
        self.type = type
        self.body = body
    }
}

/// A push token row: an activity's (`activityID`) or an owner's push-to-start token for one
/// activity type (`type`), never both.
public struct StoredPushToken: Sendable, Hashable {
    public var token: String
    public var app: String
    /// The owner's uid in the system scope; nil in the user scope.
    public var uid: UInt32?
    public var activityID: String?
    public var type: String?
    /// A push-to-start token's last start, by the server's clock.
    public var lastTimestamp: Double?

    public init(token: String, app: String, uid: UInt32? = nil, activityID: String? = nil, type: String? = nil, lastTimestamp: Double? = nil) {
        self.token = token
        self.app = app
        self.uid = uid
        self.activityID = activityID
        self.type = type
        self.lastTimestamp = lastTimestamp
    }
}

/// Everything the store holds, as read at start-up.
public struct StoredState: Sendable, Hashable {
    /// In the order they were first stored, so a restart restores them in start order.
    public var activities: [StoredActivity]
    public var settings: [String: JSON]
    /// Ordered by app, then uid (none first), then type.
    public var layouts: [StoredLayout]
    /// In no particular order.
    public var pushTokens: [StoredPushToken]
    /// Rows that could not be read and were skipped: an activity's id as is, a setting as
    /// `setting:<key>`, a layout as `layout:<app>/<type>`, a push token as `push-token`.
    public var damaged: [String]

    public init(
        activities: [StoredActivity] = [], settings: [String: JSON] = [:],
        layouts: [StoredLayout] = [], pushTokens: [StoredPushToken] = [], damaged: [String] = []
    ) {
        self.pushTokens = pushTokens
        self.activities = activities
        self.settings = settings
        self.layouts = layouts
        self.damaged = damaged
    }
}
