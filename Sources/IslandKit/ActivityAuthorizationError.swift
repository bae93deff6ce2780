import Foundation
public import OrderedJSON
public import OrderedCollections
public import VarlinkCore
import IslandPaths
import IslandProtocol

/// The names of org.island's errors and their parameters.
private typealias Errors = IslandErrorNames

/// Why the daemon refused a call, mirroring ActivityKit's `ActivityAuthorizationError` with
/// the names of Island's own errors (Protocol/org.island.varlink). Every case keeps the
/// parameters the daemon sent, so the caller can say what limit was hit and by how much.
public enum ActivityAuthorizationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Attributes plus content state, as compact JSON, exceed `limit` bytes; `part`
    /// ("attributes" or "state") is the one to make smaller (nil from an older daemon).
    case attributesTooLarge(limit: Int, size: Int, part: String?)
    /// The user turned Live Activities off for this app, or for all apps.
    case denied(app: String)
    /// The app has no desktop entry declaring `X-Island-LiveActivities=true`, or its
    /// identity could not be established.
    case unentitled(app: String, reason: String)
    /// All apps together already have the maximum number of live activities.
    case globalMaximumExceeded(limit: Int)
    /// This app already has its maximum number of live activities.
    case targetMaximumExceeded(app: String, limit: Int)
    /// The update's timestamp is not newer than the last accepted one.
    case staleTimestamp(id: String, last: Double, given: Double)
    /// The app started its allowed number of activities within `window` seconds; the next
    /// start is allowed `retryAfter` seconds from now.
    case startBudgetExceeded(app: String, limit: Int, window: Double, retryAfter: Double)
    /// No activity with this id exists for this app.
    case noSuchActivity(id: String)
    /// The activity has ended (or been dismissed) and takes no more updates.
    case activityEnded(id: String, state: String)
    /// A layout failed validation at `path`.
    case invalidLayout(type: String, path: String, reason: String)
    /// The connection is bound to another role, or the caller may not use this role.
    case permissionDenied(role: String, reason: String)
    /// The daemon could not store the change, so it was not applied.
    case persistenceFailure(reason: String)
    /// The daemon could not be reached (not running, or the socket is wrong).
    case daemonUnavailable(socketPath: String, reason: String)
    /// Any other refusal, with the daemon's error name and parameters.
    case other(name: String, parameters: JSONObject)

    // ActivityKit's cases that no refusal of Island's corresponds to. Never thrown; there so
    // that code written against ActivityKit's `ActivityAuthorizationError` compiles as it is.

    /// ActivityKit: the app was not in the foreground. Island lets any process of the app
    /// start activities.
    case visibility
    /// ActivityKit: the device does not support Live Activities.
    case unsupported
    /// ActivityKit: the calling target may not start Live Activities; Island's refusal is
    /// `unentitled`.
    case unsupportedTarget
    /// ActivityKit: the calling process could not be identified; Island's refusal is
    /// `unentitled`, with the reason.
    case missingProcessIdentifier
    /// ActivityKit: an activity identifier was malformed; Island's refusal is `noSuchActivity`.
    case malformedActivityIdentifier
    /// ActivityKit: the process may not reconnect to its activities.
    case reconnectNotPermitted

    /// Maps a Varlink error reply to the matching case.
    public init(_ error: VarlinkError) {
        let p = error.parameters
        func s(_ key: String) -> String { p[key]?.stringValue ?? "" }
        func i(_ key: String) -> Int { p[key]?.intValue ?? Int(p[key]?.doubleValue ?? 0) }
        func d(_ key: String) -> Double { p[key]?.doubleValue ?? 0 }
        switch error.name {
        case Errors.AttributesTooLarge.error:
            self = .attributesTooLarge(
                limit: i(Errors.AttributesTooLarge.limit), size: i(Errors.AttributesTooLarge.size), part: p[Errors.AttributesTooLarge.part]?.stringValue)
        case Errors.Denied.error: self = .denied(app: s(Errors.Denied.app))
        case Errors.Unentitled.error: self = .unentitled(app: s(Errors.Unentitled.app), reason: s(Errors.Unentitled.reason))
        case Errors.GlobalMaximumExceeded.error: self = .globalMaximumExceeded(limit: i(Errors.GlobalMaximumExceeded.limit))
        case Errors.TargetMaximumExceeded.error:
            self = .targetMaximumExceeded(app: s(Errors.TargetMaximumExceeded.app), limit: i(Errors.TargetMaximumExceeded.limit))
        case Errors.StaleTimestamp.error:
            self = .staleTimestamp(id: s(Errors.StaleTimestamp.id), last: d(Errors.StaleTimestamp.last), given: d(Errors.StaleTimestamp.given))
        case Errors.StartBudgetExceeded.error:
            self = .startBudgetExceeded(
                app: s(Errors.StartBudgetExceeded.app), limit: i(Errors.StartBudgetExceeded.limit), window: d(Errors.StartBudgetExceeded.window),
                retryAfter: d(Errors.StartBudgetExceeded.retryAfter))
        case Errors.NoSuchActivity.error: self = .noSuchActivity(id: s(Errors.NoSuchActivity.id))
        case Errors.ActivityEnded.error: self = .activityEnded(id: s(Errors.ActivityEnded.id), state: s(Errors.ActivityEnded.state))
        case Errors.InvalidLayout.error:
            self = .invalidLayout(type: s(Errors.InvalidLayout.type), path: s(Errors.InvalidLayout.path), reason: s(Errors.InvalidLayout.reason))
        case Errors.PermissionDenied.error, "org.varlink.service.PermissionDenied":
            self = .permissionDenied(role: s(Errors.PermissionDenied.role), reason: s(Errors.PermissionDenied.reason))
        case Errors.PersistenceFailure.error: self = .persistenceFailure(reason: s(Errors.PersistenceFailure.reason))
        default: self = .other(name: error.name, parameters: p)
        }
    }

    /// The daemon's error name (`org.island.AttributesTooLarge`, …).
    public var name: String {
        switch self {
        case .attributesTooLarge: Errors.AttributesTooLarge.error
        case .denied: Errors.Denied.error
        case .unentitled: Errors.Unentitled.error
        case .globalMaximumExceeded: Errors.GlobalMaximumExceeded.error
        case .targetMaximumExceeded: Errors.TargetMaximumExceeded.error
        case .staleTimestamp: Errors.StaleTimestamp.error
        case .startBudgetExceeded: Errors.StartBudgetExceeded.error
        case .noSuchActivity: Errors.NoSuchActivity.error
        case .activityEnded: Errors.ActivityEnded.error
        case .invalidLayout: Errors.InvalidLayout.error
        case .permissionDenied: Errors.PermissionDenied.error
        case .persistenceFailure: Errors.PersistenceFailure.error
        case .daemonUnavailable: "DaemonUnavailable"
        case .other(let name, _): name
        case .visibility: "Visibility"
        case .unsupported: "Unsupported"
        case .unsupportedTarget: "UnsupportedTarget"
        case .missingProcessIdentifier: "MissingProcessIdentifier"
        case .malformedActivityIdentifier: "MalformedActivityIdentifier"
        case .reconnectNotPermitted: "ReconnectNotPermitted"
        }
    }

    /// The parameters, as the daemon sent them.
    public var parameters: JSONObject {
        switch self {
        case .attributesTooLarge(let limit, let size, let part):
            typealias Error = Errors.AttributesTooLarge
            var parameters: JSONObject = [Error.limit: .int(limit), Error.size: .int(size)]
            if let part { parameters[Error.part] = .string(part) }
            return parameters
        case .denied(let app): return [Errors.Denied.app: .string(app)]
        case .unentitled(let app, let reason): return [Errors.Unentitled.app: .string(app), Errors.Unentitled.reason: .string(reason)]
        case .globalMaximumExceeded(let limit): return [Errors.GlobalMaximumExceeded.limit: .int(limit)]
        case .targetMaximumExceeded(let app, let limit):
            return [Errors.TargetMaximumExceeded.app: .string(app), Errors.TargetMaximumExceeded.limit: .int(limit)]
        case .staleTimestamp(let id, let last, let given):
            typealias Error = Errors.StaleTimestamp
            return [Error.id: .string(id), Error.last: .double(last), Error.given: .double(given)]
        case .startBudgetExceeded(let app, let limit, let window, let retryAfter):
            typealias Error = Errors.StartBudgetExceeded
            return [Error.app: .string(app), Error.limit: .int(limit), Error.window: .double(window), Error.retryAfter: .double(retryAfter)]
        case .noSuchActivity(let id): return [Errors.NoSuchActivity.id: .string(id)]
        case .activityEnded(let id, let state): return [Errors.ActivityEnded.id: .string(id), Errors.ActivityEnded.state: .string(state)]
        case .invalidLayout(let type, let path, let reason):
            typealias Error = Errors.InvalidLayout
            return [Error.type: .string(type), Error.path: .string(path), Error.reason: .string(reason)]
        case .permissionDenied(let role, let reason): return [Errors.PermissionDenied.role: .string(role), Errors.PermissionDenied.reason: .string(reason)]
        case .persistenceFailure(let reason): return [Errors.PersistenceFailure.reason: .string(reason)]
        // Not the daemon's: the client's own, when it could not reach one.
        case .daemonUnavailable(let socketPath, let reason): return ["socket": .string(socketPath), "reason": .string(reason)]
        case .other(_, let parameters): return parameters
        case .visibility, .unsupported, .unsupportedTarget, .missingProcessIdentifier, .malformedActivityIdentifier,
            .reconnectNotPermitted:
            return [:]
        }
    }

    /// What happened, in a sentence.
    public var description: String {
        switch self {
        case .attributesTooLarge(let limit, let size, let part):
            "attributes and state are \(size) bytes as compact JSON, over the limit of \(limit)"
                + (part.map { "; make the \($0) smaller" } ?? "")
        case .denied(let app): "Live Activities are turned off for \(app)"
        case .unentitled(let app, let reason): "\(app.isEmpty ? "this app" : app) may not show Live Activities: \(reason)"
        case .globalMaximumExceeded(let limit): "all apps together already have the maximum of \(limit) live activities"
        case .targetMaximumExceeded(let app, let limit): "\(app) already has its maximum of \(limit) live activities"
        case .staleTimestamp(let id, let last, let given):
            "the update's timestamp \(given) is not newer than the last accepted one (\(last)) for \(id)"
        case .startBudgetExceeded(let app, let limit, let window, let retryAfter):
            "\(app) started \(limit) activities within \(Self.seconds(window)); the next start is allowed in \(Self.seconds(retryAfter))"
        case .noSuchActivity(let id): "no activity \(id) of this app"
        case .activityEnded(let id, let state): "activity \(id) is \(state) and takes no more updates"
        case .invalidLayout(_, let path, let reason): "\(path): \(reason)"
        case .permissionDenied(let role, let reason):
            reason.isEmpty ? "permission denied" : "permission denied for the \(role) role: \(reason)"
        case .persistenceFailure(let reason): "the daemon could not store the change: \(reason)"
        case .daemonUnavailable(let path, let reason): "the Island daemon is not reachable at \(path): \(reason)"
        case .other(let name, let parameters): parameters.isEmpty ? name : "\(name) \(JSON.object(parameters))"
        case .visibility: "the app is not visible"
        case .unsupported: "Live Activities are not supported here"
        case .unsupportedTarget: "this target may not start Live Activities"
        case .missingProcessIdentifier: "the calling process could not be identified"
        case .malformedActivityIdentifier: "the activity identifier is malformed"
        case .reconnectNotPermitted: "the process may not reconnect to its activities"
        }
    }

    /// What the user can do about it.
    public var recoverySuggestion: String {
        switch self {
        case .attributesTooLarge: "send less: keep attributes and state small, and put large data behind a URL"
        case .denied(let app): "turn them on with `island admin enable \(app)` (or in the system settings)"
        case .unentitled(let app, let reason) where reason.contains("does not declare"):
            // The entry is there (the reason names it): it lacks the key, not a place.
            "add X-Island-LiveActivities=true to the [Desktop Entry] group of \(app.isEmpty ? "the app's" : app + "'s") desktop entry"
        case .unentitled(let app, _):
            "install a desktop entry \(app.isEmpty ? "<app>" : app).desktop in an XDG applications directory with X-Island-LiveActivities=true"
        case .globalMaximumExceeded, .targetMaximumExceeded: "end an activity first (`island list`, then `island end ID`)"
        case .staleTimestamp: "send a newer timestamp, or none"
        case .startBudgetExceeded(_, _, _, let retryAfter): "wait \(Self.seconds(retryAfter)) and try again"
        case .noSuchActivity: "check the id with `island list`"
        case .activityEnded: "start a new activity"
        case .invalidLayout: "fix the layout at the given path (try `island preview`)"
        case .permissionDenied: "use a separate connection per role; admin calls need the daemon's own user or root"
        case .persistenceFailure: "check the daemon's state directory (disk space, permissions) and its log"
        case .daemonUnavailable: DaemonStartHint.current() + ", or give the right socket (IslandKitConfiguration.socketPath, $ISLAND_SOCKET)"
        case .other: "see the daemon's log"
        case .visibility, .unsupported, .unsupportedTarget, .missingProcessIdentifier, .malformedActivityIdentifier,
            .reconnectNotPermitted:
            "none: IslandKit never throws this case, which mirrors ActivityKit's"
        }
    }

    private static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : String(format: "%.1f s", value)
    }
}
