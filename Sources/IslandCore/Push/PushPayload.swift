package import OrderedJSON
import OrderedCollections

/// What a server asks of an activity in one push: APNs' Live Activity payload,
///
/// ```json
/// {"aps": {"timestamp": 1700000000, "event": "update",
///          "content-state": {"stage": "on the way"}, "stale-date": 1700003600,
///          "relevance-score": 50, "alert": {"title": "Delivery", "body": "On the way"}}}
/// ```
///
/// APNs' `apns-priority` and `apns-expiration` are headers of the HTTP request, outside the
/// payload; an MQTT 3.1.1 message has no headers, so both travel in `aps`, named without the
/// prefix (`priority`, `expiration`), for a token's push and a channel's message alike.
///
/// with `"event": "start"` adding `attributes-type` and `attributes` (and `input-push-token`
/// to give the new activity a push token of its own, `start-date` to schedule it), and
/// `"event": "end"` an optional
/// `dismissal-date`.
package struct PushRequest: Sendable, Hashable {
    package enum Event: String, Sendable, Hashable, CaseIterable {
        case start, update, end
    }

    package var event: Event
    /// The server's clock, seconds since the epoch: orders pushes, and makes a redelivered one
    /// a duplicate.
    package var timestamp: Double
    /// `content-state`, `stale-date` and `relevance-score`; nil for an `end` without state.
    package var content: ActivityContent?
    /// `end`: when the activity leaves the lock screen; now or earlier means at once.
    package var dismissalDate: Double?
    package var alert: Alert?
    /// `start`: the activity's type and attributes.
    package var attributesType: String?
    package var attributes: JSONObject?
    /// `start` with `input-push-token`: the new activity gets a push token.
    package var wantsPushToken: Bool
    /// `start` with `start-date`: the activity is scheduled for that date, pending until
    /// then; the push's `alert` is its start alert, which a scheduled start requires.
    package var startDate: Double?
    /// `priority`: APNs' 10 (the default), 5 or 1 (`PushPriority`).
    package var priority: PushPriority = .high
    /// `expiration`: APNs' `apns-expiration`, seconds since the epoch — after it the push is
    /// not applied (`PushRefusal.expired`); `0` means now or never: the backend publishes it
    /// so that no broker keeps it for a device that is offline. Nil: no expiry.
    package var expiration: Double?
    /// `start` with `input-push-channel`: the new activity listens to that broadcast channel.
    package var pushChannel: String?
    /// `sequence`: the server's number for this push among those it sent to this token, 1, 2,
    /// 3…; the answer repeats it and says how many numbers before it never arrived
    /// (`PushFeedback.missed`). Optional.
    package var sequence: Int?

    package init(
        event: Event, timestamp: Double, content: ActivityContent? = nil, dismissalDate: Double? = nil, alert: Alert? = nil,
        attributesType: String? = nil, attributes: JSONObject? = nil, wantsPushToken: Bool = false
    ) {
        self.event = event
        self.timestamp = timestamp
        self.content = content
        self.dismissalDate = dismissalDate
        self.alert = alert
        self.attributesType = attributesType
        self.attributes = attributes
        self.wantsPushToken = wantsPushToken
    }

    /// The dismissal an `end` asks for, as a device that received it at `receivedAt` applies it:
    /// none given, the default; a date already past, at once; else at that date.
    package func dismissal(receivedAt: Double) -> DismissalPolicy {
        switch dismissalDate {
        case nil: .default
        case let date? where date <= receivedAt: .immediate
        case let date?: .after(date)
        }
    }
}

/// Why a push was not applied, as the server reads it on the token's feedback topic: a named
/// error with parameters, the same names a local producer gets (docs/design.md §3), plus those
/// only a push can earn.
package enum PushRefusal: Error, Sendable, Hashable {
    /// The payload is `size` bytes, over `limit`: refused before it is parsed.
    case payloadTooLarge(limit: Int, size: Int)
    /// Not JSON, not APNs-shaped, or a field of the wrong type: `reason` names it.
    case invalidPayload(reason: String)
    /// The token is not (or no longer) one of this device's: revoked when its activity was
    /// dismissed, rotated, or never issued.
    case noSuchToken
    /// The push arrived at `receivedAt`, after its `expiration`: too late to be applied.
    case expired(expiration: Double, receivedAt: Double)
    /// The activity rules refused it, as they would a local call of the app.
    case refused(IslandError)

    /// The qualified error name, e.g. `org.island.PushExpired`.
    package var name: String {
        switch self {
        case .payloadTooLarge: ErrorNames.PushPayloadTooLarge.error
        case .invalidPayload: ErrorNames.InvalidPushPayload.error
        case .noSuchToken: ErrorNames.NoSuchPushToken.error
        case .expired: ErrorNames.PushExpired.error
        case .refused(let error): error.name
        }
    }

    /// The error's parameters, in the names generated from Protocol/org.island.varlink.
    package var parameters: JSONObject {
        switch self {
        case .payloadTooLarge(let limit, let size):
            [ErrorNames.PushPayloadTooLarge.limit: .int(limit), ErrorNames.PushPayloadTooLarge.size: .int(size)]
        case .invalidPayload(let reason): [ErrorNames.InvalidPushPayload.reason: .string(reason)]
        case .noSuchToken: [:]
        case .expired(let expiration, let receivedAt):
            [ErrorNames.PushExpired.expiration: .double(expiration), ErrorNames.PushExpired.receivedAt: .double(receivedAt)]
        case .refused(let error): error.parameters
        }
    }
}

/// Reads a push's bytes, which are untrusted: anyone with write rights on the topic — another
/// backend, a compromised one — may have put anything there. The size is bounded before
/// parsing, the nesting while parsing, and every field's type is checked; what is not
/// understood is refused with its reason, never guessed. Fields APNs payloads carry that mean
/// nothing here (`sound`, keys outside `aps`) are ignored, so a server's existing payloads work.
package enum PushPayload {
    /// The largest payload read: the activity's own limits (4 KB of attributes and state by
    /// default, configurable) apply after, this only bounds the parse.
    package static let maximumBytes = 64 * 1024
    /// Nesting allowed by the parse: the payload wraps the state two levels deep, and the
    /// activity's limit of 32 applies after, with its own named error.
    static let maximumDepth = ActivityLimits.maximumNesting + 8

    package static func decode(_ bytes: [UInt8]) throws(PushRefusal) -> PushRequest {
        try decode(parse(bytes))
    }

    /// The payload's top-level object, parsed once for whoever reads members beside `aps`
    /// (a channel message's `feedback`), then `decode`d.
    package static func parse(_ bytes: [UInt8]) throws(PushRefusal) -> JSONObject {
        guard bytes.count <= maximumBytes else { throw .payloadTooLarge(limit: maximumBytes, size: bytes.count) }
        let document: JSON
        do {
            document = try JSONParser.parse(bytes, maximumDepth: maximumDepth)
        } catch {
            throw .invalidPayload(reason: "not JSON: \(error)")
        }
        guard let top = document.objectValue else { throw .invalidPayload(reason: "the payload must be a JSON object") }
        return top
    }

    package static func decode(_ top: JSONObject) throws(PushRefusal) -> PushRequest {
        guard let aps = top["aps"]?.objectValue else { throw .invalidPayload(reason: "aps must be an object") }
        // Read nowhere, and a server that sent it would believe its pushes expire: said, not ignored.
        guard top["apns-expiration"] == nil else {
            throw .invalidPayload(reason: "the expiry is aps.expiration (as aps.priority is APNs' apns-priority); apns-expiration beside aps is not read")
        }
        let fields = Fields(aps)

        guard let eventName = try fields.string("event") else { throw .invalidPayload(reason: "aps.event is missing") }
        guard let event = PushRequest.Event(rawValue: eventName) else {
            throw .invalidPayload(reason: "aps.event must be start, update or end")
        }
        guard let timestamp = try fields.number("timestamp") else {
            throw .invalidPayload(reason: "aps.timestamp is missing: a push is ordered by it")
        }
        guard timestamp > 0 else { throw .invalidPayload(reason: "aps.timestamp must be greater than 0") }

        var request = PushRequest(event: event, timestamp: timestamp)
        if let sequence = try fields.number("sequence") {
            guard sequence >= 1, sequence <= 9_007_199_254_740_991, sequence.rounded() == sequence else {
                throw .invalidPayload(reason: "aps.sequence must be a whole number from 1 to 2^53 - 1")
            }
            request.sequence = Int(sequence)
        }
        let staleDate = try fields.number("stale-date")
        let relevance = try fields.number("relevance-score") ?? 0
        if let state = try fields.object("content-state") {
            request.content = ActivityContent(state: state, staleDate: staleDate, relevanceScore: relevance)
        } else if event != .end {
            throw .invalidPayload(reason: "aps.content-state is missing")
        }
        request.alert = try fields.alert()
        if let priority = try fields.number("priority") {
            guard let known = PushPriority(rawValue: Int(exactly: priority) ?? -1) else {
                throw .invalidPayload(reason: "aps.priority must be 10, 5 or 1")
            }
            request.priority = known
        }
        if let expiration = try fields.number("expiration") {
            guard expiration >= 0 else { throw .invalidPayload(reason: "aps.expiration must be 0 or a date in seconds since the epoch") }
            request.expiration = expiration
        }
        switch event {
        case .start:
            guard let type = try fields.string("attributes-type") else { throw .invalidPayload(reason: "aps.attributes-type is missing") }
            guard let attributes = try fields.object("attributes") else { throw .invalidPayload(reason: "aps.attributes is missing") }
            request.attributesType = type
            request.attributes = attributes
            request.wantsPushToken = try fields.flag("input-push-token")
            request.startDate = try fields.number("start-date")
            request.pushChannel = try fields.string("input-push-channel")
        case .end:
            request.dismissalDate = try fields.number("dismissal-date")
        case .update:
            break
        }
        return request
    }

    /// The members of `aps`, each read as the type it must have.
    private struct Fields {
        let object: JSONObject

        init(_ object: JSONObject) { self.object = object }

        private func member(_ key: String) -> JSON? {
            guard let value = object[key], !value.isNull else { return nil }
            return value
        }

        func string(_ key: String) throws(PushRefusal) -> String? {
            guard let value = member(key) else { return nil }
            guard let string = value.stringValue else { throw .invalidPayload(reason: "aps.\(key) must be a string") }
            return string
        }

        /// A finite number: JSON has no other, and this is not the place to trust the parser for it.
        func number(_ key: String) throws(PushRefusal) -> Double? {
            guard let value = member(key) else { return nil }
            guard let number = value.doubleValue, number.isFinite else { throw .invalidPayload(reason: "aps.\(key) must be a number") }
            return number
        }

        func object(_ key: String) throws(PushRefusal) -> JSONObject? {
            guard let value = member(key) else { return nil }
            guard let object = value.objectValue else { throw .invalidPayload(reason: "aps.\(key) must be an object") }
            return object
        }

        /// APNs writes flags as 1; true is taken too.
        func flag(_ key: String) throws(PushRefusal) -> Bool {
            guard let value = member(key) else { return false }
            if let bool = value.boolValue { return bool }
            if let int = value.intValue, int == 0 || int == 1 { return int == 1 }
            throw .invalidPayload(reason: "aps.\(key) must be 1, 0, true or false")
        }

        /// `alert` as an object of strings (`title`, `body`; APNs' `subtitle`, `sound` and
        /// localisation keys are ignored), or a string, which APNs takes as the body.
        func alert() throws(PushRefusal) -> Alert? {
            guard let value = member("alert") else { return nil }
            if let body = value.stringValue { return Alert(title: "", body: body) }
            guard let alert = value.objectValue else { throw .invalidPayload(reason: "aps.alert must be an object or a string") }
            func text(_ key: String) throws(PushRefusal) -> String {
                guard let value = alert[key], !value.isNull else { return "" }
                guard let string = value.stringValue else { throw .invalidPayload(reason: "aps.alert.\(key) must be a string") }
                return string
            }
            let (title, body) = (try text("title"), try text("body"))
            guard !title.isEmpty || !body.isEmpty else { throw .invalidPayload(reason: "aps.alert has neither title nor body") }
            return Alert(title: title, body: body)
        }
    }
}
