package import OrderedJSON
import OrderedCollections

/// Every refusal of an activity operation. Each becomes a named Varlink error whose parameters
/// say which limit was hit and with what value, so a producer never has to guess.
package enum IslandError: Error, Sendable, Hashable {
    /// Attributes + content state are `size` bytes of compact JSON, over `limit`; `part` is
    /// the one to make smaller.
    case attributesTooLarge(limit: Int, size: Int, part: PayloadPart)
    /// Attributes or state nest containers `depth` deep, over `limit`.
    case nestingTooDeep(limit: Int, depth: Int)
    /// The `type` name is `size` UTF-8 bytes, over `limit`.
    case typeTooLong(limit: Int, size: Int)
    /// The request's `key` is `size` UTF-8 bytes, over `limit`.
    case keyTooLong(limit: Int, size: Int)
    /// An update's alert, title and body together, is `size` UTF-8 bytes, over `limit`.
    case alertTooLarge(limit: Int, size: Int)
    /// The user turned Live Activities off, for this app or for all.
    case denied(app: String)
    /// The app's manifest does not declare `X-Island-LiveActivities=true`; `reason` says
    /// which file, or that there is none.
    case unentitled(app: String, reason: String = AppAuthorization.undeclared)
    /// `limit` activities are live across all apps.
    case globalMaximumExceeded(limit: Int)
    /// The app already has `limit` live activities.
    case targetMaximumExceeded(app: String, limit: Int)
    /// No such activity — also for an activity of another app, whose existence is never revealed.
    case noSuchActivity(id: String)
    /// The activity is `ended` (or `dismissed`) and takes no more changes.
    case activityEnded(id: String, state: ActivityState)
    /// The update's timestamp `given` is not newer than the last accepted one, `last`.
    case staleTimestamp(id: String, last: Double, given: Double)
    /// The timestamp `given` is after `latest`, the daemon's clock plus the skew allowed
    /// (`ActivityLimits.maximumTimestampSkew`): milliseconds where seconds are meant, or a clock
    /// far off. Accepted, it would order out every later update.
    case implausibleTimestamp(id: String, given: Double, latest: Double)
    /// The content's `staleDate` `given` is after `latest` (`ActivityLimits.latestDate`), which no
    /// date in seconds reaches: milliseconds where seconds are meant. Accepted, the activity
    /// would never go stale.
    case implausibleStaleDate(given: Double, latest: Double)
    /// The app started `limit` activities within the last `window` seconds; it may start one
    /// again in `retryAfter` seconds.
    case startBudgetExceeded(app: String, limit: Int, window: Double, retryAfter: Double)
    /// The owner holds `limit` push-to-start tokens already (one per activity type).
    case tooManyPushTokens(app: String, limit: Int)
    /// A request to start at `start` has no alert: a scheduled activity appears when nobody
    /// is looking, so its start must say so (as ActivityKit's `alertConfiguration` must).
    case startAlertRequired(start: Double)
    /// A scheduled `start` `given` is after `latest` (`ActivityLimits.latestDate`), which no
    /// date in seconds reaches: milliseconds where seconds are meant. Accepted, the activity
    /// would hold one of its app's places, pending for ever.
    case implausibleStartDate(given: Double, latest: Double)
    /// The app's server sent `limit` pushes at priority 10 within the last `window` seconds;
    /// another may come in `retryAfter` seconds (priority 5 spends nothing).
    case pushBudgetExceeded(app: String, limit: Int, window: Double, retryAfter: Double)
    /// `channel` is no broadcast channel id (`reason` says why): a start that names it fails.
    case invalidChannel(channel: String, reason: String)
    /// A message on a broadcast channel asked to start an activity: a broadcast never does.
    case broadcastStart(channel: String)
    /// A message on a broadcast channel arrived after its expiration (epoch seconds).
    case channelMessageExpired(channel: String, expiration: Double)

    /// The interface the error names live in.
    package static let interface = "org.island"

    /// The fully qualified Varlink error name, e.g. `org.island.StaleTimestamp`.
    package var name: String { "\(Self.interface).\(shortName)" }

    private var shortName: String {
        switch self {
        case .attributesTooLarge: "AttributesTooLarge"
        case .nestingTooDeep: "NestingTooDeep"
        case .typeTooLong: "TypeTooLong"
        case .keyTooLong: "KeyTooLong"
        case .alertTooLarge: "AlertTooLarge"
        case .denied: "Denied"
        case .unentitled: "Unentitled"
        case .globalMaximumExceeded: "GlobalMaximumExceeded"
        case .targetMaximumExceeded: "TargetMaximumExceeded"
        case .noSuchActivity: "NoSuchActivity"
        case .activityEnded: "ActivityEnded"
        case .staleTimestamp: "StaleTimestamp"
        case .implausibleTimestamp: "ImplausibleTimestamp"
        case .implausibleStaleDate: "ImplausibleStaleDate"
        case .startBudgetExceeded: "StartBudgetExceeded"
        case .tooManyPushTokens: "TooManyPushTokens"
        case .startAlertRequired: "StartAlertRequired"
        case .implausibleStartDate: "ImplausibleStartDate"
        case .pushBudgetExceeded: "PushBudgetExceeded"
        case .invalidChannel: "InvalidChannel"
        case .broadcastStart: "BroadcastStart"
        case .channelMessageExpired: "ChannelMessageExpired"
        }
    }

    /// The error's Varlink parameters, keys in camelCase.
    package var parameters: JSONObject {
        switch self {
        case .attributesTooLarge(let limit, let size, let part):
            ["limit": .int(limit), "size": .int(size), "part": .string(part.rawValue)]
        case .typeTooLong(let limit, let size), .keyTooLong(let limit, let size), .alertTooLarge(let limit, let size):
            ["limit": .int(limit), "size": .int(size)]
        case .nestingTooDeep(let limit, let depth):
            ["limit": .int(limit), "depth": .int(depth)]
        case .denied(let app):
            ["app": .string(app)]
        case .unentitled(let app, let reason):
            ["app": .string(app), "reason": .string(reason)]
        case .globalMaximumExceeded(let limit):
            ["limit": .int(limit)]
        case .targetMaximumExceeded(let app, let limit), .tooManyPushTokens(let app, let limit):
            ["app": .string(app), "limit": .int(limit)]
        case .noSuchActivity(let id):
            ["id": .string(id)]
        case .activityEnded(let id, let state):
            ["id": .string(id), "state": .string(state.rawValue)]
        case .staleTimestamp(let id, let last, let given):
            ["id": .string(id), "last": .double(last), "given": .double(given)]
        case .implausibleTimestamp(let id, let given, let latest):
            ["id": .string(id), "given": .double(given), "latest": .double(latest)]
        case .implausibleStaleDate(let given, let latest), .implausibleStartDate(let given, let latest):
            ["given": .double(given), "latest": .double(latest)]
        case .startBudgetExceeded(let app, let limit, let window, let retryAfter),
            .pushBudgetExceeded(let app, let limit, let window, let retryAfter):
            ["app": .string(app), "limit": .int(limit), "window": .double(window), "retryAfter": .double(retryAfter)]
        case .startAlertRequired(let start):
            ["start": .double(start)]
        case .invalidChannel(let channel, let reason):
            ["channel": .string(channel), "reason": .string(reason)]
        case .broadcastStart(let channel):
            ["channel": .string(channel)]
        case .channelMessageExpired(let channel, let expiration):
            ["channel": .string(channel), "expiration": .double(expiration)]
        }
    }
}

/// Which half of an activity's payload a refusal blames (`AttributesTooLarge`'s `part`): on a
/// request the larger of the two; on an update or an end the state, the attributes being fixed.
package enum PayloadPart: String, Sendable, Hashable {
    case attributes, state
}

extension IslandError: CustomStringConvertible {
    package var description: String { "\(name) \(JSON.object(parameters))" }
}
