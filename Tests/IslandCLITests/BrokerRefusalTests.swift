import Testing
@testable import island

/// A broker that refuses MQTT 5 (NATS's listener) will refuse it at every retry: `island push`
/// and `island channel` stop at once and say to ask for 3.1.1, where they waited 10 s and said
/// only "Unsupported Protocol Version".
@Suite struct BrokerRefusalTests {
    @Test(arguments: [
        "the broker refused the connection: Unsupported Protocol Version",
        "the broker refused the connection: Connection Refused: unacceptable protocol version.",
    ])
    func aRefusedProtocolVersionIsRecognized(_ reason: String) {
        #expect(PushCommand.refusesTheProtocolVersion(reason))
    }

    @Test(arguments: ["The connection was lost.", "no answer", "the broker refused the connection: Not authorized"])
    func otherReasonsAreNot(_ reason: String) {
        #expect(!PushCommand.refusesTheProtocolVersion(reason))
    }
}
