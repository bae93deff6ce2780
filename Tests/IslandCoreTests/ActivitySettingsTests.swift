import IslandCore
import OrderedJSON
import OrderedCollections
import Testing

@Suite("User settings and authorization")
struct ActivitySettingsTests: ActivityTesting {
    @Test func turningAnAppOffEndsItsActivitiesAndDeniesNewOnes() throws {
        var manager = makeManager()
        let first = try manager.start(pizza, at: t0).id
        let second = try manager.start(pizza, at: t0).id
        let other = try manager.start(weather, at: t0).id
        _ = try manager.end(app: pizza, id: second, now: t0 + 1)

        let events = manager.setEnabled(app: pizza, false, now: t0 + 10)
        expectLabels(events, ["settings", "changed:1:ended", "delivered:1"])  // the ended one is untouched
        let ended = try #require(manager.activity(id: first))
        #expect(ended.endReason == .user)
        #expect(ended.endedAt == t0 + 10)
        #expect(ended.dismissAt == t0 + 10 + 4 * 3600)
        #expect(manager.activity(id: second)?.endReason == .app)
        expectState(manager.activity(id: other)?.state, .active)

        #expect(throws: IslandError.denied(app: pizza)) { try manager.start(pizza, at: t0 + 11) }
        #expect(!manager.authorization(app: pizza, entitlement: entitled, now: t0 + 11).enabled)
        #expect(!manager.isEnabled(app: pizza))
        #expect(manager.isEnabled(app: weather))
        #expect(manager.isGloballyEnabled)
        #expect(manager.setEnabled(app: pizza, false, now: t0 + 12).isEmpty)  // no change, no event

        expectLabels(manager.setEnabled(app: pizza, true, now: t0 + 13), ["settings"])
        #expect(try manager.start(pizza, at: t0 + 14).state == .active)
    }

    @Test func turningLiveActivitiesOffGloballyEndsEveryActivity() throws {
        var manager = makeManager()
        try manager.start(pizza, at: t0)
        try manager.start(weather, at: t0)
        let events = manager.setGlobalEnabled(false, now: t0 + 5)
        expectLabels(events, ["settings", "changed:1:ended", "delivered:1", "changed:2:ended", "delivered:2"])
        #expect(manager.list().allSatisfy { $0.endReason == .user })
        #expect(throws: IslandError.denied(app: weather)) { try manager.start(weather, at: t0 + 6) }
        #expect(manager.setGlobalEnabled(false, now: t0 + 7).isEmpty)
        #expect(!manager.isGloballyEnabled)
        #expect(!manager.isEnabled(app: weather))

        // Turning it back on does not revive anything, it allows new requests.
        expectLabels(manager.setGlobalEnabled(true, now: t0 + 8), ["settings"])
        #expect(manager.liveCount() == 0)
        #expect(try manager.start(weather, at: t0 + 9).id == "3")
    }

    @Test func authorizationReportsEverythingAProducerMayAskAbout() throws {
        var manager = makeManager()
        let id = try manager.start(pizza, at: t0).id
        try manager.start(pizza, at: t0)
        try manager.start(weather, at: t0)
        _ = try manager.update(id, step: 1, alert: Alert(title: "a", body: "b"), at: t0 + 1)

        let info = manager.authorization(app: pizza, entitlement: entitledFrequent, now: t0 + 2)
        #expect(
            info
                == AuthorizationInfo(
                    app: pizza, entitled: true, enabled: true, frequentUpdates: true, limits: ActivityLimits(),
                    remainingStarts: 8, remainingAlerts: 5, liveActivities: 2, globalLiveActivities: 3
                ))

        _ = manager.setFrequentUpdates(app: pizza, false, now: t0)
        #expect(!manager.authorization(app: pizza, entitlement: entitledFrequent, now: t0 + 2).frequentUpdates)

        let unentitled = manager.authorization(app: "org.example.Nothing", entitlement: AppAuthorization(entitled: false), now: t0)
        #expect(!unentitled.entitled)
        #expect(!unentitled.enabled)
        #expect(unentitled.remainingStarts == 10)
    }

    @Test func settingsRoundTripThroughJSON() throws {
        var manager = makeManager()
        _ = manager.setEnabled(app: pizza, false, now: t0)
        _ = manager.setFrequentUpdates(app: weather, false, now: t0)
        _ = manager.setGlobalEnabled(false, now: t0)
        let json = manager.settings.json
        #expect(
            json == [
                "enabled": false,
                "apps": [
                    "org.example.Pizza": ["enabled": false, "frequentUpdates": true],
                    "org.example.Weather": ["enabled": true, "frequentUpdates": false],
                ],
            ])
        #expect(try ActivitySettings(json: json) == manager.settings)
        #expect(try ActivitySettings(json: [:]) == ActivitySettings())
    }
}
