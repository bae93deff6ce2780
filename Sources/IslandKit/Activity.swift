public import Foundation
import Logging
import OrderedJSON
import Synchronization

/// A Live Activity of this app, as in ActivityKit: start one with `request`, change what it
/// shows with `update`, and `end` it. The daemon decides where it appears.
///
/// ```swift
/// struct PizzaDeliveryAttributes: ActivityAttributes {
///     struct ContentState: Codable, Hashable, Sendable { var driver: String; var eta: Date }
///     var orderNumber: Int
/// }
/// let activity = try await Activity.request(
///     attributes: PizzaDeliveryAttributes(orderNumber: 12),
///     content: ActivityContent(state: .init(driver: "Bill", eta: .now + 900), staleDate: nil))
/// for await content in activity.contentUpdates { print(content.state.eta) }
/// ```
///
/// `request` and the other calls that can be refused throw `ActivityAuthorizationError`: the
/// daemon's refusals by name, with their parameters, or `daemonUnavailable`. `update` and
/// `end` do not throw, as in ActivityKit (`checkedUpdate` and `checkedEnd` do).
public final class Activity<Attributes: ActivityAttributes>: Sendable, Identifiable {
    public typealias ContentState = Attributes.ContentState
    /// The streams, by ActivityKit's names.
    public typealias ContentUpdates = AsyncStream<ActivityContent<ContentState>>
    public typealias ActivityStateUpdates = AsyncStream<ActivityState>
    public typealias PushTokenUpdates = AsyncStream<Data>
    public typealias ActivityUpdates = AsyncStream<Activity<Attributes>>
    public typealias Interactions = AsyncStream<ActivityInteraction>

    /// The daemon-assigned id.
    public let id: String
    /// The immutable attributes given at the start.
    public let attributes: Attributes

    /// How it was requested; `.standard` for one this process did not start.
    public let style: ActivityStyle

    private let channel: ActivityChannel
    private let connection: IslandConnection
    /// The last content that decoded as `ContentState`.
    private let decoded: Mutex<ActivityContent<ContentState>>

    init(
        snapshot: ActivitySnapshot, attributes: Attributes, content: ActivityContent<ContentState>,
        channel: ActivityChannel, connection: IslandConnection, style: ActivityStyle = .standard
    ) {
        id = snapshot.id
        self.attributes = attributes
        self.channel = channel
        self.connection = connection
        self.style = style
        decoded = Mutex(content)
    }

    /// The latest accepted content.
    public var content: ActivityContent<ContentState> {
        let raw = channel.latest.content
        if let content = Self.decode(raw, connection.configuration.dateEncoding) {
            decoded.withLock { $0 = content }
            return content
        }
        return decoded.withLock { $0 }
    }

    /// Where the activity is in its life.
    public var activityState: ActivityState { channel.latest.state }

    /// Why the activity ended, once it has.
    public var endReason: ActivityEndReason? { channel.latest.endReason }

    /// The app this activity belongs to.
    public var app: String { channel.latest.app }

    // MARK: Starting

    /// Starts an activity, as ActivityKit's `request(attributes:content:pushType:style:)`, after
    /// a round trip to the daemon (hence `async`). With `key`, a retry of the same request
    /// returns the activity already started instead of a duplicate. `ownerGone` says what
    /// happens when the app's last connection goes away. With `pushType: .token` it gets a
    /// push token (`pushToken`), for the app's server to update it; with `.channel(id)` it
    /// listens to that broadcast channel. `connection` defaults to
    /// the one `IslandKit.configure` set up.
    ///
    /// With `start`, as ActivityKit's `request(attributes:content:pushType:style:alertConfiguration:start:)`,
    /// the activity is scheduled: `.pending` until that date — in `activities`, shown by no
    /// presenter, kept across restarts of the daemon — then started with `alertConfiguration`,
    /// which a start requires (the daemon refuses one without, `StartAlertRequired`). It counts
    /// against the start budget when requested.
    public static func request(
        attributes: Attributes, content: ActivityContent<ContentState>, pushType: PushType? = nil,
        style: ActivityStyle = .standard, alertConfiguration: AlertConfiguration? = nil, start: Date? = nil,
        key: String? = nil, ownerGone: ActivityOwnerGonePolicy = .keep,
        connection: IslandConnection = .shared()
    ) async throws -> Activity {
        let dates = connection.configuration.dateEncoding
        let attributesJSON: JSONObject
        let raw: RawActivityContent
        do {
            attributesJSON = try JSONCoding.object(attributes, dates: dates)
            raw = try rawContent(content, dates)
        } catch {
            throw ActivityCodingError(description: "\(error)")
        }
        let (snapshot, _) = try await connection.request(
            type: Attributes.activityType, attributes: attributesJSON, content: raw,
            key: key, ownerGone: ownerGone, pushToken: pushType == .token,
            start: start?.timeIntervalSince1970, alert: alertConfiguration,
            channel: pushType?.channelID)
        let channel = await connection.channel(for: snapshot)
        return Activity(
            snapshot: snapshot, attributes: attributes, content: decode(snapshot.content, dates) ?? content,
            channel: channel, connection: connection, style: style)
    }

    /// This app's activities of this attributes type that are not dismissed, oldest first, as
    /// ActivityKit's: asked of the daemon (hence `await`); none when it cannot be reached.
    /// `activities(connection:)` says why.
    public static var activities: [Activity] {
        get async { (try? await activities(connection: .shared())) ?? [] }
    }

    /// This app's activities of this attributes type that are not dismissed, oldest first.
    /// Activities whose attributes or state do not decode as this type are left out.
    public static func activities(connection: IslandConnection) async throws -> [Activity] {
        let snapshots = try await connection.list(type: Attributes.activityType, states: [.pending, .active, .stale, .ended])
        var result: [Activity] = []
        for snapshot in snapshots {
            if let activity = await Activity(snapshot, connection: connection) { result.append(activity) }
        }
        return result
    }

    /// An activity heard of: nil when its attributes or state do not decode as this type.
    private convenience init?(_ snapshot: ActivitySnapshot, connection: IslandConnection) async {
        let dates = connection.configuration.dateEncoding
        guard let attributes = try? JSONCoding.decode(Attributes.self, from: snapshot.attributes, dates: dates),
            let content = Self.decode(snapshot.content, dates)
        else { return nil }
        let channel = await connection.channel(for: snapshot)
        self.init(snapshot: snapshot, attributes: attributes, content: content, channel: channel, connection: connection)
    }

    /// Each activity of this type as it starts, as ActivityKit's `activityUpdates`: those the
    /// app's other processes start, and those its server starts with the push-to-start token
    /// (`pushToStartTokenUpdates`), which the app learns of only this way; also those this
    /// process starts with `request`. Activities already running when it is read are in
    /// `activities(connection:)`. Each comes once; ones whose attributes or state do not
    /// decode as this type are left out.
    public static var activityUpdates: ActivityUpdates { activityUpdates(connection: .shared()) }

    public static func activityUpdates(connection: IslandConnection) -> ActivityUpdates {
        let (stream, continuation) = ActivityUpdates.makeStream()
        // Registered now, before this returns: none that starts afterwards is missed.
        let started = connection.startedActivities(type: Attributes.activityType)
        let task = Task {
            for await snapshot in started {
                if let activity = await Activity(snapshot, connection: connection) { continuation.yield(activity) }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    // MARK: Looks

    /// Registers how activities of this type look, replacing the layout registered before
    /// (for this app and `activityType`); presenters redraw running activities with it. The
    /// daemon validates it: `invalidLayout` names the path of what is wrong.
    public static func register(layout: ActivityLayout, connection: IslandConnection = .shared()) async throws {
        try await connection.registerLayout(type: Attributes.activityType, layout: layout.json)
    }

    /// Removes this type's registered layout: its activities show through the default layout
    /// (or the one installed with the app) again.
    public static func removeLayout(connection: IslandConnection = .shared()) async throws {
        try await connection.removeLayout(type: Attributes.activityType)
    }

    // MARK: Changing

    /// Replaces the content, as ActivityKit's `update`: it does not throw, and an update of an
    /// activity that has ended is ignored. With an alert, presenters expand the activity
    /// briefly (within the app's alert budget). With `timestamp`, an update not newer than the
    /// last accepted one is dropped. Any other refusal (too large, the daemon gone for longer
    /// than `reconnectTimeout`) is logged (label `org.island.kit`); `checkedUpdate` throws it
    /// instead, and says whether delivery was throttled.
    public func update(
        _ content: ActivityContent<ContentState>, alertConfiguration: AlertConfiguration? = nil,
        timestamp: Date? = nil
    ) async {
        do {
            try await checkedUpdate(content, alertConfiguration: alertConfiguration, timestamp: timestamp)
        } catch {
            Self.note(error, of: "update", id: id, over: activityState == .ended || activityState == .dismissed)
        }
    }

    /// Replaces the content, or throws why not: `activityEnded`, `staleTimestamp`,
    /// `attributesTooLarge`, … The result says whether delivery was throttled and whether
    /// the alert was shown.
    @discardableResult
    public func checkedUpdate(
        _ content: ActivityContent<ContentState>, alertConfiguration: AlertConfiguration? = nil,
        timestamp: Date? = nil
    ) async throws -> ActivityUpdateResult {
        let raw: RawActivityContent
        do { raw = try Self.rawContent(content, connection.configuration.dateEncoding) } catch { throw ActivityCodingError(description: "\(error)") }
        let (snapshot, delivery) = try await connection.update(
            id: id, content: raw, alert: alertConfiguration,
            timestamp: timestamp?.epochSeconds)
        record(snapshot)
        return delivery
    }

    /// Ends the activity, optionally with final content shown until it is dismissed, as
    /// ActivityKit's `end`: it does not throw. Ending an activity that has ended already
    /// applies the new final content and dismissal policy, as in ActivityKit (the dismissal
    /// still counts from the first end); one the user or the system ended, or one dismissed,
    /// is left as it is, silently; other refusals are logged (`checkedEnd` throws them). A
    /// `.transient` activity leaves at once unless `dismissalPolicy` says otherwise.
    public func end(
        _ content: ActivityContent<ContentState>? = nil, dismissalPolicy: ActivityUIDismissalPolicy = .default,
        timestamp: Date? = nil
    ) async {
        do {
            try await checkedEnd(content, dismissalPolicy: dismissalPolicy, timestamp: timestamp)
        } catch {
            Self.note(error, of: "end", id: id, over: activityState == .ended || activityState == .dismissed)
        }
    }

    /// Ends the activity, or throws why not (`activityEnded`, `staleTimestamp`, …).
    public func checkedEnd(
        _ content: ActivityContent<ContentState>? = nil, dismissalPolicy: ActivityUIDismissalPolicy = .default,
        timestamp: Date? = nil
    ) async throws {
        var raw: RawActivityContent?
        if let content {
            do { raw = try Self.rawContent(content, connection.configuration.dateEncoding) } catch { throw ActivityCodingError(description: "\(error)") }
        }
        // The daemon has no lock-screen-less activities: a transient one is dismissed as it ends.
        let policy = style == .transient && dismissalPolicy == .default ? .immediate : dismissalPolicy
        let snapshot = try await connection.end(id: id, content: raw, dismissalPolicy: policy, timestamp: timestamp?.epochSeconds)
        record(snapshot)
    }

    /// What the non-throwing `update` and `end` do with a refusal: an ended activity is what
    /// ActivityKit ignores silently, and so is one dismissed (`over`), which the daemon no
    /// longer knows; anything else is worth a line in the log.
    private static func note(_ error: any Error, of call: String, id: String, over: Bool) {
        switch error as? ActivityAuthorizationError {
        case .activityEnded?: return
        case .noSuchActivity? where over: return
        default: break
        }
        refusalLogger.warning(
            "the activity's \(call) was not applied",
            metadata: [
                "id": "\(id)", "error": "\(error)",
                "suggestion": "\((error as? ActivityAuthorizationError)?.recoverySuggestion ?? "")",
            ])
    }

    /// Keeps `content` current without emitting: the streams follow what presenters get.
    private func record(_ snapshot: ActivitySnapshot) {
        channel.note(snapshot)
        if let content = Self.decode(snapshot.content, connection.configuration.dateEncoding) { decoded.withLock { $0 = content } }
    }

    // MARK: Following

    /// The content each time presenters get new content (after coalescing), and the current
    /// content again after a reconnect to a restarted daemon. Finishes when the activity is
    /// dismissed.
    public var contentUpdates: ContentUpdates {
        let (stream, continuation) = ContentUpdates.makeStream()
        let dates = connection.configuration.dateEncoding
        let token = channel.subscribe(
            .content,
            handler: { snapshot in
                if let content = Self.decode(snapshot.deliveredContent, dates) { continuation.yield(content) }
            }, finish: { continuation.finish() })
        guard let token else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [channel] _ in channel.remove(token) }
        return stream
    }

    /// The state each time it changes, and the current state again after a reconnect.
    /// `ended` always comes before `dismissed`, also when the activity was dismissed at once.
    /// Finishes after `dismissed`.
    public var activityStateUpdates: ActivityStateUpdates {
        let (stream, continuation) = ActivityStateUpdates.makeStream()
        let token = channel.subscribe(
            .state, handler: { snapshot in continuation.yield(snapshot.state) },
            finish: { continuation.finish() })
        guard let token else {
            continuation.yield(.dismissed)
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [channel] _ in channel.remove(token) }
        return stream
    }

    /// Taps and button presses on this activity, as the user makes them in any presenter, for
    /// as long as the activity is not dismissed. Act on a button, then `update` the activity
    /// so it shows the result.
    ///
    /// ```swift
    /// for await interaction in activity.interactions {
    ///     switch interaction {
    ///     case .button(action: "pause"): try await player.pause()
    ///     case .button: break
    ///     case .tap(let url): if let url { open(url) }
    ///     }
    /// }
    /// ```
    public var interactions: Interactions {
        let (stream, continuation) = Interactions.makeStream()
        let token = channel.subscribeInteractions({ continuation.yield($0) }, finish: { continuation.finish() })
        guard let token else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [channel] _ in channel.remove(token) }
        return stream
    }

    // MARK: Push

    /// The activity's push token, as ActivityKit's: the bytes to send to the app's server
    /// (often as hex). They are the UTF-8 of the MQTT topic the server publishes the
    /// activity's updates to (`String(decoding: token, as: UTF8.self)`); `island push` takes
    /// either form. Nil until the activity has one.
    public var pushToken: Data? { channel.pushToken.map { Data($0.utf8) } }

    /// The push token now (if it has one) and each new one, as ActivityKit's
    /// `pushTokenUpdates`: send each to the app's server, the one before works no more.
    /// Finishes when the activity is dismissed.
    public var pushTokenUpdates: PushTokenUpdates {
        let (stream, continuation) = PushTokenUpdates.makeStream(bufferingPolicy: .bufferingNewest(1))
        let token = channel.subscribePushToken({ continuation.yield(Data($0.utf8)) }, finish: { continuation.finish() })
        guard let token else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [channel] _ in channel.remove(token) }
        return stream
    }

    /// Gives the activity a new push token (or its first), which `pushTokenUpdates` also
    /// reports; the one before stops working at once.
    @discardableResult
    public func rotatePushToken() async throws -> Data {
        Data(try await connection.pushToken(id: id, rotate: true).utf8)
    }

    /// The app's push-to-start token for this attributes type, as ActivityKit's
    /// `pushToStartTokenUpdates`: the current one (made if need be) and each new one. The
    /// app's server starts activities with it. Finishes at once when push is off.
    public static var pushToStartTokenUpdates: PushTokenUpdates { pushToStartTokenUpdates(connection: .shared()) }

    public static func pushToStartTokenUpdates(connection: IslandConnection) -> PushTokenUpdates {
        let (stream, continuation) = PushTokenUpdates.makeStream(bufferingPolicy: .bufferingNewest(1))
        let task = Task {
            for await token in await connection.pushToStartTokens(type: Attributes.activityType) { continuation.yield(Data(token.utf8)) }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// The app's push-to-start token for this attributes type, as ActivityKit's: asked of the
    /// daemon (hence `await`), which makes one if need be; nil when push is off on this
    /// device or the daemon cannot be reached (`pushToStartToken(rotate:connection:)` says
    /// which).
    public static var pushToStartToken: Data? {
        get async { try? await pushToStartToken(rotate: false, connection: .shared()) }
    }

    /// The app's push-to-start token for this attributes type; with `rotate`, a new one.
    public static func pushToStartToken(rotate: Bool, connection: IslandConnection = .shared()) async throws -> Data {
        Data(try await connection.pushToStartToken(type: Attributes.activityType, rotate: rotate).utf8)
    }

    // MARK: Coding

    private static func rawContent(_ content: ActivityContent<ContentState>, _ dates: ContentDateEncoding) throws -> RawActivityContent {
        RawActivityContent(
            state: try JSONCoding.object(content.state, dates: dates), staleDate: content.staleDate?.epochSeconds,
            relevanceScore: content.relevanceScore)
    }

    private static func decode(_ raw: RawActivityContent, _ dates: ContentDateEncoding) -> ActivityContent<ContentState>? {
        guard let state = try? JSONCoding.decode(ContentState.self, from: raw.state, dates: dates) else { return nil }
        return ActivityContent(
            state: state, staleDate: raw.staleDate.map(Date.init(timeIntervalSince1970:)),
            relevanceScore: raw.relevanceScore)
    }
}

/// Where the non-throwing `update` and `end` report refusals.
private let refusalLogger = Logger(label: "org.island.kit")

/// Attributes or a content state that do not encode as a JSON object (a bare number, a
/// non-finite double, …).
public struct ActivityCodingError: Error, Sendable, CustomStringConvertible {
    public var description: String
}

/// How an activity is reached by its app's server, as ActivityKit's `PushType`: `.token`
/// gives it a push token; `.channel(id)` makes it listen to a broadcast channel of the app
/// (an id `island channel create` printed), whose every message updates it on every device.
/// A start with an id that is no channel's fails with `InvalidChannel`.
public struct PushType: Sendable, Hashable {
    /// The broadcast channel; nil for `.token`.
    public let channelID: String?

    /// A push token of the activity's own (`Activity.pushToken`, `pushTokenUpdates`): the app
    /// sends it to its server, which publishes to it for this device alone.
    public static let token = PushType(channelID: nil)

    /// Listen to the app's broadcast channel `id`, as ActivityKit's `.channel(_:)`: the id
    /// `island channel create` printed for the app's backend (22 characters). Every message the
    /// backend publishes there updates or ends the activity, on every device listening, in
    /// timestamp order; a broadcast never starts one. The activity gets no push token. The
    /// daemon keeps the subscription with the activity, across its restarts. The start fails
    /// with `InvalidChannel` when `id` cannot be a channel's, and with `PushUnavailable` when
    /// the daemon has no broker (`[Push]` in islandd.conf).
    public static func channel(_ id: String) -> PushType { PushType(channelID: id) }
}

/// How an activity is presented, as ActivityKit's `ActivityStyle`.
public enum ActivityStyle: Sendable, Hashable {
    /// In the island and on the lock-screen list, where an ended one stays until it is
    /// dismissed.
    case standard
    /// In the island while it is live, and not kept on the lock-screen list once it ends:
    /// the daemon has no lock-screen-less activities yet, so IslandKit dismisses it as it
    /// ends (`end` with the `.default` policy acts as `.immediate`). While live it is listed
    /// like any other.
    case transient
}
