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

    /// The fully qualified Varlink error name, e.g. `org.island.StaleTimestamp`.
    package var name: String { wire.name }

    /// The error's Varlink parameters, keys in camelCase.
    package var parameters: JSONObject { wire.parameters }

    /// The error as Protocol/org.island.varlink declares it, in the names generated from it
    /// (ErrorNames.varlinkmap), so an error or parameter renamed there does not compile here.
    private var wire: (name: String, parameters: JSONObject) {
        switch self {
        case .attributesTooLarge(let limit, let size, let part):
            typealias Error = ErrorNames.AttributesTooLarge
            let partName = part == .attributes ? Error.Part.attributes : Error.Part.state
            return (Error.error, [Error.limit: .int(limit), Error.size: .int(size), Error.part: .string(partName)])
        case .nestingTooDeep(let limit, let depth):
            typealias Error = ErrorNames.NestingTooDeep
            return (Error.error, [Error.limit: .int(limit), Error.depth: .int(depth)])
        case .typeTooLong(let limit, let size):
            typealias Error = ErrorNames.TypeTooLong
            return (Error.error, [Error.limit: .int(limit), Error.size: .int(size)])
        case .keyTooLong(let limit, let size):
            typealias Error = ErrorNames.KeyTooLong
            return (Error.error, [Error.limit: .int(limit), Error.size: .int(size)])
        case .alertTooLarge(let limit, let size):
            typealias Error = ErrorNames.AlertTooLarge
            return (Error.error, [Error.limit: .int(limit), Error.size: .int(size)])
        case .denied(let app):
            typealias Error = ErrorNames.Denied
            return (Error.error, [Error.app: .string(app)])
        case .unentitled(let app, let reason):
            typealias Error = ErrorNames.Unentitled
            return (Error.error, [Error.app: .string(app), Error.reason: .string(reason)])
        case .globalMaximumExceeded(let limit):
            typealias Error = ErrorNames.GlobalMaximumExceeded
            return (Error.error, [Error.limit: .int(limit)])
        case .targetMaximumExceeded(let app, let limit):
            typealias Error = ErrorNames.TargetMaximumExceeded
            return (Error.error, [Error.app: .string(app), Error.limit: .int(limit)])
        case .noSuchActivity(let id):
            typealias Error = ErrorNames.NoSuchActivity
            return (Error.error, [Error.id: .string(id)])
        case .activityEnded(let id, let state):
            typealias Error = ErrorNames.ActivityEnded
            return (Error.error, [Error.id: .string(id), Error.state: .string(state.rawValue)])
        case .staleTimestamp(let id, let last, let given):
            typealias Error = ErrorNames.StaleTimestamp
            return (Error.error, [Error.id: .string(id), Error.last: .double(last), Error.given: .double(given)])
        case .implausibleTimestamp(let id, let given, let latest):
            typealias Error = ErrorNames.ImplausibleTimestamp
            return (Error.error, [Error.id: .string(id), Error.given: .double(given), Error.latest: .double(latest)])
        case .implausibleStaleDate(let given, let latest):
            typealias Error = ErrorNames.ImplausibleStaleDate
            return (Error.error, [Error.given: .double(given), Error.latest: .double(latest)])
        case .startBudgetExceeded(let app, let limit, let window, let retryAfter):
            typealias Error = ErrorNames.StartBudgetExceeded
            return (
                Error.error,
                [Error.app: .string(app), Error.limit: .int(limit), Error.window: .double(window), Error.retryAfter: .double(retryAfter)]
            )
        case .tooManyPushTokens(let app, let limit):
            typealias Error = ErrorNames.TooManyPushTokens
            return (Error.error, [Error.app: .string(app), Error.limit: .int(limit)])
        case .startAlertRequired(let start):
            typealias Error = ErrorNames.StartAlertRequired
            return (Error.error, [Error.start: .double(start)])
        case .implausibleStartDate(let given, let latest):
            typealias Error = ErrorNames.ImplausibleStartDate
            return (Error.error, [Error.given: .double(given), Error.latest: .double(latest)])
        case .pushBudgetExceeded(let app, let limit, let window, let retryAfter):
            typealias Error = ErrorNames.PushBudgetExceeded
            return (
                Error.error,
                [Error.app: .string(app), Error.limit: .int(limit), Error.window: .double(window), Error.retryAfter: .double(retryAfter)]
            )
        case .invalidChannel(let channel, let reason):
            typealias Error = ErrorNames.InvalidChannel
            return (Error.error, [Error.channel: .string(channel), Error.reason: .string(reason)])
        case .broadcastStart(let channel):
            typealias Error = ErrorNames.BroadcastStart
            return (Error.error, [Error.channel: .string(channel)])
        case .channelMessageExpired(let channel, let expiration):
            typealias Error = ErrorNames.ChannelMessageExpired
            return (Error.error, [Error.channel: .string(channel), Error.expiration: .double(expiration)])
        }
    }
}

/// Which half of an activity's payload a refusal blames (`AttributesTooLarge`'s `part`): on a
/// request the larger of the two; on an update or an end the state, the attributes being fixed.
package enum PayloadPart: Sendable, Hashable {
    case attributes, state
}

extension IslandError: CustomStringConvertible {
    package var description: String { "\(name) \(JSON.object(parameters))" }
}
