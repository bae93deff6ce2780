import IslandCore

/// Every refusal of the engine, as the daemon's own values: `Wire` names them for clients.
enum EngineError: Error, Sendable, Hashable {
    /// The activity rules refused (IslandCore).
    case refused(IslandError)
    /// An extension's layout does not parse: what is wrong, and where.
    case invalidLayout(type: String, path: String, reason: String)
    /// The app has `limit` layouts registered already.
    case tooManyLayouts(app: String, limit: Int)
    /// The change could not be stored, so it did not happen.
    case persistenceFailure(reason: String)
    /// An admin switched an app that has neither a desktop entry nor activities.
    case unknownApp(app: String)
    /// An admin allowed frequent updates to an app whose desktop entry does not ask for them.
    case frequentUpdatesUndeclared(app: String)
    /// A user's presenter tried to dismiss a system service's activity, which every user sees.
    case sharedActivity
    /// A presenter tapped, pressed or dismissed while the session is locked.
    case locked
    /// A button press that does not say which button.
    case buttonMissing
    /// A button press naming an action the activity's layout has no button for.
    case noSuchButton(id: String, button: String)
    /// Push is off (no broker configured), or a token cannot be made for this app.
    case pushUnavailable(reason: String)
    /// A producer that may not speak for other apps asked to head an activity with one.
    case speaksOnlyForItself(reason: String)
    /// A producer named a source app with no installed desktop entry.
    case noSuchSourceApp(app: String)

    static func noSuchActivity(_ id: String?) -> EngineError {
        .refused(.noSuchActivity(id: id ?? ""))
    }
}
