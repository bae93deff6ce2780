import IslandCore
import IslandProtocol
import OrderedJSON
import OrderedCollections
import VarlinkCore

extension VarlinkError {
    /// The engine's refusal as clients see it: the error names and parameters of
    /// Protocol/org.island.varlink.
    init(_ error: EngineError) {
        typealias Unentitled = IslandErrorNames.Unentitled
        typealias Denied = IslandErrorNames.PermissionDenied
        switch error {
        case .refused(let refusal):
            self.init(refusal.name, refusal.parameters)
        case .invalidLayout(let type, let path, let reason):
            typealias Invalid = IslandErrorNames.InvalidLayout
            self.init(Invalid.error, [Invalid.type: .string(type), Invalid.path: .string(path), Invalid.reason: .string(reason)])
        case .tooManyLayouts(let app, let limit):
            self.init(
                IslandErrorNames.TooManyLayouts.error, [IslandErrorNames.TooManyLayouts.app: .string(app), IslandErrorNames.TooManyLayouts.limit: .int(limit)])
        case .persistenceFailure(let reason):
            self.init(IslandErrorNames.PersistenceFailure.error, [IslandErrorNames.PersistenceFailure.reason: .string(reason)])
        case .unknownApp(let app):
            self.init(Unentitled.error, [Unentitled.app: .string(app), Unentitled.reason: "no desktop entry and no activities: there is nothing to switch"])
        case .frequentUpdatesUndeclared(let app):
            self.init(Unentitled.error, [Unentitled.app: .string(app), Unentitled.reason: "its desktop entry does not declare X-Island-FrequentUpdates=true"])
        case .sharedActivity:
            self.init(
                Denied.error,
                [
                    Denied.role: "presenter", Denied.reason: "a system service's activity is shown to every user; only root may dismiss it",
                ])
        case .locked:
            self.init(
                Denied.error,
                [
                    Denied.role: "presenter", Denied.reason: "the session is locked: nothing acts on the lock screen until it is unlocked",
                ])
        case .buttonMissing:
            self = .invalidParameter("button")
        case .noSuchButton(let id, let button):
            self.init(
                IslandErrorNames.NoSuchButton.error, [IslandErrorNames.NoSuchButton.id: .string(id), IslandErrorNames.NoSuchButton.button: .string(button)])
        case .pushUnavailable(let reason):
            self.init(IslandErrorNames.PushUnavailable.error, [IslandErrorNames.PushUnavailable.reason: .string(reason)])
        case .speaksOnlyForItself(let reason):
            self.init(Denied.error, [Denied.role: "producer", Denied.reason: .string(reason)])
        case .noSuchSourceApp(let app):
            self.init(
                Unentitled.error,
                [
                    Unentitled.app: .string(app),
                    Unentitled.reason: .string("no desktop entry \(app).desktop in the daemon's XDG data directories: a source app must be installed"),
                ])
        }
    }
}
