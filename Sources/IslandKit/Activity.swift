public import Foundation
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
/// Every method throws `ActivityAuthorizationError`: the daemon's refusals by name, with
/// their parameters, or `daemonUnavailable`.
public final class Activity<Attributes: ActivityAttributes>: Sendable, Identifiable {
    public typealias ContentState = Attributes.ContentState

    /// The daemon-assigned id.
    public let id: String
    /// The immutable attributes given at the start.
    public let attributes: Attributes

    private let channel: ActivityChannel
    private let connection: IslandConnection
    /// The last content that decoded as `ContentState`.
    private let decoded: Mutex<ActivityContent<ContentState>>

    init(snapshot: ActivitySnapshot, attributes: Attributes, content: ActivityContent<ContentState>,
         channel: ActivityChannel, connection: IslandConnection) {
        id = snapshot.id
        self.attributes = attributes
        self.channel = channel
        self.connection = connection
        decoded = Mutex(content)
    }

    /// The latest accepted content.
    public var content: ActivityContent<ContentState> {
        let raw = channel.latest.content
        if let content = Self.decode(raw) {
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

    /// Starts an activity. With `key`, a retry of the same request returns the activity
    /// already started instead of a duplicate. `ownerGone` says what happens when the app's
    /// last connection goes away. With `pushType: .token` it gets a push token (`pushToken`),
    /// for the app's server to update it. `connection` defaults to the one
    /// `IslandKit.configure` set up.
    public static func request(attributes: Attributes, content: ActivityContent<ContentState>, pushType: PushType? = nil,
                               key: String? = nil, ownerGone: ActivityOwnerGonePolicy = .keep,
                               connection: IslandConnection = .shared()) async throws -> Activity {
        let attributesJSON: JSONObject
        let raw: RawActivityContent
        do {
            attributesJSON = try JSONCoding.object(attributes)
            raw = try rawContent(content)
        } catch {
            throw ActivityCodingError(description: "\(error)")
        }
        let (snapshot, _) = try await connection.request(type: Attributes.activityType, attributes: attributesJSON, content: raw,
                                                         key: key, ownerGone: ownerGone, pushToken: pushType != nil)
        let channel = await connection.channel(for: snapshot)
        return Activity(snapshot: snapshot, attributes: attributes, content: decode(snapshot.content) ?? content,
                        channel: channel, connection: connection)
    }

    /// This app's activities of this attributes type that are not dismissed, oldest first.
    /// Activities whose attributes or state do not decode as this type are left out.
    public static func activities(connection: IslandConnection = .shared()) async throws -> [Activity] {
        let snapshots = try await connection.list(type: Attributes.activityType, states: [.pending, .active, .stale, .ended])
        var result: [Activity] = []
        for snapshot in snapshots {
            guard let attributes = try? JSONCoding.decode(Attributes.self, from: snapshot.attributes),
                  let content = decode(snapshot.content) else { continue }
            let channel = await connection.channel(for: snapshot)
            result.append(Activity(snapshot: snapshot, attributes: attributes, content: content, channel: channel, connection: connection))
        }
        return result
    }

    /// Each activity of this type as it starts, as ActivityKit's `activityUpdates`: those the
    /// app's other processes start, and those its server starts with the push-to-start token
    /// (`pushToStartTokenUpdates`), which the app learns of only this way; also those this
    /// process starts with `request`. Activities already running when it is read are in
    /// `activities(connection:)`. Each comes once; ones whose attributes or state do not
    /// decode as this type are left out.
    public static var activityUpdates: AsyncStream<Activity> { activityUpdates(connection: .shared()) }

    public static func activityUpdates(connection: IslandConnection) -> AsyncStream<Activity> {
        let (stream, continuation) = AsyncStream<Activity>.makeStream()
        // Registered now, before this returns: none that starts afterwards is missed.
        let started = connection.startedActivities(type: Attributes.activityType)
        let task = Task {
            for await snapshot in started {
                guard let attributes = try? JSONCoding.decode(Attributes.self, from: snapshot.attributes),
                      let content = decode(snapshot.content) else { continue }
                let channel = await connection.channel(for: snapshot)
                continuation.yield(Activity(snapshot: snapshot, attributes: attributes, content: content,
                                            channel: channel, connection: connection))
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

    /// Replaces the content. With an alert, presenters expand the activity briefly (within
    /// the app's alert budget). With `timestamp`, an update not newer than the last accepted
    /// one is refused with `staleTimestamp`. The result says whether delivery was throttled.
    @discardableResult
    public func update(_ content: ActivityContent<ContentState>, alertConfiguration: AlertConfiguration? = nil,
                       timestamp: Date? = nil) async throws -> ActivityUpdateResult {
        let raw: RawActivityContent
        do { raw = try Self.rawContent(content) } catch { throw ActivityCodingError(description: "\(error)") }
        let (snapshot, delivery) = try await connection.update(id: id, content: raw, alert: alertConfiguration,
                                                               timestamp: timestamp?.epochSeconds)
        record(snapshot)
        return delivery
    }

    /// Ends the activity, optionally with final content shown until it is dismissed.
    public func end(_ content: ActivityContent<ContentState>? = nil, dismissalPolicy: ActivityUIDismissalPolicy = .default) async throws {
        var raw: RawActivityContent?
        if let content {
            do { raw = try Self.rawContent(content) } catch { throw ActivityCodingError(description: "\(error)") }
        }
        let snapshot = try await connection.end(id: id, content: raw, dismissalPolicy: dismissalPolicy)
        record(snapshot)
    }

    /// Keeps `content` current without emitting: the streams follow what presenters get.
    private func record(_ snapshot: ActivitySnapshot) {
        channel.note(snapshot)
        if let content = Self.decode(snapshot.content) { decoded.withLock { $0 = content } }
    }

    // MARK: Following

    /// The content each time presenters get new content (after coalescing), and the current
    /// content again after a reconnect to a restarted daemon. Finishes when the activity is
    /// dismissed.
    public var contentUpdates: AsyncStream<ActivityContent<ContentState>> {
        let (stream, continuation) = AsyncStream<ActivityContent<ContentState>>.makeStream()
        let token = channel.subscribe(.content, handler: { snapshot in
            if let content = Self.decode(snapshot.deliveredContent) { continuation.yield(content) }
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
    public var activityStateUpdates: AsyncStream<ActivityState> {
        let (stream, continuation) = AsyncStream<ActivityState>.makeStream()
        let token = channel.subscribe(.state, handler: { snapshot in continuation.yield(snapshot.state) },
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
    public var interactions: AsyncStream<ActivityInteraction> {
        let (stream, continuation) = AsyncStream<ActivityInteraction>.makeStream()
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
    public var pushTokenUpdates: AsyncStream<Data> {
        let (stream, continuation) = AsyncStream<Data>.makeStream(bufferingPolicy: .bufferingNewest(1))
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
    public static var pushToStartTokenUpdates: AsyncStream<Data> { pushToStartTokenUpdates(connection: .shared()) }

    public static func pushToStartTokenUpdates(connection: IslandConnection) -> AsyncStream<Data> {
        let (stream, continuation) = AsyncStream<Data>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let task = Task {
            for await token in await connection.pushToStartTokens(type: Attributes.activityType) { continuation.yield(Data(token.utf8)) }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// The app's push-to-start token for this attributes type; with `rotate`, a new one.
    public static func pushToStartToken(rotate: Bool = false, connection: IslandConnection = .shared()) async throws -> Data {
        Data(try await connection.pushToStartToken(type: Attributes.activityType, rotate: rotate).utf8)
    }

    // MARK: Coding

    private static func rawContent(_ content: ActivityContent<ContentState>) throws -> RawActivityContent {
        RawActivityContent(state: try JSONCoding.object(content.state), staleDate: content.staleDate?.epochSeconds,
                           relevanceScore: content.relevanceScore)
    }

    private static func decode(_ raw: RawActivityContent) -> ActivityContent<ContentState>? {
        guard let state = try? JSONCoding.decode(ContentState.self, from: raw.state) else { return nil }
        return ActivityContent(state: state, staleDate: raw.staleDate.map(Date.init(timeIntervalSince1970:)),
                               relevanceScore: raw.relevanceScore)
    }
}

/// Attributes or a content state that do not encode as a JSON object (a bare number, a
/// non-finite double, …).
public struct ActivityCodingError: Error, Sendable, CustomStringConvertible {
    public var description: String
}

/// How an activity is reached by its app's server, as ActivityKit's `PushType`: `.token`
/// gives it a push token.
public struct PushType: Sendable, Hashable {
    public static let token = PushType()
}
