package import OrderedJSON

/// One live activity, as the manager holds it. Only `ActivityManager` changes an activity, so
/// every mutable field is `internal(set)`.
///
/// A value behind one reference, copied on write: an activity is copied into every event, the
/// presenters' view of it, its commit and its reply, and each copy then costs one retain; the
/// one update that changes it makes one copy of its fields.
///
/// Times are seconds since the Unix epoch.
package struct Activity: Sendable, Hashable, Identifiable {
    /// Assigned by the manager's ID generator (a UUID in the daemon).
    package var id: String { identity.value.id }
    /// `id`, hashed once for the tables that look activities up on every update.
    package var hashedID: HashedID { identity.value.hashedID }
    /// The producing app's id.
    package var app: String { identity.value.app }
    /// The app the activity is about, when its producer speaks for other apps and the daemon
    /// allowed it to for this one (`org.island.Producer.Request`'s `sourceApp`): presenters
    /// head it with that app's desktop entry.
    package var sourceApp: String? { identity.value.sourceApp }
    /// The producer's uid in the system scope; nil in the user scope.
    package var uid: UInt32? { identity.value.uid }
    /// The only producer that may see or change the activity.
    package var owner: ActivityOwner { ActivityOwner(app: app, uid: uid) }
    /// The attributes type name; selects the layout.
    package var type: String { identity.value.type }
    /// Immutable for the activity's life.
    package var attributes: JSONObject { identity.value.attributes }
    /// The idempotency key of the request that started it, if any.
    package var key: String? { identity.value.key }
    package var ownerGonePolicy: OwnerGonePolicy { identity.value.ownerGonePolicy }
    package var createdAt: Double { identity.value.createdAt }
    /// `JSON.serializedSize(of: attributes)`: the part of the payload limit every update
    /// counts again.
    var attributesSize: Int { identity.value.attributesSize }

    private var storage: Storage
    private var identity: Shared<Identity> { storage.identity }

    /// The one reference an activity is. Its fields change only while no other activity
    /// shares it (`fields(_:)` copies it first otherwise), as an array's storage does.
    private final class Storage: @unchecked Sendable {
        let identity: Shared<Identity>
        var fields: Fields

        init(identity: Shared<Identity>, fields: Fields) {
            self.identity = identity
            self.fields = fields
        }
    }

    /// What an activity's life changes.
    private struct Fields: Sendable, Hashable {
        var content: ActivityContent
        var deliveredContent: ActivityContent
        var deliveredAt: Double
        var state: ActivityState
        var endReason: EndReason?
        var updatedAt: Double
        var endedAt: Double?
        var dismissAt: Double?
        var lastTimestamp: Double?
        var nextDeliveryAt: Double?
        var ownerGraceEndsAt: Double?
        var schedule: ScheduledStart?
    }

    /// The fields, to change: this activity's own storage, copied first if it is shared.
    private var fields: Fields {
        get { storage.fields }
        _modify {
            if !isKnownUniquelyReferenced(&storage) { storage = Storage(identity: storage.identity, fields: storage.fields) }
            yield &storage.fields
        }
    }

    /// Whether `other` is this very activity — one storage, not an equal copy of it, as the
    /// events of one update carry it: a check of one reference, where `==` may compare every
    /// field.
    package func isSame(as other: Activity) -> Bool { storage === other.storage }

    /// Whether `other` is a version of this activity, made from it by changing its fields
    /// (they share one identity): a check of one reference that needs no id compared. False
    /// says nothing: an activity read back from the store has an identity of its own.
    package func isVersion(of other: Activity) -> Bool { storage.identity === other.storage.identity }

    package static func == (lhs: Activity, rhs: Activity) -> Bool {
        lhs.storage === rhs.storage || (lhs.identity == rhs.identity && lhs.storage.fields == rhs.storage.fields)
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(identity)
        hasher.combine(storage.fields)
    }

    /// What never changes, shared by every copy of the activity.

    private struct Identity: Sendable, Hashable {
        let id: String
        let hashedID: HashedID
        let app: String
        let sourceApp: String?
        let uid: UInt32?
        let type: String
        let attributes: JSONObject
        let key: String?
        let ownerGonePolicy: OwnerGonePolicy
        let createdAt: Double
        /// `"id":…,"app":…,("sourceApp":…,)"type":…,"attributes":{…}`: every shape an activity is written in
        /// starts with these, and one goes out on every update.
        let identityMembers: [UInt8]
        /// `createdAt` as JSON text, which every item and stored document carries too.
        let createdAtText: [UInt8]
        let attributesSize: Int

        init(
            id: String, app: String, sourceApp: String?, uid: UInt32?, type: String, attributes: JSONObject, key: String?,
            ownerGonePolicy: OwnerGonePolicy, createdAt: Double
        ) {
            (self.id, self.app, self.sourceApp, self.uid, self.type, self.attributes) = (id, app, sourceApp, uid, type, attributes)
            hashedID = HashedID(id)
            (self.key, self.ownerGonePolicy, self.createdAt) = (key, ownerGonePolicy, createdAt)
            // Members alone, no brace: `openObject(members:)` opens the object around them.
            var text = JSONText(capacity: 128)
            text.member("id", string: id)
            text.member("app", string: app)
            if let sourceApp { text.member("sourceApp", string: sourceApp) }
            text.member("type", string: type)
            text.member("attributes", .object(attributes))
            identityMembers = text.bytes
            createdAtText = JSON.double(createdAt).serialized()
            attributesSize = JSON.serializedSize(of: attributes)
        }
    }

    /// Opens the activity's object in `text` with its identity: id, app, source app, type and attributes.
    package func openObject(in text: inout JSONText) {
        text.openObject(members: identity.value.identityMembers)
    }

    /// Writes the `createdAt` member.
    package func writeCreatedAt(to text: inout JSONText) {
        text.key("createdAt")
        text.value(text: identity.value.createdAtText)
    }

    /// The latest accepted content.
    package internal(set) var content: ActivityContent {
        get { storage.fields.content }
        set { fields.content = newValue }
    }
    /// What presenters currently see. Differs from `content` while a coalesced update waits
    /// for its delivery slot (`nextDeliveryAt`).
    package internal(set) var deliveredContent: ActivityContent {
        get { storage.fields.deliveredContent }
        set { fields.deliveredContent = newValue }
    }
    /// `deliveredContent.relevanceScore`, read without copying the content (and retaining its
    /// state): the island's order is checked against it on every update.
    package var deliveredRelevanceScore: Double { storage.fields.deliveredContent.relevanceScore }
    /// When `deliveredContent` was delivered; the per-activity update rate counts from here.
    package internal(set) var deliveredAt: Double {
        get { storage.fields.deliveredAt }
        set { fields.deliveredAt = newValue }
    }
    package internal(set) var state: ActivityState {
        get { storage.fields.state }
        set { fields.state = newValue }
    }
    package internal(set) var endReason: EndReason? {
        get { storage.fields.endReason }
        set { fields.endReason = newValue }
    }
    /// When the content or the state last changed.
    package internal(set) var updatedAt: Double {
        get { storage.fields.updatedAt }
        set { fields.updatedAt = newValue }
    }
    package internal(set) var endedAt: Double? {
        get { storage.fields.endedAt }
        set { fields.endedAt = newValue }
    }
    /// When an ended activity will be dismissed.
    package internal(set) var dismissAt: Double? {
        get { storage.fields.dismissAt }
        set { fields.dismissAt = newValue }
    }
    /// The producer timestamp of the last accepted update; older or equal ones are refused.
    package internal(set) var lastTimestamp: Double? {
        get { storage.fields.lastTimestamp }
        set { fields.lastTimestamp = newValue }
    }
    /// When the coalesced `content` will be delivered; nil when presenters are up to date.
    package internal(set) var nextDeliveryAt: Double? {
        get { storage.fields.nextDeliveryAt }
        set { fields.nextDeliveryAt = newValue }
    }
    /// With the `stale` owner-gone policy: when the activity turns stale unless its app returns.
    package internal(set) var ownerGraceEndsAt: Double? {
        get { storage.fields.ownerGraceEndsAt }
        set { fields.ownerGraceEndsAt = newValue }
    }

    /// How a scheduled activity starts: its date, its alert, and whether it started late.
    /// Nil for an activity that started when it was requested.
    package internal(set) var schedule: ScheduledStart? {
        get { storage.fields.schedule }
        set { fields.schedule = newValue }
    }

    /// When the activity became (or, pending, will become) active: its scheduled start, or
    /// its creation. Its maximum active duration counts from here, and the island orders by it.
    package var activeSince: Double { schedule?.startsAt ?? createdAt }

    init(
        id: String, owner: ActivityOwner, sourceApp: String? = nil, type: String, attributes: JSONObject, key: String?,
        ownerGonePolicy: OwnerGonePolicy, content: ActivityContent, state: ActivityState, now: Double
    ) {
        let identity = Shared(
            Identity(
                id: id, app: owner.app, sourceApp: sourceApp, uid: owner.uid, type: type, attributes: attributes, key: key,
                ownerGonePolicy: ownerGonePolicy, createdAt: now))
        self.storage = Storage(
            identity: identity,
            fields: Fields(
                content: content, deliveredContent: content, deliveredAt: now, state: state, updatedAt: now))
    }

    /// Pending, active or stale.
    package var isLive: Bool { state.isLive }

    /// A dismissed activity as it was once it had ended: for one dismissed in the same
    /// moment it ended (an immediate dismissal), whose watchers are promised `ended` before
    /// `dismissed` all the same. Nil when it never ended.
    package var asEnded: Activity? {
        guard endedAt != nil else { return nil }
        var ended = self
        ended.state = .ended
        return ended
    }

    /// The size that `maximumPayloadBytes` limits: compact JSON of the attributes plus compact
    /// JSON of the content state, in bytes.
    package static func payloadSize(attributes: JSONObject, content: ActivityContent) -> Int {
        JSON.serializedSize(of: attributes) + content.stateText.count
    }
}
