import Foundation
import OrderedCollections
import OrderedJSON
import IslandProtocol

/// What the CLI says of every error the daemon can send: the refusals of `org.island`, the
/// errors that end a connection (`org.island.Connection`) and the standard ones of
/// `org.varlink.service` — each a sentence made of its parameters, and what to do about it,
/// as PROTOCOL.md's Errors table says it. The daemon logs no refusal (a refusal changes
/// nothing), so no hint may send the user to its log for one. The CLI's own, by name and
/// parameters, so every name is covered whatever IslandKit's error type knows
/// (RefusalSentencesTests checks every error declared in Protocol/*.varlink). Every hint that
/// names an island command repeats the command's `--app`.
struct RefusalSentence: Equatable {
    var message: String
    var hint: String?
}

enum RefusalSentences {
    /// The app every producer command acts for unless given `--app`.
    static let defaultApp = "org.island.cli"

    /// The sentence for the error `name` with `parameters`, from a command acting for `app`;
    /// nil for a name this CLI does not know (a newer daemon's).
    static func sentence(name: String, parameters p: JSONObject, app: String) -> RefusalSentence? {
        func s(_ key: String) -> String { p[key]?.stringValue ?? "" }
        func i(_ key: String) -> Int { p[key]?.intValue ?? Int(p[key]?.doubleValue ?? 0) }
        func d(_ key: String) -> Double { p[key]?.doubleValue ?? Double(p[key]?.intValue ?? 0) }
        /// An island command as the user must type it again: with the `--app` this one used.
        func island(_ command: String) -> String {
            app == defaultApp ? "`island \(command)`" : "`island \(command) --app \(app)`"
        }
        let id = s("id").isEmpty ? "ID" : s("id")
        switch name {
        // org.island: the refusals.
        case IslandErrorNames.AttributesTooLarge.error:
            typealias Parameters = IslandErrorNames.AttributesTooLarge
            let part = s(Parameters.part)
            return .init(
                message: "attributes and state are \(i(Parameters.size)) bytes as compact JSON, over the limit of \(i(Parameters.limit))"
                    + (part.isEmpty ? "" : "; the \(part) is the part to make smaller"),
                hint: "send less: keep attributes and state small, and put large data behind a URL")
        case IslandErrorNames.NestingTooDeep.error:
            typealias Parameters = IslandErrorNames.NestingTooDeep
            return .init(
                message: "the attributes or state nest objects and arrays \(i(Parameters.depth)) deep, over the limit of \(i(Parameters.limit))",
                hint: "flatten the data")
        case IslandErrorNames.TypeTooLong.error:
            typealias Parameters = IslandErrorNames.TypeTooLong
            return .init(message: "the activity type is \(i(Parameters.size)) bytes, over the limit of \(i(Parameters.limit))", hint: "use a short type name")
        case IslandErrorNames.KeyTooLong.error:
            typealias Parameters = IslandErrorNames.KeyTooLong
            return .init(
                message: "the key is \(i(Parameters.size)) bytes, over the limit of \(i(Parameters.limit))",
                hint: "derive a shorter key, e.g. a hash of the long one")
        case IslandErrorNames.AlertTooLarge.error:
            typealias Parameters = IslandErrorNames.AlertTooLarge
            return .init(
                message: "the alert's title and body are \(i(Parameters.size)) bytes together, over the limit of \(i(Parameters.limit))",
                hint: "shorten the alert: it is a notification, the activity carries the rest")
        case IslandErrorNames.Denied.error:
            typealias Parameters = IslandErrorNames.Denied
            return .init(
                message: "Live Activities are turned off for \(s(Parameters.app))",
                hint: "turn them on with `island admin enable \(s(Parameters.app))` (or in the system settings)")
        case IslandErrorNames.Unentitled.error:
            typealias Parameters = IslandErrorNames.Unentitled
            let app = s(Parameters.app).isEmpty ? "this app" : s(Parameters.app)
            let reason = s(Parameters.reason)
            // The entry is there when the reason names the key it lacks: X-Island-LiveActivities
            // to show activities at all, X-Island-FrequentUpdates for `admin frequent-updates`,
            // X-Island-SourceApps to speak for other apps. The sentence and the hint name that key.
            let key =
                reason.contains("does not declare")
                ? reason.range(of: #"X-Island-[A-Za-z]+"#, options: .regularExpression).map { String(reason[$0]) } : nil
            let what =
                switch key {
                case "X-Island-FrequentUpdates": "use frequent updates"
                case "X-Island-SourceApps": "speak for other apps"
                default: "show Live Activities"
                }
            let hint =
                key.map { "add \($0)=true to the [Desktop Entry] group of \(app)'s desktop entry" }
                ?? "install a desktop entry \(s(Parameters.app).isEmpty ? "<app>" : s(Parameters.app)).desktop in an XDG applications directory with X-Island-LiveActivities=true"
            return .init(message: "\(app) may not \(what): \(reason)", hint: hint)
        case IslandErrorNames.GlobalMaximumExceeded.error:
            typealias Parameters = IslandErrorNames.GlobalMaximumExceeded
            return .init(
                message: "all apps together already have the maximum of \(i(Parameters.limit)) live activities",
                hint: "end an activity of your own (\(island("list")), then \(island("end ID")))")
        case IslandErrorNames.TargetMaximumExceeded.error:
            typealias Parameters = IslandErrorNames.TargetMaximumExceeded
            return .init(
                message: "\(s(Parameters.app)) already has its maximum of \(i(Parameters.limit)) live activities",
                hint: "end or reuse one of them (\(island("list")), then \(island("end ID")))")
        case IslandErrorNames.NoSuchActivity.error:
            // An activity answers only the app that started it, and the CLI acts for
            // org.island.cli unless told otherwise: name the app, so that a missing --app shows.
            let hint =
                app == defaultApp
                ? "an activity answers only the app that started it: if its `island start` had --app, give this command the same --app; \(island("list")) lists \(app)'s"
                : "check the id with \(island("list"))"
            return .init(message: "no activity \(id) of \(app) (unknown, dismissed, or another app's)", hint: hint)
        case IslandErrorNames.ActivityEnded.error:
            typealias Parameters = IslandErrorNames.ActivityEnded
            return .init(
                message: "activity \(id) is \(s(Parameters.state).isEmpty ? "ended" : s(Parameters.state)) and takes no more changes",
                hint: "start a new activity (\(island("start TYPE")))")
        case IslandErrorNames.NoSuchButton.error:
            typealias Parameters = IslandErrorNames.NoSuchButton
            return .init(
                message: "activity \(id)'s layout has no button with the action \(s(Parameters.button))",
                hint: "press only the buttons its layout draws")
        case IslandErrorNames.StaleTimestamp.error:
            typealias Parameters = IslandErrorNames.StaleTimestamp
            return .init(
                message: "the timestamp \(number(d(Parameters.given))) is not newer than the last accepted one (\(number(d(Parameters.last)))) for \(id)",
                hint: "drop the update (newer content is already there), or send no timestamp")
        case IslandErrorNames.ImplausibleTimestamp.error:
            typealias Parameters = IslandErrorNames.ImplausibleTimestamp
            return .init(
                message: "the timestamp \(number(d(Parameters.given))) is after \(number(d(Parameters.latest))), the daemon's clock plus 600 s"
                    + (looksLikeMilliseconds(d(Parameters.given)) ? ": it looks like milliseconds" : ""),
                hint: "send seconds since the epoch (date +%s.%N), not milliseconds; or set the clock right")
        case IslandErrorNames.ImplausibleStaleDate.error:
            typealias Parameters = IslandErrorNames.ImplausibleStaleDate
            return .init(
                message: "the staleDate \(number(d(Parameters.given))) is after \(number(d(Parameters.latest))), which no date in seconds reaches"
                    + (looksLikeMilliseconds(d(Parameters.given)) ? ": it looks like milliseconds" : ""),
                hint: "send seconds since the epoch, not milliseconds (--stale-after takes seconds from now)")
        case IslandErrorNames.StartBudgetExceeded.error:
            typealias Parameters = IslandErrorNames.StartBudgetExceeded
            return .init(
                message:
                    "\(s(Parameters.app)) started \(i(Parameters.limit)) activities within \(seconds(d(Parameters.window))); the next start is allowed in \(seconds(d(Parameters.retryAfter)))",
                hint: "wait \(seconds(d(Parameters.retryAfter))) and try again, or update an activity already started")
        case IslandErrorNames.PushBudgetExceeded.error:
            typealias Parameters = IslandErrorNames.PushBudgetExceeded
            return .init(
                message:
                    "\(s(Parameters.app))'s server sent \(i(Parameters.limit)) pushes at priority 10 within \(seconds(d(Parameters.window))); the next is allowed in \(seconds(d(Parameters.retryAfter)))",
                hint: "send updates that can wait at priority 5 (--priority 5), which spend nothing of the budget")
        case IslandErrorNames.PushExpired.error:
            typealias Parameters = IslandErrorNames.PushExpired
            return .init(
                message: "the push arrived after its expiration, so it was not applied",
                hint: "give it a later --expiration, or none")
        case IslandErrorNames.ImplausibleStartDate.error:
            typealias Parameters = IslandErrorNames.ImplausibleStartDate
            return .init(
                message: "the start date \(d(Parameters.given)) is after \(d(Parameters.latest)): milliseconds where seconds are meant",
                hint: "give --at as +DURATION or an ISO 8601 date (a server: seconds since the epoch)")
        case IslandErrorNames.StartAlertRequired.error:
            typealias Parameters = IslandErrorNames.StartAlertRequired
            return .init(
                message: "a start at a later date needs an alert: a scheduled activity appears when nobody is looking",
                hint: "give --alert-title (and --alert-body if you like), or start it now, without --at")
        case IslandErrorNames.InvalidLayout.error:
            typealias Parameters = IslandErrorNames.InvalidLayout
            return .init(
                message: "the layout of \(s(Parameters.type)) is invalid at \(s(Parameters.path)): \(s(Parameters.reason))",
                hint: "fix the layout at that path (try `island preview --lint`)")
        case IslandErrorNames.TooManyLayouts.error:
            typealias Parameters = IslandErrorNames.TooManyLayouts
            return .init(
                message: "\(s(Parameters.app)) already has its maximum of \(i(Parameters.limit)) layouts registered",
                hint: "remove a layout it no longer uses (\(island("extension remove TYPE"))); replacing one of the same type is always allowed")
        case IslandErrorNames.PermissionDenied.error, "org.varlink.service.PermissionDenied":
            let reason = s("reason")
            return .init(
                message: reason.isEmpty ? "permission denied" : "permission denied for the \(s("role")) role: \(reason)",
                hint: "admin commands need the daemon's own user or root; a sandboxed app may not be a presenter or an admin")
        case IslandErrorNames.PersistenceFailure.error:
            typealias Parameters = IslandErrorNames.PersistenceFailure
            return .init(
                message: "the daemon could not store the change, so it was not applied: \(s(Parameters.reason))",
                hint: "retry later; the daemon's log says why (disk full, read-only state directory)")
        case IslandErrorNames.PushUnavailable.error:
            typealias Parameters = IslandErrorNames.PushUnavailable
            return .init(
                message: "push is not available: \(s(Parameters.reason))",
                hint: "configure a broker in islandd.conf ([Push] Broker=), then `island admin reload`; or do without push")
        case IslandErrorNames.TooManyPushTokens.error:
            typealias Parameters = IslandErrorNames.TooManyPushTokens
            return .init(message: "\(s(Parameters.app)) already has push-to-start tokens for \(i(Parameters.limit)) types", hint: "reuse the types it has")
        case IslandErrorNames.InvalidChannel.error:
            typealias Parameters = IslandErrorNames.InvalidChannel
            return .init(
                message: "\(s(Parameters.channel)) is not a broadcast channel: \(s(Parameters.reason))",
                hint: "use an id \(island("channel create --storage latest")) printed")
        case IslandErrorNames.BroadcastStart.error:
            typealias Parameters = IslandErrorNames.BroadcastStart
            return .init(
                message: "a broadcast channel (\(s(Parameters.channel))) never starts an activity",
                hint: "start with a push-to-start token (island push TOKEN --event start --input-push-channel ID)")
        case IslandErrorNames.ChannelMessageExpired.error:
            typealias Parameters = IslandErrorNames.ChannelMessageExpired
            return .init(
                message: "the message on channel \(s(Parameters.channel)) arrived after its expiration (\(d(Parameters.expiration)))",
                hint: "give it a later --expiration, or publish again")
        case IslandErrorNames.PushPayloadTooLarge.error:
            typealias Parameters = IslandErrorNames.PushPayloadTooLarge
            return .init(
                message: "the push's payload is \(i(Parameters.size)) bytes, over the limit of \(i(Parameters.limit)); it was not read", hint: "send less")
        case IslandErrorNames.InvalidPushPayload.error:
            typealias Parameters = IslandErrorNames.InvalidPushPayload
            return .init(message: "the push is not an APNs-shaped Live Activity payload: \(s(Parameters.reason))", hint: "fix the payload")
        case IslandErrorNames.NoSuchPushToken.error:
            return .init(
                message: "the token is not (or no longer) the device's: revoked with its activity, rotated, or never issued",
                hint: "stop using it; get the activity's current token (\(island("push-token ID")))")
        case IslandErrorNames.InvalidConfiguration.error:
            typealias Parameters = IslandErrorNames.InvalidConfiguration
            let line = i(Parameters.line)
            return .init(
                message: "\(s(Parameters.path))\(line > 0 ? ":\(line)" : ""): \(s(Parameters.message)); the running configuration is kept",
                hint: "fix the file and reload again (`island admin reload`)")
        // org.island.Connection: sent just before the daemon closes the connection.
        case ConnectionNames.MessageTooLarge.error:
            return .init(
                message: "a message was over the daemon's limit of \(i(ConnectionNames.MessageTooLarge.limit)) bytes, so it closed the connection",
                hint: "send less in one call")
        case ConnectionNames.InvalidMessage.error:
            return .init(
                message: "the daemon could not read a message (\(s(ConnectionNames.InvalidMessage.reason))) and closed the connection",
                hint: "a client sent something that is not a Varlink call; report it if it was island")
        case ConnectionNames.TooManyConnections.error:
            return .init(
                message:
                    "the daemon already serves its maximum of \(i(ConnectionNames.TooManyConnections.limit)) connections (\(s(ConnectionNames.TooManyConnections.scope) == ConnectionNames.TooManyConnections.Scope.user ? "for this user" : "in total"))",
                hint: "close connections that are not needed (a forgotten island watch?), or try again later")
        case ConnectionNames.OutputQueueFull.error:
            return .init(
                message: "the stream fell more than \(i(ConnectionNames.OutputQueueFull.limit)) bytes behind and was ended",
                hint: "read it faster, or start it again")
        case ConnectionNames.ShuttingDown.error:
            return .init(message: "the daemon is shutting down", hint: "try again once it is back")
        // org.varlink.service: a call the daemon's interfaces do not have, or mistyped.
        case "org.varlink.service.InterfaceNotFound":
            return .init(message: "the daemon does not serve \(s("interface"))", hint: "islandd is older than this island: update it")
        case "org.varlink.service.MethodNotFound", "org.varlink.service.MethodNotImplemented":
            return .init(message: "the daemon has no method \(s("method"))", hint: "islandd is older than this island: update it")
        case "org.varlink.service.InvalidParameter":
            let expected = s("expected")
            return .init(
                message: "the daemon refused the parameter \(s("parameter"))" + (expected.isEmpty ? "" : "; expected \(expected)"),
                hint: "check the value given for it")
        case "org.varlink.service.ExpectedMore":
            return .init(
                message: "the daemon streams this method's replies, and the call did not ask for more",
                hint: "a client bug: report it if it was island")
        default:
            return nil
        }
    }

    /// A date this far past 1970 in seconds (the year 5138) is milliseconds since 1973 or later.
    static func looksLikeMilliseconds(_ value: Double) -> Bool { value >= 1e11 }

    private static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }

    private static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : String(format: "%.1f s", value)
    }
}
