import IslandBridge
import Testing

@Suite("Sender identities: each sender looked up once per bus connection, bounded")
struct SenderIdentitiesTests {
    @Test("callers waiting for one sender share one lookup; later callers get the answer at once")
    func oneLookup() {
        let harness = SourceHarness()
        let flatpak = SenderIdentity(confinement: .flatpak(appID: "org.example.Files"))
        harness.bus.identities[":1.9"] = flatpak
        var answers: [SenderIdentity] = []
        harness.senders.identify(":1.9") { answers.append($0) }
        harness.senders.identify(":1.9") { answers.append($0) }
        #expect(harness.senders.isPending(":1.9") && answers.isEmpty)
        harness.bus.run()
        #expect(answers == [flatpak, flatpak])
        #expect(harness.senders.known(":1.9") == flatpak && !harness.senders.isPending(":1.9"))
        harness.senders.identify(":1.9") { answers.append($0) }
        #expect(answers.count == 3, "known: answered at once")
        #expect(harness.bus.identified == [":1.9"])
    }

    @Test("a sender the bus cannot vouch for is unknown, and verifies no claim")
    func unknown() {
        let harness = SourceHarness()
        var answer: SenderIdentity?
        harness.senders.identify(":1.66") { answer = $0 }
        harness.bus.run()
        #expect(answer == .unknown)
        #expect(answer?.verifies("org.example.Files", executable: "/usr/bin/files") == false)
    }

    @Test("the oldest answers are forgotten past the bound, and looked up again")
    func bounded() {
        let harness = SourceHarness()
        for number in 0...SenderIdentities.maximumKnown {
            harness.senders.identify(":1.\(number)") { _ in }
        }
        harness.bus.run()
        #expect(harness.senders.known(":1.0") == nil)
        #expect(harness.senders.known(":1.1") != nil)
        harness.senders.identify(":1.0") { _ in }
        #expect(harness.bus.identified.filter { $0 == ":1.0" }.count == 2)
    }
}
