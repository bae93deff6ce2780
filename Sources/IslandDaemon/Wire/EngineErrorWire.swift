import IslandCore
import OrderedJSON
import OrderedCollections
import VarlinkCore

extension VarlinkError {
    /// The engine's refusal as clients see it: the error names and parameters of
    /// Protocol/org.island.varlink.
    init(_ error: EngineError) {
        switch error {
        case .refused(let refusal):
            self.init(refusal.name, refusal.parameters)
        case .invalidLayout(let type, let path, let reason):
            self.init("org.island.InvalidLayout", ["type": .string(type), "path": .string(path), "reason": .string(reason)])
        case .tooManyLayouts(let app, let limit):
            self.init("org.island.TooManyLayouts", ["app": .string(app), "limit": .int(limit)])
        case .persistenceFailure(let reason):
            self.init("org.island.PersistenceFailure", ["reason": .string(reason)])
        case .unknownApp(let app):
            self.init("org.island.Unentitled", ["app": .string(app), "reason": "no desktop entry and no activities: there is nothing to switch"])
        case .frequentUpdatesUndeclared(let app):
            self.init("org.island.Unentitled", ["app": .string(app), "reason": "its desktop entry does not declare X-Island-FrequentUpdates=true"])
        case .sharedActivity:
            self.init(
                "org.island.PermissionDenied",
                [
                    "role": "presenter", "reason": "a system service's activity is shown to every user; only root may dismiss it",
                ])
        case .locked:
            self.init(
                "org.island.PermissionDenied",
                [
                    "role": "presenter", "reason": "the session is locked: nothing acts on the lock screen until it is unlocked",
                ])
        case .buttonMissing:
            self = .invalidParameter("button")
        case .noSuchButton(let id, let button):
            self.init("org.island.NoSuchButton", ["id": .string(id), "button": .string(button)])
        case .pushUnavailable(let reason):
            self.init("org.island.PushUnavailable", ["reason": .string(reason)])
        case .speaksOnlyForItself(let reason):
            self.init("org.island.PermissionDenied", ["role": "producer", "reason": .string(reason)])
        case .noSuchSourceApp(let app):
            self.init(
                "org.island.Unentitled",
                [
                    "app": .string(app),
                    "reason": .string("no desktop entry \(app).desktop in the daemon's XDG data directories: a source app must be installed"),
                ])
        }
    }
}
