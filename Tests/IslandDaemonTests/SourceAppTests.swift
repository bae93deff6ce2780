import IslandCore
import OrderedJSON
import OrderedCollections
import Systemd
import Testing
import VarlinkCore
@testable import IslandDaemon

/// A producer that speaks for other apps (the bridge) heading its activities with the app it
/// verified (`Request`'s `sourceApp`): who may, what they are told when they may not, and what
/// presenters get.
@Suite struct SourceAppTests {
    static let bridge = "org.island.bridge"
    static let registry = AppRegistry(manifests: [
        AppManifest(
            id: bridge, name: "Island Bridge", icon: "emblem-synchronizing-symbolic", supportsLiveActivities: true,
            supportsFrequentUpdates: false, speaksForOtherApps: true, executable: "/usr/bin/island-bridge", path: "/a"),
        AppManifest(
            id: "org.example.Coffee", name: "Coffee", icon: "coffee", supportsLiveActivities: true, supportsFrequentUpdates: false,
            executable: "/usr/bin/coffee", path: "/b"),
        AppManifest(
            id: "mpv", name: "mpv Media Player", icon: "mpv", supportsLiveActivities: false, supportsFrequentUpdates: false,
            executable: "mpv", path: "/c"),
    ])
    static let peer = PeerCredentials(pid: 4242, uid: 1000, gid: 1000)

    static func roles(_ scope: DaemonScope = .user, sandbox: ProcessSandbox = .none, executable: String?) -> RoleBinder {
        let lookup = IdentityResolver.ProcessLookup(sandbox: { _ in sandbox }, executable: { _ in executable })
        return RoleBinder(
            scope: scope, resolver: { IdentityResolver(scope: scope, registry: registry, lookup: lookup) },
            presenterGroup: nil, sandboxAllowance: SandboxAllowance(DaemonSettings()))
    }

    @Test("the bridge, recognised by the executable its entry names, may speak for other apps")
    func entitled() {
        #expect(Self.roles(executable: "/usr/bin/island-bridge").sourceAppRefusal(app: Self.bridge, peer: Self.peer) == nil)
    }

    @Test("an app whose entry does not say X-Island-SourceApps=true speaks only for itself")
    func notEntitled() throws {
        let reason = try #require(Self.roles(executable: "/usr/bin/coffee").sourceAppRefusal(app: "org.example.Coffee", peer: Self.peer))
        #expect(reason == "org.example.Coffee speaks only for itself: its desktop entry does not declare X-Island-SourceApps=true")
        #expect(
            VarlinkError(EngineError.speaksOnlyForItself(reason: reason))
                == VarlinkError("org.island.PermissionDenied", ["role": "producer", "reason": .string(reason)]))
    }

    @Test("a process that is the bridge only by its claim, or runs in a sandbox, may not")
    func claimedOrSandboxed() throws {
        // In the user scope the bridge's claim binds the role; speaking for others needs more.
        let claimed = try #require(Self.roles(executable: "/usr/bin/python3").sourceAppRefusal(app: Self.bridge, peer: Self.peer))
        #expect(claimed.contains("only by its own claim"), "\(claimed)")
        let flatpak = Self.roles(sandbox: .flatpak(appID: Self.bridge, ownUserNamespace: false), executable: "/usr/bin/island-bridge")
        let sandboxed = try #require(flatpak.sourceAppRefusal(app: Self.bridge, peer: Self.peer))
        #expect(sandboxed.contains("sandboxed app may not speak for other apps"), "\(sandboxed)")
        #expect(
            Self.roles(executable: "/usr/bin/island-bridge").sourceAppRefusal(app: Self.bridge, peer: nil) != nil,
            "without credentials nothing is recognised")
    }

    @Test("naming an app with no installed entry is Unentitled with that app")
    func noSuchApp() {
        #expect(
            VarlinkError(EngineError.noSuchSourceApp(app: "org.example.Gone"))
                == VarlinkError(
                    "org.island.Unentitled",
                    [
                        "app": "org.example.Gone",
                        "reason": "no desktop entry org.example.Gone.desktop in the daemon's XDG data directories: a source app must be installed",
                    ]))
    }

    static func activity(app: String = bridge, sourceApp: String?) throws -> Activity {
        var manager = ActivityManager(makeID: { "a1" })
        return try manager.request(
            app: app, type: "NowPlaying", attributes: [:], content: ActivityContent(state: [:]),
            sourceApp: sourceApp, entitlement: AppAuthorization(entitled: true), now: 1_700_000_000
        ).activity
    }

    @Test("the presenter item is headed by the source app's own entry, the producer's beside it")
    func presenterItem() throws {
        var cache = LayoutCache(registered: [:], apps: Self.registry)
        let label = cache.layout(for: try Self.activity(sourceApp: "mpv")).app
        #expect(
            label
                == Wire.AppLabel(
                    name: "mpv Media Player", icon: "mpv", producerName: "Island Bridge",
                    producerIcon: "emblem-synchronizing-symbolic"))
        var update = Wire.PresenterUpdate(.delta, sequence: 1, resync: false, island: nil, capacity: 16)
        update.add(try Self.activity(sourceApp: "mpv"), layout: nil, app: label)
        let item = try #require(try JSONParser.parse(update.finish(removed: [], alert: nil).bytes)["update"]?["items"]?.arrayValue?.first)
        #expect(item["app"] == .string(Self.bridge))
        #expect(item["sourceApp"] == "mpv")
        #expect(item["appName"] == "mpv Media Player")
        #expect(item["appIcon"] == "mpv")
        #expect(item["producerName"] == "Island Bridge")
        #expect(item["producerIcon"] == "emblem-synchronizing-symbolic")
    }

    @Test("without a source app, or once its entry or the producer's entitlement is gone, the producer heads it")
    func producerHeading() throws {
        var cache = LayoutCache(registered: [:], apps: Self.registry)
        let own = Wire.AppLabel(name: "Island Bridge", icon: "emblem-synchronizing-symbolic")
        #expect(cache.layout(for: try Self.activity(sourceApp: nil)).app == own)
        let headed = try Self.activity(sourceApp: "mpv")
        cache.reload(apps: AppRegistry(manifests: Self.registry.manifests.values.filter { $0.id != "mpv" }), installed: [:])
        #expect(cache.layout(for: headed).app == own, "mpv's entry was removed")
        var unentitled = Self.registry.manifests[Self.bridge]!
        unentitled.speaksForOtherApps = false
        cache.reload(
            apps: AppRegistry(manifests: [unentitled] + Self.registry.manifests.values.filter { $0.id != Self.bridge }),
            installed: [:])
        #expect(cache.layout(for: headed).app == own, "the bridge's entry no longer entitles it")
    }

    static func activity(id: String, sourceApp: String?, at start: Double) throws -> Activity {
        var manager = ActivityManager(makeID: { id })
        return try manager.request(
            app: bridge, type: "Progress", attributes: [:], content: ActivityContent(state: [:]),
            sourceApp: sourceApp, entitlement: AppAuthorization(entitled: true), now: start
        ).activity
    }

    /// The island of the presenters of uid 1000 with `activities` shown, with `registry`.
    static func island(_ activities: [Activity], registry: AppRegistry = registry) -> JSON? {
        var hub = PresenterHub(activities: activities, focusSince: nil, scope: .user, layouts: LayoutCache(registered: [:], apps: registry))
        let (encoded, _) = hub.snapshot(for: 1000, resync: false, now: 1_700_000_010)
        return (try? JSONParser.parse(encoded.bytes))?["update"]?["island"]
    }

    @Test("a producer's activities for two verified apps share the island as those two apps' would: pill and bubble")
    func sharesTheIslandAsItsApps() throws {
        let playing = try Self.activity(id: "playing", sourceApp: "mpv", at: 1_700_000_000)
        let copy = try Self.activity(id: "copy", sourceApp: nil, at: 1_700_000_001)
        let island = Self.island([playing, copy])
        #expect(island?["mode"] == "minimal", "\(String(describing: island))")
        #expect(island?["attached"] == "playing")
        #expect(island?["detached"] == "copy")
        // Two activities it speaks for one app about are one app's: one in the island.
        let second = try Self.activity(id: "second", sourceApp: "mpv", at: 1_700_000_002)
        #expect(Self.island([playing, second])?["mode"] == "compact")
    }

    @Test("a source app that is not verified (no entry, or a producer no longer entitled) is the producer's own")
    func unverifiedSourceAppIsTheProducers() throws {
        let playing = try Self.activity(id: "playing", sourceApp: "mpv", at: 1_700_000_000)
        let copy = try Self.activity(id: "copy", sourceApp: nil, at: 1_700_000_001)
        let withoutMPV = AppRegistry(manifests: Self.registry.manifests.values.filter { $0.id != "mpv" })
        #expect(Self.island([playing, copy], registry: withoutMPV)?["mode"] == "compact")
        var unentitled = Self.registry.manifests[Self.bridge]!
        unentitled.speaksForOtherApps = false
        let demoted = AppRegistry(manifests: [unentitled] + Self.registry.manifests.values.filter { $0.id != Self.bridge })
        #expect(Self.island([playing, copy], registry: demoted)?["mode"] == "compact")
    }

    @Test("the source app is the activity's for life: stored and read back, and shown to its producer")
    func storedAndShown() throws {
        let activity = try Self.activity(sourceApp: "mpv")
        #expect(try Activity(json: activity.json).sourceApp == "mpv")
        #expect(Wire.activity(activity)["sourceApp"] == "mpv")
        #expect(Wire.activity(try Self.activity(sourceApp: nil))["sourceApp"] == nil)
    }
}
