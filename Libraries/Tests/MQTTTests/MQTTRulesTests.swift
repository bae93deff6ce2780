import MQTT
import Testing

@Suite struct BrokerAddressTests {
    @Test func schemesGiveTheirDefaultPorts() throws {
        #expect(try MQTTBrokerAddress(url: "mqtt://broker.example") == MQTTBrokerAddress(host: "broker.example", port: 1883, secure: false))
        #expect(try MQTTBrokerAddress(url: "mqtts://broker.example") == MQTTBrokerAddress(host: "broker.example", port: 8883, secure: true))
        #expect(try MQTTBrokerAddress(url: "mqtts://127.0.0.1:18883/") == MQTTBrokerAddress(host: "127.0.0.1", port: 18883, secure: true))
    }

    @Test func ipv6AddressesAreBracketed() throws {
        let address = try MQTTBrokerAddress(url: "mqtts://[::1]:9000")
        #expect(address == MQTTBrokerAddress(host: "::1", port: 9000, secure: true))
        #expect(address.description == "mqtts://[::1]:9000")
        #expect(try MQTTBrokerAddress(url: "mqtt://[fe80::1]").port == 1883)
    }

    @Test(arguments: [
        "broker.example", "http://broker.example", "mqtt://", "mqtt://user:secret@broker.example",
        "mqtt://broker.example/topic", "mqtt://broker.example:0", "mqtt://broker.example:65536",
        "mqtt://broker.example:port", "mqtt://[::1", "mqtt://[::1]x", "mqtt://broker.example?x=1",
    ])
    func everythingElseIsRefused(url: String) {
        #expect(throws: MQTTError.self) { try MQTTBrokerAddress(url: url) }
    }
}

@Suite struct ReconnectBackoffTests {
    @Test func doublesFromTheFirstStepToTheMaximum() {
        let backoff = ReconnectBackoff(first: 1, maximum: 60)
        #expect((0...8).map { backoff.delay(attempt: $0, random: 1) } == [1, 2, 4, 8, 16, 32, 60, 60, 60])
        #expect(backoff.delay(attempt: 10_000, random: 1) == 60)
    }

    @Test func jitterDrawsBetweenHalfAndAllOfTheStep() {
        let backoff = ReconnectBackoff(first: 2, maximum: 60)
        #expect(backoff.delay(attempt: 2, random: 0) == 4)
        #expect(backoff.delay(attempt: 2, random: 0.5) == 6)
        #expect(backoff.delay(attempt: 2, random: 1) == 8)
        // Out of range draws are clamped rather than trusted.
        #expect(backoff.delay(attempt: 0, random: -3) == 1)
        #expect(backoff.delay(attempt: 0, random: 7) == 2)
    }
}

@Suite struct SubscriptionSetTests {
    /// The backoff once went back to its first step at every CONNACK, so a broker that accepted
    /// and then dropped every connection was retried about once a second for ever.
    @Test func theBackoffGrowsUntilAConnectionHasLasted() {
        var schedule = ReconnectSchedule(backoff: ReconnectBackoff(first: 1, maximum: 60, stableAfter: 30))
        var now = 0.0
        var waits: [Double] = []
        for _ in 0..<8 {
            schedule.connected(at: now)
            now += 0.2  // accepted, then dropped at once
            let wait = schedule.ended(at: now, random: 1)
            waits.append(wait)
            now += wait
        }
        #expect(waits == [1, 2, 4, 8, 16, 32, 60, 60])
        // Failed attempts (no CONNACK at all) grow it as before.
        _ = schedule.ended(at: now, random: 1)
        #expect(schedule.failures == 9)
        // A connection that stayed up 30 s starts again from the first step.
        schedule.connected(at: now)
        now += 30
        #expect(schedule.ended(at: now, random: 1) == 1)
        #expect(schedule.ended(at: now + 1, random: 1) == 2)
        // One up 29 s does not.
        schedule.connected(at: now)
        #expect(schedule.ended(at: now + 29, random: 1) == 4)
    }

    @Test func topicsAddedWhileDisconnectedWaitForTheConnection() {
        var set = SubscriptionSet()
        #expect(set.add("a") == false)
        #expect(set.add("b") == false)
        let (subscribe, unsubscribe) = set.connect(sessionPresent: false)
        #expect(subscribe == ["a", "b"])
        #expect(unsubscribe == [])
        #expect(set.add("c") == true)
        #expect(set.add("c") == false, "a topic already wanted is not subscribed twice")
    }

    @Test func everyWantedTopicIsSubscribedOnEveryConnection() {
        var set = SubscriptionSet()
        _ = set.connect(sessionPresent: false)
        _ = set.add("a")
        set.disconnect()
        // A broker that kept the session, or one that lost it: the same subscriptions.
        #expect(set.connect(sessionPresent: true).subscribe == ["a"])
        set.disconnect()
        #expect(set.connect(sessionPresent: false).subscribe == ["a"])
    }

    @Test func topicsDroppedWhileDisconnectedAreUnsubscribedFromAKeptSession() {
        var set = SubscriptionSet()
        _ = set.connect(sessionPresent: false)
        _ = set.add("a")
        _ = set.add("b")
        set.disconnect()
        #expect(set.remove("a") == false)
        let (subscribe, unsubscribe) = set.connect(sessionPresent: true)
        #expect(subscribe == ["b"])
        #expect(unsubscribe == ["a"])
        #expect(set.remove("b") == true)
        #expect(set.remove("never-wanted") == true, "a session from before a restart may hold any topic")
    }

    @Test func aNewSessionHasNothingToUnsubscribe() {
        var set = SubscriptionSet()
        #expect(set.remove("a") == false)
        #expect(set.connect(sessionPresent: false).unsubscribe == [])
        set.disconnect()
        #expect(set.connect(sessionPresent: true).unsubscribe == [], "the topic was forgotten with the session")
    }

    @Test func addingATopicBackCancelsItsUnsubscription() {
        var set = SubscriptionSet()
        _ = set.remove("a")
        _ = set.add("a")
        let (subscribe, unsubscribe) = set.connect(sessionPresent: true)
        #expect(subscribe == ["a"])
        #expect(unsubscribe == [])
    }
}
