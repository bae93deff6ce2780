package import OrderedJSON
import OrderedCollections

/// What became of one push, as published on its token's feedback topic — which APNs never
/// tells a server:
///
/// ```json
/// {"timestamp": 1700000000, "event": "update", "outcome": "throttled",
///  "activity": "6F1C…", "deliverAt": 1700000000.5, "receivedAt": 1700000000.02}
/// {"timestamp": 1699999990, "event": "update", "outcome": "refused",
///  "error": "org.island.StaleTimestamp", "parameters": {"id": "6F1C…", "last": 1700000000, "given": 1699999990},
///  "receivedAt": 1700000000.03}
/// ```
///
/// `timestamp` and `event` repeat the push's (null when it could not be read), so a server
/// can match feedback to what it sent.
package struct PushFeedback: Sendable, Hashable {
    package enum Outcome: Sendable, Hashable {
        /// Presenters show the content now. `pushToken` is the new activity's, for a start
        /// that asked for one. `alertSuppressed`: why the push's alert was not shown.
        case applied(activity: String, pushToken: String? = nil, alertSuppressed: AlertSuppression? = nil)
        /// Accepted, but the activity's update rate holds it until `deliverAt` (a later update
        /// may replace it meanwhile: the latest wins).
        case throttled(activity: String, deliverAt: Double, alertSuppressed: AlertSuppression? = nil)
        /// Not applied: the error's name and parameters.
        case refused(name: String, parameters: JSONObject)
        /// The token works no more (`dismissed` with its activity, or `rotated`), and the
        /// device no longer listens to it: pushes to it go nowhere from now on. Not an answer
        /// to a push (`timestamp` and `event` are null), like APNs' 410 Unregistered.
        case revoked(reason: String)
    }

    package var timestamp: Double?
    package var event: PushRequest.Event?
    package var outcome: Outcome
    /// When the device handled the push, by its clock.
    package var receivedAt: Double
    /// The push's `sequence`, repeated.
    package var sequence: Int?
    /// Numbers skipped before `sequence` since the highest this token received: pushes its
    /// server sent that never reached the device (dropped by the broker). Published when
    /// more than 0.
    package var missed = 0

    package init(timestamp: Double?, event: PushRequest.Event?, outcome: Outcome, receivedAt: Double) {
        self.timestamp = timestamp
        self.event = event
        self.outcome = outcome
        self.receivedAt = receivedAt
    }

    package init(request: PushRequest?, refusal: PushRefusal, receivedAt: Double) {
        self.init(
            timestamp: request?.timestamp, event: request?.event,
            outcome: .refused(name: refusal.name, parameters: refusal.parameters), receivedAt: receivedAt)
    }

    /// The message's bytes: compact JSON.
    package var payload: [UInt8] {
        var text = JSONText(capacity: 256)
        text.openObject()
        if let timestamp { text.member("timestamp", double: timestamp) } else { text.member("timestamp", .null) }
        if let event { text.member("event", string: event.rawValue) } else { text.member("event", .null) }
        switch outcome {
        case .applied(let activity, let pushToken, let alertSuppressed):
            text.member("outcome", string: "applied")
            text.member("activity", string: activity)
            if let pushToken { text.member("pushToken", string: pushToken) }
            Self.write(alertSuppressed, to: &text)
        case .throttled(let activity, let deliverAt, let alertSuppressed):
            text.member("outcome", string: "throttled")
            text.member("activity", string: activity)
            text.member("deliverAt", double: deliverAt)
            Self.write(alertSuppressed, to: &text)
        case .refused(let name, let parameters):
            text.member("outcome", string: "refused")
            text.member("error", string: name)
            text.member("parameters", .object(parameters))
        case .revoked(let reason):
            text.member("outcome", string: "revoked")
            text.member("reason", string: reason)
        }
        if let sequence { text.member("sequence", int: sequence) }
        if missed > 0 { text.member("missed", int: missed) }
        text.member("receivedAt", double: receivedAt)
        text.closeObject()
        return text.bytes
    }

    /// `"alertSuppressed": true, "alertSuppressedReason": …` when the alert was not shown, as
    /// a local update's `Delivery` says it.
    private static func write(_ suppression: AlertSuppression?, to text: inout JSONText) {
        guard let suppression else { return }
        text.member("alertSuppressed", bool: true)
        text.member("alertSuppressedReason", string: suppression.rawValue)
    }
}
