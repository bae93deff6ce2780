import IslandCore
import OrderedJSON
import IslandStore

/// The extension role: layouts an app's extension registers for its activity types.
extension IslandEngine {
    /// Returns what `LayoutLint` warns of (a measure that can never be a number): the layout
    /// is registered all the same.
    @discardableResult
    func registerLayout(app: String, uid: UInt32?, type: String, layout: JSON) async throws(EngineError) -> [LayoutWarning] {
        // No activity can have a longer type, so no such layout could ever be used.
        guard type.utf8.count <= ActivityLimits.maximumTypeBytes else {
            throw .refused(.typeTooLong(limit: ActivityLimits.maximumTypeBytes, size: type.utf8.count))
        }
        let parsed: Layout
        do {
            parsed = try Layout(json: layout)
        } catch {
            throw .invalidLayout(type: type, path: error.path, reason: error.reason)
        }
        let owner = owner(app: app, uid: uid)
        try reserveLayout(type, of: owner)
        defer { registeringLayouts[owner]?.remove(type) }
        try await commitAndWait([.putLayout(app: app, uid: owner.uid, type: type, body: layout.description)])
        presenters.layouts.register(layout, type: type, by: owner)
        presenters.redraw(manager.list(owner: owner, type: type, states: nil).map(\.id), now: clock())
        return LayoutLint.warnings(for: parsed)
    }

    /// Counts a new type against the app's limit (a type it already has is only replaced).
    private func reserveLayout(_ type: String, of owner: ActivityOwner) throws(EngineError) {
        let types = Set(presenters.layouts.registered(by: owner).keys).union(registeringLayouts[owner] ?? [])
        guard types.contains(type) || types.count < LayoutLimits.maximumLayoutsPerApp else {
            throw .tooManyLayouts(app: owner.app, limit: LayoutLimits.maximumLayoutsPerApp)
        }
        registeringLayouts[owner, default: []].insert(type)
    }

    func removeLayout(app: String, uid: UInt32?, type: String) async throws(EngineError) {
        let owner = owner(app: app, uid: uid)
        try await commitAndWait([.deleteLayout(app: app, uid: owner.uid, type: type)])
        presenters.layouts.removeLayout(type: type, of: owner)
        presenters.redraw(manager.list(owner: owner, type: type, states: nil).map(\.id), now: clock())
    }

    /// The owner's registered layouts, by type.
    func listLayouts(app: String, uid: UInt32?) -> [(type: String, layout: JSON)] {
        presenters.layouts.registered(by: owner(app: app, uid: uid)).sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }
}
