import IslandCore
import OrderedJSON
import OrderedCollections
import Testing
@testable import IslandDaemon

/// A presenter reads the file an `image` view names as its own user: only for producers that
/// could read it themselves. An owner one of whose producers runs in a sandbox, or an app
/// whose entry a Flatpak exported, gets its layouts without pictures.
@Suite struct SandboxedPicturesTests {
    static let picture: JSON = [
        "compactLeading": ["type": "image", "source": "{{state.art}}", "fallback": ["type": "symbol", "name": "music"]],
        "expanded": ["leading": ["type": "image", "source": "{{state.art}}", "priority": 2, "url": "https://example.org"]],
        "lockScreen": [
            "type": "hstack",
            "children": [
                ["type": "image", "source": "/home/u/secret.png"], ["type": "text", "template": "{{state.title}}"],
            ],
        ],
    ]

    @Test func everyPictureBecomesItsFallbackOrNothing() throws {
        let stripped = Layout.withoutPictures(Self.picture)
        #expect(!Layout.hasPictures(stripped))
        #expect(Layout.hasPictures(Self.picture))
        #expect(stripped["compactLeading"] == ["type": "symbol", "name": "music"])
        #expect(stripped["lockScreen"]?["children"] == [["type": "text", "template": ""], ["type": "text", "template": "{{state.title}}"]])
        #expect(
            stripped["expanded"]?["leading"] == ["type": "text", "template": "", "priority": 2, "url": "https://example.org"],
            "a region's keys stay")
        _ = try Layout(json: stripped)
    }

    static func activity(app: String) throws -> Activity {
        var manager = ActivityManager(makeID: { "a1" })
        return try manager.request(
            app: app, type: "Song", attributes: [:], content: ActivityContent(state: [:]),
            entitlement: AppAuthorization(entitled: true), now: 1_700_000_000
        ).activity
    }

    @Test func aConfinedOwnersActivitiesAreDrawnWithoutPictures() throws {
        let apps = AppRegistry(manifests: [
            AppManifest(id: "org.example.Player", name: nil, supportsLiveActivities: true, supportsFrequentUpdates: false, executable: nil, path: "/a"),
            AppManifest(
                id: "org.example.Flat", name: nil, supportsLiveActivities: true, supportsFrequentUpdates: false, executable: nil,
                isFlatpak: true, path: "/b"),
        ])
        var cache = LayoutCache(registered: [:], apps: apps)
        cache.reload(apps: apps, installed: ["org.example.Player": ["Song": Self.picture], "org.example.Flat": ["Song": Self.picture]])
        let player = try Self.activity(app: "org.example.Player")
        let before = cache.layout(for: player)
        #expect(Layout.hasPictures(before.json))

        let confined = cache.confine(player.owner)
        let again = cache.confine(player.owner)
        #expect(confined)
        #expect(!again, "once")
        let after = cache.layout(for: player)
        #expect(!Layout.hasPictures(after.json))
        #expect(after.revision != before.revision, "presenters are sent the layout again")

        let flat = cache.layout(for: try Self.activity(app: "org.example.Flat"))
        #expect(!Layout.hasPictures(flat.json), "a Flatpak's export")
    }
}
