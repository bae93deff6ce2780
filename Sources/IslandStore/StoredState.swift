package import OrderedJSON

/// An activity row as stored: the daemon maps `body` back to its model.
package struct StoredActivity: Sendable, Hashable {
    package var id: String
    package var app: String
    package var state: String
    package var body: JSONObject
    /// When the row was last written (seconds since 1970), as stamped by the store.
    package var updatedAt: Double?

    package init(id: String, app: String, state: String, body: JSONObject, updatedAt: Double? = nil) {
        self.id = id
        self.app = app
        self.state = state
        self.body = body
        self.updatedAt = updatedAt
    }
}

/// A registered layout row.
package struct StoredLayout: Sendable, Hashable {
    package var app: String
    /// The registering extension's uid in the system scope; nil in the user scope.
    package var uid: UInt32?
    package var type: String
    package var body: String

    package init(app: String, uid: UInt32? = nil, type: String, body: String) {
        self.app = app
        self.uid = uid
        self.type = type
        self.body = body
    }
}

/// A push token row: an activity's (`activityID`) or an owner's push-to-start token for one
/// activity type (`type`), never both.
package struct StoredPushToken: Sendable, Hashable {
    package var token: String
    package var app: String
    /// The owner's uid in the system scope; nil in the user scope.
    package var uid: UInt32?
    package var activityID: String?
    package var type: String?
    /// A push-to-start token's last start, by the server's clock.
    package var lastTimestamp: Double?

    package init(token: String, app: String, uid: UInt32? = nil, activityID: String? = nil, type: String? = nil, lastTimestamp: Double? = nil) {
        self.token = token
        self.app = app
        self.uid = uid
        self.activityID = activityID
        self.type = type
        self.lastTimestamp = lastTimestamp
    }
}

/// Everything the store holds, as read at start-up.
package struct StoredState: Sendable, Hashable {
    /// In the order they were first stored, so a restart restores them in start order.
    package var activities: [StoredActivity]
    package var settings: [String: JSON]
    /// Ordered by app, then uid (none first), then type.
    package var layouts: [StoredLayout]
    /// In no particular order.
    package var pushTokens: [StoredPushToken]
    /// Rows that could not be read and were skipped: an activity's id as is, a setting as
    /// `setting:<key>`, a layout as `layout:<app>/<type>`, a push token as `push-token`.
    package var damaged: [String]

    package init(
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
