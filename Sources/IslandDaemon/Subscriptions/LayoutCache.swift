import IslandCore
import OrderedCollections
import OrderedJSON

/// The layout each activity is drawn with — registered by an extension of its app, installed
/// with the app, or else the default one worked out from its state — and the name and icon
/// presenters head it with.
///
/// Every delta needs its items' layouts, and working out a default layout means walking the
/// activity, so each is kept until the layouts or the apps change, or, for a default layout,
/// until the activity's state changes shape.
struct LayoutCache {
    /// A class, not a value: it is looked up for every delta, and a copy of its eight
    /// members cost a retain and a release each; a reference costs one.
    final class ItemLayout: Sendable {
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
        /// What the layout lets a locked screen show (a default layout: everything).
        let lockScreen: LockScreenVisibility
        /// The layout's `publicLayout`: what a `private` activity shows on a locked screen.
        let publicLayout: JSON?

        init(
            json: JSON, isDefault: Bool, revision: UInt64, stateShape: [UInt8]?, generation: UInt64, app: Wire.AppLabel,
            lockScreen: LockScreenVisibility, publicLayout: JSON?
        ) {
            (self.json, self.isDefault, self.revision, self.stateShape) = (json, isDefault, revision, stateShape)
            (self.generation, self.app, self.lockScreen, self.publicLayout) = (generation, app, lockScreen, publicLayout)
        }
    }

    /// Layouts registered by extensions: owner → type → layout JSON (already validated). In the
    /// system scope an extension's layouts draw only its own user's activities of the app.
    private var registered: [ActivityOwner: [String: JSON]]
    /// Layouts installed with apps, by app; a registered layout of the same type wins.
    private var installed: [String: [String: JSON]] = [:]
    /// The apps' desktop entries, for their names, icons and URL schemes.
    private var apps: AppRegistry
    private var items: [HashedID: ItemLayout] = [:]
    /// The item last looked up, with a version of its activity: the next version (a
    /// producer's stream of updates) finds its layout by one reference compared instead of a
    /// look-up (~180 instructions per delta). It stands for `items`' entry of that activity,
    /// so it is replaced with it, and forgotten with it.
    private var lastItem: (activity: Activity, layout: ItemLayout)?
    /// Owners a producer of which ran in a sandbox since the daemon started (`confine`).
    private var confined: Set<ActivityOwner> = []
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

    /// Draws `owner`'s activities without pictures from now on: one of its producers runs in
    /// a sandbox. Whether that changed anything.
    mutating func confine(_ owner: ActivityOwner) -> Bool {
        guard confined.insert(owner).inserted else { return false }
        generation += 1
        return true
    }

    /// Whether presenters may read the pictures the activity's `image` views name. A presenter
    /// reads them as its own user, so only for producers that could read them too: not for an
    /// owner one of whose producers runs in a sandbox (`confine`), nor for an app whose desktop
    /// entry is a Flatpak's export (`X-Flatpak=`), which covers its activities restored after a
    /// restart before it connects again. A sandboxed app's own files are not told from the
    /// user's here: it gets no pictures at all.
    func picturesAllowed(for activity: Activity) -> Bool {
        !confined.contains(activity.owner) && apps.manifest(for: activity.app)?.isFlatpak != true
    }

    /// Takes the apps with one more entry (`AppRegistry.adopt`), the installed layouts as they were.
    mutating func adopt(apps: AppRegistry) {
        self.apps = apps
        generation += 1
    }

    private func registeredLayout(for activity: Activity) -> JSON? {
        registered[activity.owner]?[activity.type] ?? installed[activity.app]?[activity.type]
    }

    // MARK: What each activity is drawn with

    /// The layout presenters draw the activity with: its app's, or the default one.
    mutating func layout(for activity: Activity) -> ItemLayout {
        let cached: ItemLayout?
        if let lastItem, lastItem.activity.isVersion(of: activity) {
            cached = lastItem.layout
        } else {
            cached = items[activity.hashedID]
            lastItem = cached.map { (activity, $0) }
        }
        // Only a default layout depends on the state: on its shape, which its content knows.
        let shape = activity.deliveredContent.stateShape
        assert(shape == Layout.defaultLayoutKey(stateText: activity.deliveredContent.stateText), "a state's shape that is not its layout's key")
        if let cached, cached.generation == generation, !cached.isDefault || Self.isSame(shape, cached.stateShape) {
            return cached
        }
        var json: JSON
        let isDefault: Bool
        if let registered = registeredLayout(for: activity) {
            (json, isDefault) = (registered, false)
        } else {
            (json, isDefault) = (
                .object(
                    Layout.default(
                        for: activity.type, attributes: activity.attributes,
                        state: activity.deliveredContent.state
                    ).json), true
            )
        }
        if !picturesAllowed(for: activity), Layout.hasPictures(json) { json = Layout.withoutPictures(json) }
        var revision = cached?.revision ?? 0
        if cached?.json != json {
            lastRevision += 1
            revision = lastRevision
        }
        let privacy = isDefault ? (LockScreenVisibility.public, nil) : Self.lockScreenPrivacy(of: json)
        let layout = ItemLayout(
            json: json, isDefault: isDefault, revision: revision, stateShape: isDefault ? shape : nil,
            generation: generation, app: label(for: activity), lockScreen: privacy.0, publicLayout: privacy.1)
        items[activity.hashedID] = layout
        lastItem = (activity, layout)
        return layout
    }

    /// A registered layout's lock-screen visibility and public layout, read from its members:
    /// every layout here was validated when it was registered or installed. Anything else
    /// (which validation never lets through) is taken as `secret`, so it fails closed.
    private static func lockScreenPrivacy(of json: JSON) -> (LockScreenVisibility, JSON?) {
        guard case .object(let members) = json else { return (.secret, nil) }
        let visibility: LockScreenVisibility
        switch (members["lockScreenVisibility"], members["hideContentOnLockScreen"]) {
        case (.string(let name)?, _): visibility = LockScreenVisibility(rawValue: name) ?? .secret
        case (nil, .bool(true)?): visibility = .private
        case (nil, .bool(false)?), (nil, nil): visibility = .public
        default: visibility = .secret
        }
        return (visibility, members["publicLayout"])
    }

    /// The heading of the activity: its app's desktop entry, or, for an activity its producer
    /// speaks for another app with, that app's installed entry, with the producer's beside —
    /// while the producer's entry still entitles it (`X-Island-SourceApps=true`), as it did
    /// when the activity was requested.
    private func label(for activity: Activity) -> Wire.AppLabel {
        let producer = apps.manifest(for: activity.app)
        if let sourceApp = verifiedSourceApp(of: activity), let source = apps.manifest(for: sourceApp) {
            return Wire.AppLabel(
                name: source.name ?? source.id, icon: source.icon, producerName: producer?.name,
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
            apps.manifest(for: sourceApp) != nil
        else { return nil }
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
        if lastItem?.activity.id == id { lastItem = nil }
    }

    /// Forgets the layouts of every activity but those `isKept`: after the activities were
    /// reread from disk, those gone will never be removed one by one.
    mutating func keepOnly(_ isKept: (HashedID) -> Bool) {
        items = items.filter { isKept($0.key) }
        lastItem = nil
    }

    /// The actions of every button in the layout the activity is drawn with (none in a
    /// default layout).
    func buttonActions(for activity: Activity) -> Set<String> {
        guard let json = registeredLayout(for: activity), let layout = try? Layout(json: json) else { return [] }
        return layout.buttonActions
    }

    /// The layout's tap URL, its templates filled from the activity.
    /// Rendering is bounded (`LayoutLimits.maximumRenderWork`), so it may run on the loop;
    /// the scheme must be on the allowlist of the app's own desktop entry (docs/design.md §6).
    func tapURL(for activity: Activity, now: Double) -> String? {
        let declaredSchemes = apps.manifest(for: activity.app)?.urlSchemes ?? []
        guard let json = registeredLayout(for: activity), let layout = try? Layout(json: json), let url = layout.url,
            url.isAllowed(declaredSchemes: declaredSchemes)
        else {
            return nil
        }
        return LayoutRenderer(attributes: activity.attributes, state: activity.deliveredContent.state, now: now).resolve(url)
    }
}
