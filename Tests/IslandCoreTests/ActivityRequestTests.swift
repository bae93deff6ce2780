import IslandCore
import OrderedJSON
import OrderedCollections
import Testing

@Suite("Activity requests: authorization, idempotency, size, limits, start budget")
struct ActivityRequestTests: ActivityTesting {
    @Test func anUnentitledAppIsRefusedBeforeItsSettingsAreConsulted() {
        var manager = makeManager()
        _ = manager.setEnabled(app: pizza, false, now: t0)
        #expect(throws: IslandError.unentitled(app: pizza)) {
            try manager.start(entitlement: AppAuthorization(entitled: false), at: t0)
        }
        #expect(throws: IslandError.denied(app: pizza)) { try manager.start(at: t0) }
        #expect(manager.list().isEmpty)
    }

    @Test func aKeyMakesTheRequestIdempotentWithoutSpendingBudget() throws {
        var manager = makeManager()
        let first = try manager.request(
            app: pizza, type: "Delivery", attributes: ["order": "42"], content: content(0), key: "order-42",
            entitlement: entitled, now: t0
        )
        let startsLeft = manager.authorization(app: pizza, entitlement: entitled, now: t0 + 1).remainingStarts
        #expect(startsLeft == 9)

        let retry = try manager.request(
            app: pizza, type: "Delivery", attributes: ["order": "42"], content: content(7), key: "order-42",
            entitlement: entitled, now: t0 + 1
        )
        #expect(!retry.created)
        #expect(retry.activity == first.activity)  // returned as is: the retry's content is not applied
        #expect(retry.events.isEmpty)
        #expect(manager.authorization(app: pizza, entitlement: entitled, now: t0 + 1).remainingStarts == 9)
        #expect(manager.list().count == 1)

        // Keys are per app.
        let otherApp = try manager.start(weather, key: "order-42", at: t0 + 2)
        #expect(otherApp.id == "2")
    }

    @Test func aKeyRetryIsAnsweredEvenWhenLimitsWouldRefuseANewStart() throws {
        var manager = makeManager(limits: limits { $0.maximumActivitiesPerApp = 1 })
        let first = try manager.start(key: "k", at: t0)
        #expect(try manager.start(key: "k", at: t0 + 1) == first)
        #expect(throws: IslandError.targetMaximumExceeded(app: pizza, limit: 1)) { try manager.start(key: "other", at: t0 + 2) }
    }

    /// The key of an ended activity (listed until dismissed) is free.
    @Test func aKeyFindsOnlyLiveActivities() throws {
        var manager = makeManager()
        let first = try manager.start(key: "k", at: t0)
        _ = try manager.end(app: pizza, id: first.id, now: t0 + 1)
        let second = try manager.start(key: "k", at: t0 + 2)
        #expect(second.id == "2")
        #expect(second.state == .active)
        #expect(try manager.start(key: "k", at: t0 + 3) == second)  // while live, the same one
        expectState(manager.activity(id: first.id)?.state, .ended)  // still listed, unchanged

        _ = try manager.end(app: pizza, id: second.id, dismissalPolicy: .immediate, now: t0 + 4)
        let third = try manager.start(key: "k", at: t0 + 5)
        #expect(third.id == "3")
        #expect(third.state == .active)
    }

    /// Attributes padded so that attributes + state come to exactly `size` bytes.
    static func attributes(totalSize size: Int) -> JSONObject {
        // `{"pad":""}` is 10 bytes and the state `{"step":0}` another 10.
        ["pad": .string(String(repeating: "x", count: size - 20))]
    }

    @Test(arguments: [(4096, true), (4097, false)])
    func payloadLimitIsInclusive(size: Int, accepted: Bool) throws {
        var manager = makeManager()
        let attributes = Self.attributes(totalSize: size)
        #expect(Activity.payloadSize(attributes: attributes, content: content(0)) == size)
        let start = {
            try manager.request(app: pizza, type: "T", attributes: attributes, content: content(0), entitlement: entitled, now: t0)
        }
        if accepted {
            #expect(try start().created)
        } else {
            #expect(throws: IslandError.attributesTooLarge(limit: 4096, size: 4097, part: .attributes)) { try start() }
            #expect(manager.list().isEmpty)
        }
    }

    /// The refusal says which part to make smaller.
    @Test func aTooLargeRequestBlamesTheLargerPart() {
        var manager = makeManager()
        let big = ActivityContent(state: ["pad": .string(String(repeating: "x", count: 4100))])
        let size = Activity.payloadSize(attributes: ["a": 1], content: big)
        #expect(throws: IslandError.attributesTooLarge(limit: 4096, size: size, part: .state)) {
            try manager.request(app: pizza, type: "T", attributes: ["a": 1], content: big, entitlement: entitled, now: t0)
        }
    }

    @Test func anUpdateThatWouldExceedThePayloadLimitIsRefused() throws {
        var manager = makeManager()
        let id = try manager.request(
            app: pizza, type: "T", attributes: Self.attributes(totalSize: 4090), content: content(0),
            entitlement: entitled, now: t0
        ).activity.id
        // `{"step":0,"n":"xx"}` is 9 bytes more than `{"step":0}`.
        let bigger = ActivityContent(state: ["step": 0, "n": "xx"])
        #expect(throws: IslandError.attributesTooLarge(limit: 4096, size: 4099, part: .state)) {
            try manager.update(app: pizza, id: id, content: bigger, entitlement: entitled, now: t0 + 1)
        }
        #expect(throws: IslandError.attributesTooLarge(limit: 4096, size: 4099, part: .state)) {
            try manager.end(app: pizza, id: id, content: bigger, now: t0 + 1)
        }
        #expect(manager.activity(id: id)?.content == content(0))
        expectState(manager.activity(id: id)?.state, .active)
    }

    @Test func fiveLiveActivitiesPerAppAndEndingOneFreesASlot() throws {
        var manager = makeManager()
        for second in 0..<5 { try manager.start(at: t0 + Double(second)) }
        #expect(throws: IslandError.targetMaximumExceeded(app: pizza, limit: 5)) { try manager.start(at: t0 + 5) }
        // Other apps are not affected.
        #expect(try manager.start(weather, at: t0 + 5).id == "6")

        _ = try manager.end(app: pizza, id: "1", now: t0 + 6)
        #expect(try manager.start(at: t0 + 7).id == "7")
        #expect(manager.liveCount(app: pizza) == 5)
    }

    @Test func theGlobalMaximumCountsEveryAppAndEndedActivitiesFreeASlot() throws {
        var manager = makeManager(limits: limits { $0.maximumActivities = 3 })
        try manager.start(pizza, at: t0)
        try manager.start(weather, at: t0)
        try manager.start("org.example.Build", at: t0)
        #expect(throws: IslandError.globalMaximumExceeded(limit: 3)) { try manager.start("org.example.Flight", at: t0 + 1) }

        _ = try manager.dismiss(id: "2", now: t0 + 2)
        #expect(try manager.start("org.example.Flight", at: t0 + 3).id == "4")
    }

    @Test func thePerAppLimitIsCheckedBeforeTheGlobalOne() throws {
        var manager = makeManager(
            limits: limits {
                $0.maximumActivities = 2
                $0.maximumActivitiesPerApp = 2
            })
        try manager.start(at: t0)
        try manager.start(at: t0)
        #expect(throws: IslandError.targetMaximumExceeded(app: pizza, limit: 2)) { try manager.start(at: t0) }
    }

    @Test func theStartBudgetIsASlidingWindow() throws {
        var manager = makeManager(limits: limits { $0.maximumActivitiesPerApp = 100 })
        for second in 0..<10 { try manager.start(at: t0 + Double(second)) }
        #expect(manager.authorization(app: pizza, entitlement: entitled, now: t0 + 30).remainingStarts == 0)

        // The 11th is refused until the first start leaves the window, 60 s after it.
        #expect(throws: IslandError.startBudgetExceeded(app: pizza, limit: 10, window: 60, retryAfter: 30)) {
            try manager.start(at: t0 + 30)
        }
        // Other apps have their own budget.
        #expect(try manager.start(weather, at: t0 + 30).app == weather)

        #expect(try manager.start(at: t0 + 60).id == "12")
        // The window slides: the start at t0 + 1 still counts until t0 + 61.
        #expect(throws: IslandError.startBudgetExceeded(app: pizza, limit: 10, window: 60, retryAfter: 0.5)) {
            try manager.start(at: t0 + 60.5)
        }
        #expect(manager.authorization(app: pizza, entitlement: entitled, now: t0 + 65).remainingStarts == 5)
    }

    @Test func perAppOverridesReplaceTheGlobalLimitsForThatAppOnly() throws {
        var big = ActivityLimits()
        big.maximumActivitiesPerApp = 2
        big.maximumPayloadBytes = 100
        big.maximumActivities = 1  // ignored: only the global value counts
        var manager = makeManager(limits: LimitsPolicy(global: ActivityLimits(), perApp: [weather: big]))

        try manager.start(weather, at: t0)
        try manager.start(weather, at: t0)
        #expect(throws: IslandError.targetMaximumExceeded(app: weather, limit: 2)) { try manager.start(weather, at: t0) }
        #expect(throws: IslandError.attributesTooLarge(limit: 100, size: 200, part: .attributes)) {
            try manager.request(
                app: weather, type: "T", attributes: ActivityRequestTests.attributes(totalSize: 200), content: content(0),
                entitlement: entitled, now: t0
            )
        }
        for _ in 0..<5 { try manager.start(pizza, at: t0) }
        #expect(manager.authorization(app: weather, entitlement: entitled, now: t0).limits.maximumActivitiesPerApp == 2)
        #expect(manager.authorization(app: weather, entitlement: entitled, now: t0).limits.maximumActivities == 32)
        #expect(manager.authorization(app: pizza, entitlement: entitled, now: t0).limits == ActivityLimits())
    }
}
