import IslandCore
import OrderedJSON

/// The layout each activity is drawn with — registered by an extension of its app, installed
/// with the app, or else the default one worked out from its state — and the name and icon
/// presenters head it with.
///
/// Every delta needs its items' layouts, and working out a default layout means walking the
/// activity, so each is kept until the layouts or the apps change, or, for a default layout,
/// until the activity's state changes shape.
struct LayoutCache {
    struct ItemLayout {
        let json: JSON
        let isDefault: Bool
        /// Changes only when `json` does, so views compare numbers, not layouts.
        let revision: UInt64
        /// `Layout.defaultLayoutKey` of the delivered state a default layout was worked out from.
        let stateShape: [UInt8]?
        /// The cache's `generation` when it was worked out.
        let generation: UInt64
        /// The `Name=` and `Icon=` of the app's desktop entry, looked up with the layout
        /// rather than on every delta.
        let app: Wire.AppLabel
    }

    /// Layouts registered by extensions: owner → type → layout JSON (already validated). In the
    /// system scope an extension's layouts draw only its own user's activities of the app.
    private var registered: [ActivityOwner: [String: JSON]]
    /// Layouts installed with apps, by app; a registered layout of the same type wins.
    private var installed: [String: [String: JSON]] = [:]
    /// The apps' desktop entries, for their names, icons and URL schemes.
    private var apps: AppRegistry
    private var items: [HashedID: ItemLayout] = [:]
    /// Grows whenever the layouts or the apps change, which makes every cached layout stale.
    private var generation: UInt64 = 0
    private var lastRevision: UInt64 = 0

    init(registered: [ActivityOwner: [String: JSON]], apps: AppRegistry) {
        self.registered = registered
        self.apps = apps
    }

    // MARK: What the layouts are

    /// The layouts `owner`'s extensions registered, by type.
    func registered(by owner: ActivityOwner) -> [String: JSON] {
        registered[owner] ?? [:]
    }

    mutating func register(_ layout: JSON, type: String, by owner: ActivityOwner) {
        registered[owner, default: [:]][type] = layout
        generation += 1
    }

    mutating func removeLayout(type: String, of owner: ActivityOwner) {
        registered[owner]?[type] = nil
        generation += 1
    }

    /// Takes the apps and the layouts they install as they are now (at start, and on reload).
    mutating func reload(apps: AppRegistry, installed: [String: [String: JSON]]) {
        self.apps = apps
        self.installed = installed
        generation += 1
    }

    private func registeredLayout(for activity: Activity) -> JSON? {
        registered[activity.owner]?[activity.type] ?? installed[activity.app]?[activity.type]
    }

    // MARK: What each activity is drawn with

    /// The layout presenters draw the activity with: its app's, or the default one.
    mutating func layout(for activity: Activity) -> ItemLayout {
        let cached = items[activity.hashedID]
        // Only a default layout depends on the state: on its shape, which its content knows.
        let shape = activity.deliveredContent.stateShape
        assert(shape == Layout.defaultLayoutKey(stateText: activity.deliveredContent.stateText), "a state's shape that is not its layout's key")
        if let cached, cached.generation == generation, !cached.isDefault || Self.isSame(shape, cached.stateShape) {
            return cached
        }
        let json: JSON
        let isDefault: Bool
        if let registered = registeredLayout(for: activity) {
            (json, isDefault) = (registered, false)
        } else {
            (json, isDefault) = (.object(Layout.default(for: activity.type, attributes: activity.attributes,
                                                     state: activity.deliveredContent.state).json), true)
        }
        var revision = cached?.revision ?? 0
        if cached?.json != json {
            lastRevision += 1
            revision = lastRevision
        }
        let layout = ItemLayout(json: json, isDefault: isDefault, revision: revision, stateShape: isDefault ? shape : nil,
                                generation: generation, app: label(for: activity))
        items[activity.hashedID] = layout
        return layout
    }

    /// The heading of the activity: its app's desktop entry, or, for an activity its producer
    /// speaks for another app with, that app's installed entry, with the producer's beside —
    /// while the producer's entry still entitles it (`X-Island-SourceApps=true`), as it did
    /// when the activity was requested.
    private func label(for activity: Activity) -> Wire.AppLabel {
        let producer = apps.manifest(for: activity.app)
        if let sourceApp = verifiedSourceApp(of: activity), let source = apps.manifest(for: sourceApp) {
            return Wire.AppLabel(name: source.name ?? source.id, icon: source.icon, producerName: producer?.name,
                                 producerIcon: producer?.icon)
        }
        return Wire.AppLabel(name: producer?.name, icon: producer?.icon)
    }

    /// The app an activity is shown as, when its producer speaks for another app: its
    /// `sourceApp` while the producer's entry still entitles it (`X-Island-SourceApps=true`)
    /// and that app is installed; nil otherwise. The island arbitrates the activity as that
    /// app's, as its card is headed with that app's name.
    func verifiedSourceApp(of activity: Activity) -> String? {
        guard let sourceApp = activity.sourceApp, apps.manifest(for: activity.app)?.speaksForOtherApps == true,
              apps.manifest(for: sourceApp) != nil else { return nil }
        return sourceApp
    }

    /// Whether a state's shape is the one a default layout was worked out from, compared
    /// eight bytes at a time: `==` on two arrays compares them a byte at a time, and a shape is
    /// compared on every delta.
    private static func isSame(_ shape: [UInt8], _ cached: [UInt8]?) -> Bool {
        guard let cached else { return false }
        return shape.withUnsafeBytes { shape in cached.withUnsafeBytes { JSONBytes.equal(shape, $0) } }
    }

    /// Forgets a removed activity's layout.
    mutating func forget(_ id: String) {
        items[HashedID(id)] = nil
    }

    /// Forgets the layouts of every activity but those `isKept`: after the activities were
    /// reread from disk, those gone will never be removed one by one.
    mutating func keepOnly(_ isKept: (HashedID) -> Bool) {
        items = items.filter { isKept($0.key) }
    }

    /// The actions of every button in the layout the activity is drawn with (none in a
    /// default layout).
    func buttonActions(for activity: Activity) -> Set<String> {
        guard let json = registeredLayout(for: activity), let layout = try? Layout(json: json) else { return [] }
        return layout.buttonActions
    }

    /// The layout's tap URL, its templates filled from the activity.
    /// Rendering is bounded (`LayoutLimits.maximumRenderWork`), so it may run on the loop;
    /// the scheme must be on the allowlist of the app's own desktop entry (DESIGN.md §6).
    func tapURL(for activity: Activity, now: Double) -> String? {
        let declaredSchemes = apps.manifest(for: activity.app)?.urlSchemes ?? []
        guard let json = registeredLayout(for: activity), let layout = try? Layout(json: json), let url = layout.url,
              url.isAllowed(declaredSchemes: declaredSchemes) else {
            return nil
        }
        return LayoutRenderer(attributes: activity.attributes, state: activity.deliveredContent.state, now: now).resolve(url)
    }
}
