import IslandCore
import OrderedCollections
import OrderedJSON
import Testing
@testable import IslandDaemon

/// The layout cache on its own: what it keeps, and until when.
@Suite struct LayoutCacheTests {
    static let t0: Double = 1_700_000_000

    /// An update finds its layout by the activity it is a version of, where the last look-up
    /// left it; a layout forgotten (its activity removed, or the activities reread from disk)
    /// is worked out again all the same.
    @Test func aForgottenLayoutIsWorkedOutAgain() throws {
        var manager = ActivityManager(makeID: { "a1" })
        let started = try manager.request(
            app: "org.example.Player", type: "Song", attributes: [:], content: ActivityContent(state: ["n": 0]),
            entitlement: AppAuthorization(entitled: true), now: Self.t0
        ).activity
        let updated = try manager.update(
            app: started.app, uid: nil, id: started.id, content: ActivityContent(state: ["n": 1]), alert: nil,
            entitlement: AppAuthorization(entitled: true), now: Self.t0 + 1
        ).activity
        var cache = LayoutCache(registered: [:], apps: AppRegistry(manifests: []))
        let first = cache.layout(for: started)
        #expect(cache.layout(for: updated) === first, "a state of the same shape: the same layout")

        cache.forget(started.id)
        let afterRemoval = cache.layout(for: updated)
        #expect(afterRemoval !== first)
        #expect(cache.layout(for: updated) === afterRemoval)

        cache.keepOnly { _ in false }
        #expect(cache.layout(for: updated) !== afterRemoval)
    }
}
